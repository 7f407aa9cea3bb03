// The kernels of convert.h: one thread a sample (a pixel for colour), grid-stride over the plane.
#include "convert_gpu.h"

#include <cfloat>

namespace histeq::py::gpu {

namespace {

constexpr int kThreads = 256;

__device__ __forceinline__ char* at(const Strided& s, int64_t r, int64_t c) { return s.data + r * s.row_stride + c * s.col_stride; }

template <class T>
__device__ __forceinline__ T* work(const WorkPlane& p, int64_t r, int64_t c) {
  return reinterpret_cast<T*>(static_cast<char*>(p.data) + static_cast<size_t>(r) * p.pitch) + c;
}

dim3 blocks_for(int64_t n) {
  const int64_t b = (n + kThreads - 1) / kThreads;
  return dim3(static_cast<unsigned>(b < 65535 * 8 ? (b < 1 ? 1 : b) : 65535 * 8));
}

#define HISTEQ_FOR_EACH_SAMPLE(s)                                                                         \
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x, n = (s).rows * (s).cols; i < n;       \
       i += int64_t(gridDim.x) * blockDim.x)

__global__ void load_plane_kernel(Strided s, WorkPlane d) {
  HISTEQ_FOR_EACH_SAMPLE(s) {
    const int64_t r = i / s.cols, c = i % s.cols;
    if (!d.wide) *work<uint8_t>(d, r, c) = *reinterpret_cast<const uint8_t*>(at(s, r, c));
    else *work<uint16_t>(d, r, c) = cvt::to_ten_bits(at(s, r, c), s.sample, s.bits);
  }
}

__global__ void store_plane_kernel(WorkPlane p, Strided d) {
  HISTEQ_FOR_EACH_SAMPLE(d) {
    const int64_t r = i / d.cols, c = i % d.cols;
    if (!p.wide) *reinterpret_cast<uint8_t*>(at(d, r, c)) = *work<uint8_t>(p, r, c);
    else cvt::from_ten_bits(at(d, r, c), d.sample, d.bits, *work<uint16_t>(p, r, c));
  }
}

struct Three {
  Strided s[3];
  WorkPlane p[3];
};

__global__ void load_colour_kernel(Three t) {
  const Strided& s = t.s[0];
  HISTEQ_FOR_EACH_SAMPLE(s) {
    const int64_t r = i / s.cols, c = i % s.cols;
    if (s.sample == cvt::Sample::u8) {
      cvt::rgb8_to_ycbcr(*reinterpret_cast<const uint8_t*>(at(t.s[0], r, c)), *reinterpret_cast<const uint8_t*>(at(t.s[1], r, c)),
                         *reinterpret_cast<const uint8_t*>(at(t.s[2], r, c)), *work<uint8_t>(t.p[0], r, c),
                         *work<uint8_t>(t.p[1], r, c), *work<uint8_t>(t.p[2], r, c));
    } else {
      cvt::rgb_to_ycbcr10(cvt::unit_value(at(t.s[0], r, c), s.sample, s.bits), cvt::unit_value(at(t.s[1], r, c), s.sample, s.bits),
                          cvt::unit_value(at(t.s[2], r, c), s.sample, s.bits), *work<uint16_t>(t.p[0], r, c),
                          *work<uint16_t>(t.p[1], r, c), *work<uint16_t>(t.p[2], r, c));
    }
  }
}

__global__ void store_colour_kernel(Three t, Strided ai, Strided ao, int size) {
  const Strided& d = t.s[0];
  HISTEQ_FOR_EACH_SAMPLE(d) {
    const int64_t r = i / d.cols, c = i % d.cols;
    if (d.sample == cvt::Sample::u8) {
      cvt::ycbcr8_to_rgb(*work<uint8_t>(t.p[0], r, c), *work<uint8_t>(t.p[1], r, c), *work<uint8_t>(t.p[2], r, c),
                         *reinterpret_cast<uint8_t*>(at(t.s[0], r, c)), *reinterpret_cast<uint8_t*>(at(t.s[1], r, c)),
                         *reinterpret_cast<uint8_t*>(at(t.s[2], r, c)));
    } else {
      float v[3];
      cvt::ycbcr10_to_rgb(*work<uint16_t>(t.p[0], r, c), *work<uint16_t>(t.p[1], r, c), *work<uint16_t>(t.p[2], r, c), v[0], v[1], v[2]);
      for (int k = 0; k < 3; ++k) cvt::put_unit_value(at(t.s[k], r, c), d.sample, d.bits, v[k]);
    }
    if (ai.data != nullptr && ai.data != ao.data)
      for (int b = 0; b < size; ++b) at(ao, r, c)[b] = at(ai, r, c)[b];
  }
}

__device__ __forceinline__ void atomic_min_float(float* a, float v) {
  // Non-negative floats order as their bits; negative ones in reverse: the usual two-way trick.
  if (v >= 0) atomicMin(reinterpret_cast<int*>(a), __float_as_int(v));
  else atomicMax(reinterpret_cast<unsigned*>(a), __float_as_uint(v));
}
__device__ __forceinline__ void atomic_max_float(float* a, float v) {
  if (v >= 0) atomicMax(reinterpret_cast<int*>(a), __float_as_int(v));
  else atomicMin(reinterpret_cast<unsigned*>(a), __float_as_uint(v));
}

__global__ void init_range_kernel(float* out) {
  out[0] = FLT_MAX;
  out[1] = -FLT_MAX;
  out[2] = 0;
}

__global__ void range_kernel(Strided s, float* out) {
  float lo = FLT_MAX, hi = -FLT_MAX;
  bool nan = false;
  HISTEQ_FOR_EACH_SAMPLE(s) {
    const void* p = at(s, i / s.cols, i % s.cols);
    const float v = s.sample == cvt::Sample::u16 ? static_cast<float>(*static_cast<const uint16_t*>(p))
                    : s.sample == cvt::Sample::f64 ? static_cast<float>(*static_cast<const double*>(p))
                                                   : cvt::unit_value(p, s.sample, 8);
    if (v != v) nan = true;
    else lo = fminf(lo, v), hi = fmaxf(hi, v);
  }
  if (nan) out[2] = 1;
  if (lo <= hi) {
    atomic_min_float(&out[0], lo);
    atomic_max_float(&out[1], hi);
  }
}

int sample_size(cvt::Sample s) {
  return s == cvt::Sample::u8 ? 1 : s == cvt::Sample::u16 || s == cvt::Sample::f16 ? 2 : s == cvt::Sample::f32 ? 4 : 8;
}

}  // namespace

