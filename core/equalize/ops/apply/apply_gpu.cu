// The apply operation on the GPU: the LUT on a luma plane (one thread per 16-byte unit, the LUT in
// shared memory), clahe's tile LUTs blended per pixel (the LUTs read through L1: staging the
// block's LUTs in shared memory measured slower; docs/performance.md, "method2_tuned's tiled
// form"), and the colour pass (colour_device.cuh). The same values as apply_cpu.cpp.
#include "core/cuda/check.h"
#include "core/equalize/ops/apply/apply.h"
#include "core/equalize/ops/apply/colour_device.cuh"
#include "core/equalize/ops/checks.h"
#include "core/equalize/ops/lut/build_lut.h"
#include "core/equalize/tone.h"

namespace histeq::eq {
namespace {

// One 16-byte unit of a row per thread: 16 8-bit or 8 16-bit samples. Full units of an aligned
// plane go through one vector load and store; row tails and unaligned planes go sample by sample.
// The LUT sits in shared memory in the sample type; 8-bit tables cover all 256 values (values >=
// bins map to themselves), 16-bit ones only [0, bins).
template <class T>
__global__ void __launch_bounds__(kApplyThreads)
    apply_kernel(PlaneView<T> p, const uint16_t* __restrict__ lut, int bins, uint32_t units_per_row, bool vector_ok, int shift) {
  constexpr int kTable = sizeof(T) == 1 ? 256 : kMaxBins;
  constexpr int kPerUnit = kUnitBytes / static_cast<int>(sizeof(T));
  __shared__ T s_lut[kTable];
  for (int i = threadIdx.x; i < kTable; i += kApplyThreads) s_lut[i] = static_cast<T>(i < bins ? lut[i] : i);
  __syncthreads();

  const uint64_t unit = static_cast<uint64_t>(blockIdx.x) * kApplyThreads + threadIdx.x;
  if (unit >= static_cast<uint64_t>(units_per_row) * static_cast<uint64_t>(p.height)) return;
  const int y = static_cast<int>(unit / units_per_row);
  const int x0 = static_cast<int>(unit % units_per_row) * kPerUnit;
  T* row = p.row(y);
  const uint32_t low = (1u << shift) - 1u;
  auto map = [&](uint32_t v) -> uint32_t {
    if (sizeof(T) == 1) return s_lut[v];
    const uint32_t i = v >> shift;  // P010: values in the high bits
    return i < static_cast<uint32_t>(bins) ? (static_cast<uint32_t>(s_lut[i]) << shift) | (v & low) : v;
  };
  if (vector_ok && x0 + kPerUnit <= p.width) {
    uint4 w = *reinterpret_cast<const uint4*>(row + x0);
    uint32_t* words = reinterpret_cast<uint32_t*>(&w);
#pragma unroll
    for (int k = 0; k < 4; ++k) {
      const uint32_t in = words[k];
      uint32_t out;
      if (sizeof(T) == 1) {
        out = map(in & 0xFFu) | map((in >> 8) & 0xFFu) << 8 | map((in >> 16) & 0xFFu) << 16 | map(in >> 24) << 24;
      } else {
        out = map(in & 0xFFFFu) | map(in >> 16) << 16;
      }
      words[k] = out;
    }
    *reinterpret_cast<uint4*>(row + x0) = w;
  } else {
    const int x1 = min(x0 + kPerUnit, p.width);
    for (int x = x0; x < x1; ++x) row[x] = static_cast<T>(map(row[x]));
  }
}

template <class T>
Status apply_device(const PlaneView<T>& p, const uint16_t* d_lut, int bins, cudaStream_t stream, int shift = 0) {
  HISTEQ_TRY(validate_lut_args(bins, 0));
  if (shift < 0 || shift >= 16 || (sizeof(T) == 1 && shift != 0))
    return HISTEQ_ERROR(Code::invalid_argument, "sample shift out of range");
  if (p.empty()) return Status::ok();
  if (p.memory != MemoryKind::device) return HISTEQ_ERROR(Code::invalid_argument, "apply_lut_gpu needs a device plane");
  if (p.data == nullptr || d_lut == nullptr) return HISTEQ_ERROR(Code::invalid_argument, "null plane or LUT");
  if (p.height > 1 && p.pitch < p.row_bytes()) return HISTEQ_ERROR(Code::invalid_argument, "pitch smaller than a row");
  if (p.pitch % sizeof(T) != 0) return HISTEQ_ERROR(Code::invalid_argument, "pitch is not a whole number of samples");
  const bool vector_ok = reinterpret_cast<uintptr_t>(p.data) % kUnitBytes == 0 && (p.height == 1 || p.pitch % kUnitBytes == 0);
  const uint32_t units_per_row = static_cast<uint32_t>((p.row_bytes() + kUnitBytes - 1) / kUnitBytes);
  const uint64_t units = static_cast<uint64_t>(units_per_row) * static_cast<uint64_t>(p.height);
  const uint64_t blocks = (units + kApplyThreads - 1) / kApplyThreads;
  if (blocks > 0x7FFFFFFFull) return HISTEQ_ERROR(Code::unsupported, "plane too large for apply_lut_gpu");
  apply_kernel<T><<<static_cast<unsigned>(blocks), kApplyThreads, 0, stream>>>(p, d_lut, bins, units_per_row, vector_ok, shift);
  HISTEQ_CUDA_TRY_LAUNCH();
  return Status::ok();
}

template <class T>
__global__ void __launch_bounds__(kApplyThreads)
    apply_tiles_kernel(PlaneView<T> p, TileLuts t, int bins, uint32_t units_per_row, bool vector_ok) {
  constexpr int kPerUnit = kUnitBytes / static_cast<int>(sizeof(T));
  const uint64_t unit = static_cast<uint64_t>(blockIdx.x) * kApplyThreads + threadIdx.x;
  if (unit >= static_cast<uint64_t>(units_per_row) * static_cast<uint64_t>(p.height)) return;
  const int y = static_cast<int>(unit / units_per_row);
  const int x0 = static_cast<int>(unit % units_per_row) * kPerUnit;
  T* row = p.row(y);
  const uint32_t ey = __ldg(t.y_table + y);
  const uint32_t n = static_cast<uint32_t>(bins);
  const int sh = t.shift;  // P010: the LUTs map v >> 6
  auto map = [&](uint32_t ex, uint32_t s) -> uint32_t {
    const uint32_t v = s >> sh;
    if (sizeof(T) != 1 && v >= n) return s;
    return tone::tile_map(t.luts, t.grid.cols, bins, ex, ey, v) << sh;
  };
  if (vector_ok && x0 + kPerUnit <= p.width) {
    // The unit's axis entries in 16-byte loads: one 4-byte load a pixel put the lanes 64 bytes
    // apart, 16 cache lines a warp's load, as many L1 wavefronts as the LUT gathers themselves.
    uint32_t ex[kPerUnit];
    const uint4* xt = reinterpret_cast<const uint4*>(t.x_table + x0);
#pragma unroll
    for (int q = 0; q < kPerUnit / 4; ++q) {
      const uint4 e = __ldg(xt + q);
      ex[4 * q] = e.x, ex[4 * q + 1] = e.y, ex[4 * q + 2] = e.z, ex[4 * q + 3] = e.w;
    }
    uint4 w = *reinterpret_cast<const uint4*>(row + x0);
    T* s = reinterpret_cast<T*>(&w);
#pragma unroll
    for (int k = 0; k < kPerUnit; ++k) s[k] = static_cast<T>(map(ex[k], s[k]));
    *reinterpret_cast<uint4*>(row + x0) = w;
  } else {
    const int x1 = min(x0 + kPerUnit, p.width);
    for (int x = x0; x < x1; ++x) row[x] = static_cast<T>(map(__ldg(t.x_table + x), row[x]));
  }
}

template <class T>
Status apply_tiles_device(const PlaneView<T>& p, const TileLuts& t, int bins, cudaStream_t stream) {
  HISTEQ_TRY(check_bins(bins));
  HISTEQ_TRY(check_device_plane(p));
  if (p.empty()) return Status::ok();
  if (t.luts == nullptr || t.x_table == nullptr || t.y_table == nullptr) return HISTEQ_ERROR(Code::invalid_argument, "null tile LUTs");
  const bool vector_ok = reinterpret_cast<uintptr_t>(p.data) % kUnitBytes == 0 && (p.height == 1 || p.pitch % kUnitBytes == 0) &&
                         reinterpret_cast<uintptr_t>(t.x_table) % kUnitBytes == 0;
  const uint32_t units_per_row = static_cast<uint32_t>((p.row_bytes() + kUnitBytes - 1) / kUnitBytes);
  const uint64_t blocks = (static_cast<uint64_t>(units_per_row) * p.height + kApplyThreads - 1) / kApplyThreads;
  if (blocks > 0x7FFFFFFFull) return HISTEQ_ERROR(Code::unsupported, "plane too large for apply_tiles_gpu");
  apply_tiles_kernel<T><<<static_cast<unsigned>(blocks), kApplyThreads, 0, stream>>>(p, t, bins, units_per_row, vector_ok);
  HISTEQ_CUDA_TRY_LAUNCH();
  return Status::ok();
}

}  // namespace

Status apply_lut_gpu(const PlaneView<uint8_t>& plane, const uint16_t* d_lut, int bins, cudaStream_t stream) {
  return apply_device(plane, d_lut, bins, stream);
}
Status apply_lut_gpu(const PlaneView<uint16_t>& plane, const uint16_t* d_lut, int bins, cudaStream_t stream, int shift) {
  return apply_device(plane, d_lut, bins, stream, shift);
}

Status apply_tiles_gpu(const PlaneView<uint8_t>& plane, const TileLuts& t, int bins, cudaStream_t stream) {
  return apply_tiles_device(plane, t, bins, stream);
}
Status apply_tiles_gpu(const PlaneView<uint16_t>& plane, const TileLuts& t, int bins, cudaStream_t stream) {
  return apply_tiles_device(plane, t, bins, stream);
}

Status apply_colour_gpu(const PlaneRef& luma, const ChromaPlanes& chroma, const uint16_t* d_lut, const TileLuts* tiles, int bins,
                        cudaStream_t stream) {
  HISTEQ_TRY(check_bins(bins));
  if (tiles == nullptr && d_lut == nullptr) return HISTEQ_ERROR(Code::invalid_argument, "null LUT");
  if (luma.bytes_per_sample == 1) return apply_colour_device<uint8_t>(luma, chroma, d_lut, tiles, bins, stream);
  return apply_colour_device<uint16_t>(luma, chroma, d_lut, tiles, bins, stream);
}

}  // namespace histeq::eq
