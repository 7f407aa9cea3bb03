// The histogram operation's clahe helpers on the CPU: the frame's histogram summed from the tile
// histograms, and the textbook clahe's padded picture (tone::reflect_101).
#include <algorithm>

#include "core/equalize/ops/checks.h"
#include "core/equalize/ops/lut/build_lut.h"
#include "core/equalize/ops/histogram/tiles.h"
#include "core/equalize/tone.h"

namespace histeq::eq {

Status sum_tiles(const uint32_t* tile_counts, int tiles, int bins, uint32_t* counts) {
  HISTEQ_TRY(check_bins(bins));
  if (tile_counts == nullptr || counts == nullptr || tiles < 1) return HISTEQ_ERROR(Code::invalid_argument, "null histograms");
  std::fill(counts, counts + bins, 0u);
  for (int t = 0; t < tiles; ++t)
    for (int v = 0; v < bins; ++v) counts[v] += tile_counts[static_cast<size_t>(t) * bins + v];
  return Status::ok();
}

Status check_pad(const PlaneRef& in, const PlaneRef& out, MemoryKind memory) {
  if (in.data == nullptr || out.data == nullptr) return HISTEQ_ERROR(Code::invalid_argument, "pad_reflect: null plane");
  if (in.memory != memory || out.memory != memory) return HISTEQ_ERROR(Code::invalid_argument, "pad_reflect: planes in the wrong memory");
  if (in.bytes_per_sample != out.bytes_per_sample || (in.bytes_per_sample != 1 && in.bytes_per_sample != 2))
    return HISTEQ_ERROR(Code::invalid_argument, "pad_reflect: samples of different or unknown sizes");
  if (in.width < 1 || in.height < 1 || out.width < in.width || out.height < in.height)
    return HISTEQ_ERROR(Code::invalid_argument, "pad_reflect: the padded plane is smaller than the picture");
  return Status::ok();
}

namespace {
template <class T>
void pad_rows(const PlaneView<const T>& in, const PlaneView<T>& out) {
  for (int y = 0; y < out.height; ++y) {
    const T* src = in.row(tone::reflect_101(y, in.height));
    T* dst = out.row(y);
    std::copy(src, src + in.width, dst);
    for (int x = in.width; x < out.width; ++x) dst[x] = src[tone::reflect_101(x, in.width)];
  }
}
}  // namespace

Status pad_reflect(const PlaneRef& in, const PlaneRef& out) {
  HISTEQ_TRY(check_pad(in, out, MemoryKind::host));
  if (in.bytes_per_sample == 1) pad_rows(in.as<uint8_t>(), out.as_writable<uint8_t>());
  else pad_rows(in.as<uint16_t>(), out.as_writable<uint16_t>());
  return Status::ok();
}

}  // namespace histeq::eq
