// Image planes: one channel of 8- or 16-bit samples (or of float weights), row-major, with a pitch
// in bytes.
//
//  - PlaneView<T>: non-owning (pointer, width, height, pitch, bit depth, memory kind). Cheap to copy.
//                  T is uint8_t or uint16_t for samples, float for per-sample weights (weighted
//                  histograms, core/histogram/histogram.h); bit_depth means nothing for float.
//  - Plane<T>:     owns its storage (host pageable, pinned host, or device); RAII, movable only.
//  - PlaneRef:     a type-erased const view (8- or 16-bit), the input type of the histogram API.
//
// Units: width and height in samples, pitch in BYTES (as cudaMallocPitch and FFmpeg's linesize).
// bit_depth is the number of significant bits (8 for 8-bit, e.g. 10 for 10-bit video stored in
// 16-bit samples); samples at or above 2^bit_depth are out of range.
// Thread-safety: none beyond that of the memory itself.
#pragma once

#include <cstddef>
#include <cstdint>
#include <type_traits>
#include <utility>

#include "core/cuda/hd.h"
#include "core/cuda/resources.h"
#include "core/cuda/status.h"

namespace histeq {

using cuda::MemoryKind;

template <class T>
struct PlaneView {
  static_assert(std::is_same_v<std::remove_const_t<T>, uint8_t> || std::is_same_v<std::remove_const_t<T>, uint16_t> ||
                    std::is_same_v<std::remove_const_t<T>, float>,
                "planes hold 8- or 16-bit samples, or float weights");
  T* data = nullptr;
  int width = 0;
  int height = 0;
  size_t pitch = 0;  // bytes between the starts of consecutive rows
  int bit_depth = 8 * sizeof(T);
  MemoryKind memory = MemoryKind::host;

  HISTEQ_HD T* row(int y) const noexcept {
    using Byte = std::conditional_t<std::is_const_v<T>, const unsigned char, unsigned char>;
    return reinterpret_cast<T*>(reinterpret_cast<Byte*>(data) + static_cast<size_t>(y) * pitch);
  }
  HISTEQ_HD size_t row_bytes() const noexcept { return static_cast<size_t>(width) * sizeof(T); }
  HISTEQ_HD size_t samples() const noexcept { return static_cast<size_t>(width) * static_cast<size_t>(height); }
  bool empty() const noexcept { return width == 0 || height == 0; }
  bool contiguous() const noexcept { return pitch == row_bytes() || height <= 1; }

  template <class U = T, std::enable_if_t<!std::is_const_v<U>, int> = 0>
  operator PlaneView<const U>() const noexcept {  // NOLINT(google-explicit-constructor)
    return {data, width, height, pitch, bit_depth, memory};
  }
};

template <class T>
class Plane {
 public:
  Plane() = default;
  Plane(Plane&& o) noexcept : buf_(std::move(o.buf_)), view_(std::exchange(o.view_, PlaneView<T>{})) {}
  Plane& operator=(Plane&& o) noexcept {
    if (this != &o) {
      buf_ = std::move(o.buf_);
      view_ = std::exchange(o.view_, PlaneView<T>{});
    }
    return *this;
  }
  Plane(const Plane&) = delete;
  Plane& operator=(const Plane&) = delete;

