// The synthetic picture drawn on the GPU (synthetic_render.h): one thread per sample, the same
// integer arithmetic as the CPU, so frames are bit-identical to the CPU source's.
#include "core/cuda/check.h"
#include "core/video/synthetic_render.h"

namespace histeq::video::synth_detail {
namespace {

template <class T>
__global__ void luma_kernel(SynthFrame f, PlaneView<T> y) {
  const int px = blockIdx.x * blockDim.x + threadIdx.x;
  const int py = blockIdx.y;
  if (px >= f.width) return;
  y.row(py)[px] = static_cast<T>(luma_at(f, px, py));
}

template <class T>
__global__ void chroma_kernel(SynthFrame f, PlaneView<T> u, PlaneView<T> v) {
  const int px = blockIdx.x * blockDim.x + threadIdx.x;
  const int py = blockIdx.y;
  if (px >= f.chroma_width) return;
  u.row(py)[px] = static_cast<T>(f.ucol[px] << f.shift);
  v.row(py)[px] = static_cast<T>(f.vrow[py] << f.shift);
}

template <class T>
Status launch(const SynthFrame& f, const PlaneRef& y, const PlaneRef& u, const PlaneRef& v, cudaStream_t stream) {
  auto w = [](const PlaneRef& r) { return r.as_writable<T>(); };
  constexpr int kThreads = 256;
  luma_kernel<T><<<dim3((f.width + kThreads - 1) / kThreads, f.height), kThreads, 0, stream>>>(f, w(y));
  HISTEQ_CUDA_TRY_LAUNCH();
  chroma_kernel<T><<<dim3((f.chroma_width + kThreads - 1) / kThreads, f.chroma_height), kThreads, 0, stream>>>(f, w(u), w(v));
  HISTEQ_CUDA_TRY_LAUNCH();
  return Status::ok();
}

}  // namespace

Status render_gpu(const SynthFrame& f, const PlaneRef& y, const PlaneRef& u, const PlaneRef& v, cudaStream_t stream) {
  if (y.memory != MemoryKind::device) return HISTEQ_ERROR(Code::invalid_argument, "render_gpu needs device planes");
  if (f.height > 65535 || f.chroma_height > 65535) return HISTEQ_ERROR(Code::unsupported, "synthetic frame too tall");
  if (y.bytes_per_sample == 1) return launch<uint8_t>(f, y, u, v, stream);
  return launch<uint16_t>(f, y, u, v, stream);
}

}  // namespace histeq::video::synth_detail
