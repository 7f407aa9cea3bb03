#include "core/cuda/check.h"
#include "core/image/deinterleave.h"

namespace histeq {
namespace {

template <class T>
__global__ void split_kernel(PlaneView<const T> uv, PlaneView<T> u, PlaneView<T> v) {
  const int x = blockIdx.x * blockDim.x + threadIdx.x;
  const int y = blockIdx.y;
  if (x >= u.width) return;
  const T* in = uv.row(y);
  u.row(y)[x] = in[2 * x];
  v.row(y)[x] = in[2 * x + 1];
}

template <class T>
Status split(const PlaneRef& uv, const PlaneRef& u, const PlaneRef& v, cudaStream_t stream) {
  const PlaneView<const T> in = uv.as<T>();
  const PlaneView<T> pu = u.as_writable<T>(), pv = v.as_writable<T>();
  if (uv.memory != MemoryKind::device) {
    for (int y = 0; y < u.height; ++y) {
      const T* row = in.row(y);
      T* ru = pu.row(y);
      T* rv = pv.row(y);
      for (int x = 0; x < u.width; ++x) {
        ru[x] = row[2 * x];
        rv[x] = row[2 * x + 1];
      }
    }
    return Status::ok();
  }
  if (u.height > 65535) return HISTEQ_ERROR(Code::unsupported, "deinterleave_uv: plane too tall");
  constexpr int kThreads = 256;
  split_kernel<T><<<dim3((u.width + kThreads - 1) / kThreads, u.height), kThreads, 0, stream>>>(in, pu, pv);
  HISTEQ_CUDA_TRY_LAUNCH();
  return Status::ok();
}

}  // namespace

Status deinterleave_uv(const PlaneRef& uv, const PlaneRef& u, const PlaneRef& v, cudaStream_t stream) {
  if (uv.bytes_per_sample != u.bytes_per_sample || uv.bytes_per_sample != v.bytes_per_sample)
    return HISTEQ_ERROR(Code::invalid_argument, "deinterleave_uv: sample sizes differ");
  if (uv.width != 2 * u.width || u.width != v.width || uv.height != u.height || u.height != v.height)
    return HISTEQ_ERROR(Code::invalid_argument, "deinterleave_uv: the UV plane must be 2 x the size of U and V");
  if (uv.memory != u.memory || uv.memory != v.memory)
    return HISTEQ_ERROR(Code::invalid_argument, "deinterleave_uv: the planes must be in the same memory");
  if (u.width == 0 || u.height == 0) return Status::ok();
  if (uv.bytes_per_sample == 1) return split<uint8_t>(uv, u, v, stream);
  return split<uint16_t>(uv, u, v, stream);
}

}  // namespace histeq
