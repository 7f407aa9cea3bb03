#include "convert.h"

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cmath>
#include <mutex>
#include <string>
#include <type_traits>

#include "convert_gpu.h"
#include "core/image/fork_join.h"

namespace histeq::py {

namespace {

char* at(const Strided& s, int64_t r, int64_t c) { return s.data + r * s.row_stride + c * s.col_stride; }

template <class T>
T* work_row(const WorkPlane& p, int64_t r) {
  return reinterpret_cast<T*>(static_cast<char*>(p.data) + static_cast<size_t>(r) * p.pitch);
}

Status cuda_status(cudaError_t e, const char* what) {
  if (e == cudaSuccess) return Status();
  (void)cudaGetLastError();
  return Status(ErrorCode::device_error, std::string(what) + ": " + cudaGetErrorString(e));
}

// The device of a conversion made current for its launches, the caller's put back.
class OnDevice {
 public:
  explicit OnDevice(int device) {
    if (cudaGetDevice(&previous_) == cudaSuccess && previous_ != device && cudaSetDevice(device) == cudaSuccess) changed_ = true;
  }
  ~OnDevice() {
    if (changed_) (void)cudaSetDevice(previous_);
  }
  OnDevice(const OnDevice&) = delete;
  OnDevice& operator=(const OnDevice&) = delete;

