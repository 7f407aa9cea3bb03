// GPU side of the equalizer: the LUT from a device histogram (one block: a CUB block scan gives the
// CDF) and the LUT applied to a pitched luma plane. Both use lut.h, the formula the CPU uses.
#include <cub/block/block_scan.cuh>

#include "core/cuda/check.h"
#include "core/equalize/equalize.h"
#include "core/histogram/policy.h"

namespace histeq::eq {
namespace {

// One thread per bin. cdf_min is the CDF at lut.h's x0: the one bin of [lo, hi) whose CDF is
// non-zero and either is lo or equals its own count (everything before it is zero), so no
// reduction is needed; N when there is none. Bins below lo take the CDF at lo.
template <int BLOCK>
__global__ void __launch_bounds__(BLOCK)
    build_lut_kernel(const uint32_t* __restrict__ counts, int bins, uint32_t weight, Levels levels, uint16_t* __restrict__ lut) {
  using Scan = cub::BlockScan<uint32_t, BLOCK>;
  __shared__ typename Scan::TempStorage scan_storage;
  __shared__ uint32_t s_total, s_min, s_cdf_lo;
  __shared__ bool s_found;
  const int v = static_cast<int>(threadIdx.x);
  if (v == 0) s_found = false;
  __syncthreads();
  const uint32_t h = v < bins ? counts[v] : 0u;
  uint32_t cdf = 0;
  Scan(scan_storage).InclusiveSum(h, cdf);
  if (v < bins && is_first_counted(static_cast<uint32_t>(v), h, cdf, levels)) {
    s_min = cdf;
    s_found = true;
  }
  if (v == static_cast<int>(levels.lo)) s_cdf_lo = cdf;
  if (v == bins - 1) s_total = cdf;
  __syncthreads();
  const uint32_t cdf_min = s_found ? s_min : s_total;
  const uint32_t cdf_x = static_cast<uint32_t>(v) < levels.lo ? s_cdf_lo : cdf;
  if (v < bins) lut[v] = static_cast<uint16_t>(lut_entry(static_cast<uint32_t>(v), cdf_x, cdf_min, s_total, levels, weight));
}

constexpr int kApplyThreads = 256;
using hist::policy::kUnitBytes;  // the 16-byte unit of every GPU plane walk (core/histogram/policy.h)

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

}  // namespace

Status build_lut_gpu(const uint32_t* d_counts, int bins, uint32_t weight, const Levels& levels, uint16_t* d_lut,
                     cudaStream_t stream) {
  HISTEQ_TRY(validate_lut_args(bins, weight));
  HISTEQ_TRY(validate_levels(bins, levels));
  if (d_counts == nullptr || d_lut == nullptr) return HISTEQ_ERROR(Code::invalid_argument, "null histogram or LUT");
  if (bins <= 256) {
    build_lut_kernel<256><<<1, 256, 0, stream>>>(d_counts, bins, weight, levels, d_lut);
  } else {
    build_lut_kernel<kMaxBins><<<1, kMaxBins, 0, stream>>>(d_counts, bins, weight, levels, d_lut);
  }
  HISTEQ_CUDA_TRY_LAUNCH();
  return Status::ok();
}

Status build_lut_gpu(const uint32_t* d_counts, int bins, uint32_t weight, uint16_t* d_lut, cudaStream_t stream) {
  HISTEQ_TRY(validate_lut_args(bins, weight));
  return build_lut_gpu(d_counts, bins, weight, textbook_levels(static_cast<uint32_t>(bins - 1)), d_lut, stream);
}

Status apply_lut_gpu(const PlaneView<uint8_t>& plane, const uint16_t* d_lut, int bins, cudaStream_t stream) {
  return apply_device(plane, d_lut, bins, stream);
}
Status apply_lut_gpu(const PlaneView<uint16_t>& plane, const uint16_t* d_lut, int bins, cudaStream_t stream, int shift) {
  return apply_device(plane, d_lut, bins, stream, shift);
}

}  // namespace histeq::eq
