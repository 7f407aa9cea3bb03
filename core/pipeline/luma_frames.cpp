#include "core/pipeline/source_factory.h"

#include "core/video/frame.h"

namespace histeq::pipeline {
namespace {

// The luma of `f` as an 8-bit host plane: deeper samples keep their top 8 bits (P010's values sit
// in the high bits already), so a 10-bit clip measures the same picture as its 8-bit encode.
Result<Plane8> luma8(const video::Frame& f) {
  const video::FrameFormat& fmt = f.format();
  auto out = Plane8::allocate(MemoryKind::host, fmt.width, fmt.height);
  if (!out) return out.status();
  const PlaneRef y = f.plane(0);
  if (y.bytes_per_sample == 1) {
    HISTEQ_TRY(copy_plane(y, out->view()));
    return out;
  }
  auto wide = Plane16::allocate(MemoryKind::host, fmt.width, fmt.height, 0, y.bit_depth);
  if (!wide) return wide.status();
  HISTEQ_TRY(copy_plane(y, wide->view()));
  const int shift = fmt.storage_depth() - 8;
  for (int r = 0; r < fmt.height; ++r) {
    const uint16_t* in = wide->view().row(r);
    uint8_t* o = out->view().row(r);
    for (int x = 0; x < fmt.width; ++x) o[x] = static_cast<uint8_t>(in[x] >> shift);
  }
  return out;
}

}  // namespace

Result<std::vector<Plane8>> read_luma_frames(const SourceRequest& request, int count) {
  auto opened = open_source(request);
  if (!opened) return opened.status();
  video::Source& src = *opened->source;
  auto pool = video::FramePool::create(src.info().format, MemoryKind::host);
  if (!pool) return pool.status();
  // A source whose length is known is sampled first..last; a live or endless one gives its first frames.
  const int64_t total = src.info().live ? 0 : src.info().frames_hint;
  std::vector<Plane8> frames;
  int64_t index = 0;
  for (int k = 0; k < count; ++k) {
    const int64_t want = (total > 1 && count > 1) ? (total - 1) * k / (count - 1) : k;
    video::FramePtr cur;
    while (index <= want) {
      auto f = src.next(**pool);
      if (!f) return f.status();
      if (!f.value()) break;
      ++index;
      cur = std::move(f.value());
    }
    if (!cur) break;
    auto y = luma8(*cur);
    if (!y) return y.status();
    frames.push_back(std::move(y.value()));
  }
  if (frames.empty()) return HISTEQ_ERROR(Code::io_error, src.info().name + ": no decodable video frame");
  return frames;
}

}  // namespace histeq::pipeline
