#include "core/cuda/check.h"
#include "core/image/synthetic.h"

namespace histeq::synth {
namespace {

template <class T>
__global__ void fill_kernel(PlaneView<T> p, Pattern pattern, uint32_t seed, uint32_t value) {
  const uint32_t row_samples = static_cast<uint32_t>(p.pitch / sizeof(T));
  const T marker = static_cast<T>((1u << p.bit_depth) - 1u);
  for (uint32_t y = blockIdx.y; y < static_cast<uint32_t>(p.height); y += gridDim.y) {
    T* r = p.row(static_cast<int>(y));
    for (uint32_t x = blockIdx.x * blockDim.x + threadIdx.x; x < row_samples; x += gridDim.x * blockDim.x)
      r[x] = x < static_cast<uint32_t>(p.width) ? static_cast<T>(sample(pattern, x, y, seed, p.bit_depth, value)) : marker;
  }
}

template <class T>
Status fill(PlaneView<T> p, Pattern pattern, uint32_t seed, uint32_t value, cudaStream_t stream) {
  if (p.memory != MemoryKind::device) return HISTEQ_ERROR(Code::invalid_argument, "fill_device needs a device plane");
  if (p.empty()) return Status::ok();
  const uint32_t row_samples = static_cast<uint32_t>(p.pitch / sizeof(T));
  const dim3 block(256);
  const dim3 grid(std::min<uint32_t>((row_samples + 255) / 256, 64), std::min(p.height, 32768));
  fill_kernel<T><<<grid, block, 0, stream>>>(p, pattern, seed, value);
  HISTEQ_CUDA_TRY_LAUNCH();
  return Status::ok();
}

}  // namespace

Status fill_device(PlaneView<uint8_t> p, Pattern pattern, uint32_t seed, uint32_t value, cudaStream_t stream) {
  return fill(p, pattern, seed, value, stream);
}
Status fill_device(PlaneView<uint16_t> p, Pattern pattern, uint32_t seed, uint32_t value, cudaStream_t stream) {
  return fill(p, pattern, seed, value, stream);
}

}  // namespace histeq::synth
