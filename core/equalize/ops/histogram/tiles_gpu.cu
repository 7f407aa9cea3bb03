// The histogram operation's clahe helpers on the GPU: the frame's histogram summed from the tile
// histograms, and the textbook clahe's padded picture (one thread per sample of the padded plane).
#include "core/cuda/check.h"
#include "core/equalize/ops/checks.h"
#include "core/equalize/ops/lut/build_lut.h"
#include "core/equalize/ops/histogram/tiles.h"
#include "core/equalize/ops/tiles_reduce.cuh"
#include "core/equalize/tone.h"

namespace histeq::eq {
namespace {

constexpr int kPadThreads = 256;

// One thread per sample of the padded plane: out(x, y) = in(reflect(x), reflect(y)) (a copy inside
// the picture). Textbook clahe only, on pictures that are not whole tiles; its cost is a copy.
template <class T>
__global__ void __launch_bounds__(kPadThreads) pad_reflect_kernel(PlaneView<const T> in, PlaneView<T> out) {
  const uint64_t i = static_cast<uint64_t>(blockIdx.x) * kPadThreads + threadIdx.x;
  if (i >= static_cast<uint64_t>(out.width) * static_cast<uint64_t>(out.height)) return;
  const int y = static_cast<int>(i / static_cast<uint64_t>(out.width)), x = static_cast<int>(i % static_cast<uint64_t>(out.width));
  out.row(y)[x] = in.row(tone::reflect_101(y, in.height))[tone::reflect_101(x, in.width)];
}

template <class T>
Status pad_reflect_device(const PlaneRef& in, const PlaneRef& out, cudaStream_t stream) {
  const uint64_t blocks = (static_cast<uint64_t>(out.width) * static_cast<uint64_t>(out.height) + kPadThreads - 1) / kPadThreads;
  if (blocks > 0x7FFFFFFFull) return HISTEQ_ERROR(Code::unsupported, "plane too large for pad_reflect_gpu");
  pad_reflect_kernel<T><<<static_cast<unsigned>(blocks), kPadThreads, 0, stream>>>(in.as<T>(), out.as_writable<T>());
  HISTEQ_CUDA_TRY_LAUNCH();
  return Status::ok();
}

}  // namespace

Status sum_tiles_gpu(const uint32_t* d_tile_counts, int tiles, int bins, uint32_t* d_counts, cudaStream_t stream) {
  HISTEQ_TRY(check_bins(bins));
  if (d_tile_counts == nullptr || d_counts == nullptr || tiles < 1) return HISTEQ_ERROR(Code::invalid_argument, "null histograms");
  return tiles_reduce<uint32_t, uint32_t, false>(d_tile_counts, tiles, bins, d_counts, stream);
}

Status pad_reflect_gpu(const PlaneRef& in, const PlaneRef& out, cudaStream_t stream) {
  HISTEQ_TRY(check_pad(in, out, MemoryKind::device));
  return in.bytes_per_sample == 1 ? pad_reflect_device<uint8_t>(in, out, stream) : pad_reflect_device<uint16_t>(in, out, stream);
}

}  // namespace histeq::eq