cudaError_t load_plane(const Strided& src, const WorkPlane& dst, cudaStream_t stream) {
  load_plane_kernel<<<blocks_for(src.rows * src.cols), kThreads, 0, stream>>>(src, dst);
  return cudaGetLastError();
}

cudaError_t store_plane(const WorkPlane& src, const Strided& dst, cudaStream_t stream) {
  store_plane_kernel<<<blocks_for(dst.rows * dst.cols), kThreads, 0, stream>>>(src, dst);
  return cudaGetLastError();
}

cudaError_t load_colour(const Strided* rgb, const WorkPlane* ycbcr, cudaStream_t stream) {
  const Three t{{rgb[0], rgb[1], rgb[2]}, {ycbcr[0], ycbcr[1], ycbcr[2]}};
  load_colour_kernel<<<blocks_for(rgb[0].rows * rgb[0].cols), kThreads, 0, stream>>>(t);
  return cudaGetLastError();
}

cudaError_t store_colour(const WorkPlane* ycbcr, const Strided* rgb, const Strided& alpha_in, const Strided& alpha_out,
                         cudaStream_t stream) {
  const Three t{{rgb[0], rgb[1], rgb[2]}, {ycbcr[0], ycbcr[1], ycbcr[2]}};
  store_colour_kernel<<<blocks_for(rgb[0].rows * rgb[0].cols), kThreads, 0, stream>>>(t, alpha_in, alpha_out, sample_size(rgb[0].sample));
  return cudaGetLastError();
}

cudaError_t value_range(const Strided* planes, size_t count, float* out, float* host, cudaStream_t stream) {
  init_range_kernel<<<1, 1, 0, stream>>>(out);
  for (size_t i = 0; i < count; ++i) range_kernel<<<blocks_for(planes[i].rows * planes[i].cols), kThreads, 0, stream>>>(planes[i], out);
  if (cudaError_t e = cudaGetLastError(); e != cudaSuccess) return e;
  return cudaMemcpyAsync(host, out, 3 * sizeof(float), cudaMemcpyDeviceToHost, stream);
}

}  // namespace histeq::py::gpu