 private:
  int previous_ = 0;
  bool changed_ = false;
};

template <class F>
Status on_device(const Where& w, const char* what, F&& launch) {
  OnDevice d(w.device);
  return cuda_status(launch(reinterpret_cast<cudaStream_t>(w.stream)), what);
}

// Rows [0, rows) over the CPU equalizer's pool (the conversions run before and after it, never beside).
template <class F>
void over_rows(int64_t rows, const F& f) {
  image::for_rows(image::shared_pool(), int(rows), [&](int begin, int end) {
    for (int r = begin; r < end; ++r) f(int64_t(r));
  });
}

// f(sample type as a template constant): the loops below are made once a sample type, so the
// per-sample conversions have no switch in them.
template <class F>
void with_sample(cvt::Sample s, const F& f) {
  switch (s) {
    case cvt::Sample::u8: return f(std::integral_constant<cvt::Sample, cvt::Sample::u8>());
    case cvt::Sample::u16: return f(std::integral_constant<cvt::Sample, cvt::Sample::u16>());
    case cvt::Sample::f16: return f(std::integral_constant<cvt::Sample, cvt::Sample::f16>());
    case cvt::Sample::f32: return f(std::integral_constant<cvt::Sample, cvt::Sample::f32>());
    case cvt::Sample::f64: return f(std::integral_constant<cvt::Sample, cvt::Sample::f64>());
  }
}

// The value range of rows [begin, end): in the samples' own type, so that the loops vectorize
// (numpy's max of a 1080p plane is a fraction of a millisecond; so is this).
template <cvt::Sample S>
ValueRange scan_rows(const Strided& s, int begin, int end) {
  using T = std::conditional_t<S == cvt::Sample::u16 || S == cvt::Sample::f16, uint16_t,
                               std::conditional_t<S == cvt::Sample::f32, float, std::conditional_t<S == cvt::Sample::f64, double, uint8_t>>>;
  ValueRange r{INFINITY, -INFINITY, false};
  for (int y = begin; y < end; ++y) {
    const char* row = at(s, y, 0);
    if constexpr (S == cvt::Sample::u16) {
      uint16_t hi = 0;
      if (s.col_stride == 2) {
        const auto* p = reinterpret_cast<const uint16_t*>(row);
        for (int64_t c = 0; c < s.cols; ++c) hi = p[c] > hi ? p[c] : hi;
      } else {
        for (int64_t c = 0; c < s.cols; ++c) {
          const uint16_t v = *reinterpret_cast<const uint16_t*>(row + c * s.col_stride);
          hi = v > hi ? v : hi;
        }
      }
      r.min = 0;
      r.max = std::max(r.max, double(hi));
    } else {
      float lo = INFINITY, hi = -INFINITY;
      bool nan = false;
      double lo64 = INFINITY, hi64 = -INFINITY;
      for (int64_t c = 0; c < s.cols; ++c) {
        const char* p = row + c * s.col_stride;
        if constexpr (S == cvt::Sample::f64) {
          const double v = *reinterpret_cast<const double*>(p);
          nan |= v != v;
          lo64 = v < lo64 ? v : lo64;
          hi64 = v > hi64 ? v : hi64;
        } else {
          const float v = S == cvt::Sample::f32 ? *reinterpret_cast<const T*>(p) : cvt::unit_value(p, S, 8);
          nan |= v != v;
          lo = v < lo ? v : lo;
          hi = v > hi ? v : hi;
        }
      }
      r.nan = r.nan || nan;
      r.min = std::min({r.min, double(lo), lo64});
      r.max = std::max({r.max, double(hi), hi64});
    }
  }
  return r;
}

}  // namespace

Status load_plane(const Strided& s, const WorkPlane& d, const Where& w) {
  if (w.memory == Memory::device) return on_device(w, "copying the frame on the GPU", [&](cudaStream_t st) { return gpu::load_plane(s, d, st); });
  with_sample(s.sample, [&](auto kind) {
    over_rows(s.rows, [&](int64_t r) {
      const char* in = at(s, r, 0);
      if (!d.wide) {
        uint8_t* o = work_row<uint8_t>(d, r);
        for (int64_t c = 0; c < s.cols; ++c) o[c] = static_cast<uint8_t>(in[c * s.col_stride]);
      } else {
        uint16_t* o = work_row<uint16_t>(d, r);
        for (int64_t c = 0; c < s.cols; ++c) o[c] = cvt::to_ten_bits(in + c * s.col_stride, kind.value, s.bits);
      }
    });
  });
  return Status();
}

Status store_plane(const WorkPlane& p, const Strided& d, const Where& w) {
  if (w.memory == Memory::device) return on_device(w, "copying the result on the GPU", [&](cudaStream_t st) { return gpu::store_plane(p, d, st); });
  with_sample(d.sample, [&](auto kind) {
    over_rows(d.rows, [&](int64_t r) {
      char* out = at(d, r, 0);
      if (!p.wide) {
        const uint8_t* i = work_row<uint8_t>(p, r);
        for (int64_t c = 0; c < d.cols; ++c) out[c * d.col_stride] = static_cast<char>(i[c]);
      } else {
        const uint16_t* i = work_row<uint16_t>(p, r);
        for (int64_t c = 0; c < d.cols; ++c) cvt::from_ten_bits(out + c * d.col_stride, kind.value, d.bits, i[c]);
      }
    });
  });
  return Status();
}

Status load_colour(const Strided rgb[3], const WorkPlane ycbcr[3], const Where& w) {
  if (w.memory == Memory::device) return on_device(w, "converting the colours on the GPU", [&](cudaStream_t st) { return gpu::load_colour(rgb, ycbcr, st); });
  const Strided& s = rgb[0];
  with_sample(s.sample, [&](auto kind) {
    over_rows(s.rows, [&](int64_t r) {
      const char *pr = at(rgb[0], r, 0), *pg = at(rgb[1], r, 0), *pb = at(rgb[2], r, 0);
      const int64_t step = s.col_stride;
      if constexpr (decltype(kind)::value == cvt::Sample::u8) {
        uint8_t *y = work_row<uint8_t>(ycbcr[0], r), *cb = work_row<uint8_t>(ycbcr[1], r), *cr = work_row<uint8_t>(ycbcr[2], r);
        for (int64_t c = 0; c < s.cols; ++c)
          cvt::rgb8_to_ycbcr(uint8_t(pr[c * step]), uint8_t(pg[c * step]), uint8_t(pb[c * step]), y[c], cb[c], cr[c]);
      } else {
        uint16_t *y = work_row<uint16_t>(ycbcr[0], r), *cb = work_row<uint16_t>(ycbcr[1], r), *cr = work_row<uint16_t>(ycbcr[2], r);
        for (int64_t c = 0; c < s.cols; ++c)
          cvt::rgb_to_ycbcr10(cvt::unit_value(pr + c * step, kind.value, s.bits), cvt::unit_value(pg + c * step, kind.value, s.bits),
                              cvt::unit_value(pb + c * step, kind.value, s.bits), y[c], cb[c], cr[c]);
      }
    });
  });
  return Status();
}

Status store_colour(const WorkPlane ycbcr[3], const Strided rgb[3], const Strided& alpha_in, const Strided& alpha_out,
                    const Where& w) {
  if (w.memory == Memory::device)
    return on_device(w, "converting the colours on the GPU", [&](cudaStream_t st) { return gpu::store_colour(ycbcr, rgb, alpha_in, alpha_out, st); });
  const Strided& d = rgb[0];
  const bool alpha = alpha_in.data != nullptr && alpha_in.data != alpha_out.data;
  with_sample(d.sample, [&](auto kind) {
    constexpr cvt::Sample S = decltype(kind)::value;
    constexpr int size = S == cvt::Sample::u8 ? 1 : S == cvt::Sample::u16 || S == cvt::Sample::f16 ? 2 : S == cvt::Sample::f32 ? 4 : 8;
    over_rows(d.rows, [&](int64_t r) {
      char *pr = at(rgb[0], r, 0), *pg = at(rgb[1], r, 0), *pb = at(rgb[2], r, 0);
      const int64_t step = d.col_stride;
      if constexpr (S == cvt::Sample::u8) {
        const uint8_t *y = work_row<uint8_t>(ycbcr[0], r), *cb = work_row<uint8_t>(ycbcr[1], r), *cr = work_row<uint8_t>(ycbcr[2], r);
        for (int64_t c = 0; c < d.cols; ++c)
          cvt::ycbcr8_to_rgb(y[c], cb[c], cr[c], *reinterpret_cast<uint8_t*>(pr + c * step), *reinterpret_cast<uint8_t*>(pg + c * step),
                             *reinterpret_cast<uint8_t*>(pb + c * step));
      } else {
        const uint16_t *y = work_row<uint16_t>(ycbcr[0], r), *cb = work_row<uint16_t>(ycbcr[1], r), *cr = work_row<uint16_t>(ycbcr[2], r);
        for (int64_t c = 0; c < d.cols; ++c) {
          float v[3];
          cvt::ycbcr10_to_rgb(y[c], cb[c], cr[c], v[0], v[1], v[2]);
          cvt::put_unit_value(pr + c * step, S, d.bits, v[0]);
          cvt::put_unit_value(pg + c * step, S, d.bits, v[1]);
          cvt::put_unit_value(pb + c * step, S, d.bits, v[2]);
        }
      }
      if (alpha)
        for (int64_t c = 0; c < d.cols; ++c) std::copy_n(at(alpha_in, r, c), size, at(alpha_out, r, c));
    });
  });
  return Status();
}

Status value_range(const std::vector<Strided>& planes, const Where& w, ValueRange& out) {
  if (w.memory == Memory::device) {
    DeviceScratch d;
    if (Status st = d.allocate(4 * sizeof(float), w.device, w.stream); !st.ok()) return st;
    float host[3] = {0, 0, 0};
    Status st = on_device(w, "checking the frame's values on the GPU", [&](cudaStream_t stream) {
      cudaError_t e = gpu::value_range(planes.data(), planes.size(), static_cast<float*>(d.data()), host, stream);
      return e != cudaSuccess ? e : cudaStreamSynchronize(stream);
    });
    out = {host[0], host[1], host[2] != 0};
    return st;
  }
  ValueRange all{INFINITY, -INFINITY, false};
  std::mutex mu;
  for (const Strided& s : planes) {
    with_sample(s.sample, [&](auto kind) {
      image::for_rows(image::shared_pool(), int(s.rows), [&](int begin, int end) {
        const ValueRange part = scan_rows<decltype(kind)::value>(s, begin, end);
        const std::lock_guard<std::mutex> lock(mu);
        all.min = std::min(all.min, part.min);
        all.max = std::max(all.max, part.max);
        all.nan = all.nan || part.nan;
      });
    });
  }
  out = all;
  return Status();
}

DeviceScratch::~DeviceScratch() {
  if (data_ == nullptr) return;
  OnDevice d(device_);
  (void)cudaFreeAsync(data_, reinterpret_cast<cudaStream_t>(stream_));  // after the work queued on the stream
  (void)cudaGetLastError();
}

Status DeviceScratch::allocate(size_t bytes, int device, Stream stream) {
  OnDevice d(device);
  device_ = device;
  stream_ = stream;
  return cuda_status(cudaMallocAsync(&data_, bytes == 0 ? 1 : bytes, reinterpret_cast<cudaStream_t>(stream)),
                     ("allocating " + std::to_string(bytes) + " bytes of GPU scratch").c_str());
}

}  // namespace histeq::py