  // pitch_bytes == 0 means tight (width * sizeof(T)); otherwise it must be >= that.
  static Result<Plane> allocate(MemoryKind kind, int width, int height, size_t pitch_bytes = 0,
                                int bit_depth = 8 * sizeof(T)) {
    if (width < 0 || height < 0) return HISTEQ_ERROR(Code::invalid_argument, "negative plane size");
    if (bit_depth < 1 || bit_depth > static_cast<int>(8 * sizeof(T)))
      return HISTEQ_ERROR(Code::invalid_argument, "bit depth does not fit the sample type");
    const size_t tight = static_cast<size_t>(width) * sizeof(T);
    if (pitch_bytes == 0) pitch_bytes = tight;
    if (pitch_bytes < tight) return HISTEQ_ERROR(Code::invalid_argument, "pitch smaller than a row");
    if (pitch_bytes % sizeof(T) != 0) return HISTEQ_ERROR(Code::invalid_argument, "pitch is not a whole number of samples");
    auto buf = cuda::Buffer::allocate(kind, pitch_bytes * static_cast<size_t>(height));
    if (!buf) return buf.status();
    Plane p;
    p.buf_ = std::move(buf.value());
    p.view_ = {static_cast<T*>(p.buf_.data()), width, height, pitch_bytes, bit_depth, kind};
    return Result<Plane>(std::move(p));  // explicit: nvcc's front end does not move implicitly here
  }

  const PlaneView<T>& view() const noexcept { return view_; }
  PlaneView<const T> cview() const noexcept { return view_; }
  T* data() const noexcept { return view_.data; }
  int width() const noexcept { return view_.width; }
  int height() const noexcept { return view_.height; }
  size_t pitch() const noexcept { return view_.pitch; }
  int bit_depth() const noexcept { return view_.bit_depth; }
  MemoryKind memory() const noexcept { return view_.memory; }
  size_t bytes() const noexcept { return buf_.bytes(); }

 private:
  cuda::Buffer buf_;
  PlaneView<T> view_{};
};

using Plane8 = Plane<uint8_t>;
using Plane16 = Plane<uint16_t>;
using PlaneView8 = PlaneView<uint8_t>;
using PlaneView16 = PlaneView<uint16_t>;
using PlaneF = Plane<float>;
using WeightsView = PlaneView<const float>;  // per-sample weights of a weighted histogram

// Type-erased read-only plane of 8- or 16-bit samples: the histogram API's input (float planes are
// weights, not samples, and do not convert).
struct PlaneRef {
  const void* data = nullptr;
  int width = 0;
  int height = 0;
  size_t pitch = 0;           // bytes
  int bytes_per_sample = 1;   // 1 or 2
  int bit_depth = 8;
  MemoryKind memory = MemoryKind::host;

  PlaneRef() = default;
  template <class T, std::enable_if_t<std::is_integral_v<T>, int> = 0>
  PlaneRef(PlaneView<T> v)  // NOLINT(google-explicit-constructor)
      : data(v.data), width(v.width), height(v.height), pitch(v.pitch),
        bytes_per_sample(static_cast<int>(sizeof(T))), bit_depth(v.bit_depth), memory(v.memory) {}
  template <class T, std::enable_if_t<std::is_integral_v<T>, int> = 0>
  PlaneRef(const Plane<T>& p) : PlaneRef(p.cview()) {}  // NOLINT(google-explicit-constructor)

  size_t samples() const noexcept { return static_cast<size_t>(width) * static_cast<size_t>(height); }
  size_t row_bytes() const noexcept { return static_cast<size_t>(width) * bytes_per_sample; }
  bool on_device() const noexcept { return memory == MemoryKind::device; }

  template <class T>
  PlaneView<const T> as() const noexcept {
    return {static_cast<const T*>(data), width, height, pitch, bit_depth, memory};
  }
  // The same samples writable, for a caller that owns what the reference points to (an equalizer's
  // planes, changed in place): the const is the histogram API's promise, not the memory's.
  template <class T>
  PlaneView<T> as_writable() const noexcept {
    return {static_cast<T*>(const_cast<void*>(data)), width, height, pitch, bit_depth, memory};
  }
};

// Copies the samples of src into dst (same width and height; pitches may differ). Any memory kinds;
// host-to-host needs no CUDA device. Asynchronous on `stream` when either side is on the device
// (pinned host memory makes it truly asynchronous).
Status copy_plane(PlaneRef src, PlaneView<uint8_t> dst, cudaStream_t stream = nullptr);
Status copy_plane(PlaneRef src, PlaneView<uint16_t> dst, cudaStream_t stream = nullptr);

}  // namespace histeq
