// The lut operation on the GPU: the plain LUT from a device histogram (one block; a CUB block scan
// gives the CDF), the clipped one, and clahe's tile LUTs (one block per tile) with their mean: the
// same integer steps as lut_cpu.cpp (lut.h, tone.h), so the frames are identical.
#include <cub/block/block_scan.cuh>

#include "core/cuda/check.h"
#include "core/equalize/ops/lut/build_lut.h"
#include "core/equalize/ops/lut/lut_device.cuh"
#include "core/equalize/ops/tiles_reduce.cuh"

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

// One block per tile: Zuiderveld's mapping of the tile's clipped CDF.
template <int BLOCK>
__global__ void __launch_bounds__(BLOCK) tile_lut_kernel(const uint32_t* __restrict__ counts, int bins, uint32_t weight,
                                                         uint32_t clip_q8, Levels levels, uint16_t* __restrict__ luts) {
  __shared__ LutScratch<BLOCK> s;
  const int v = static_cast<int>(threadIdx.x);
  const size_t base = static_cast<size_t>(blockIdx.x) * bins;
  uint32_t h;
  const uint32_t cdf = cdf_at_level<BLOCK>(s, clipped_cdf<BLOCK>(s, counts + base, bins, clip_q8, levels, h), levels);
  if (v < bins)
    luts[base + v] = static_cast<uint16_t>(tone::tile_lut_entry(static_cast<uint32_t>(v), cdf, s.cdf_lo, s.total, levels, weight));
}

template <int BLOCK>
__global__ void __launch_bounds__(BLOCK) clipped_lut_kernel(const uint32_t* __restrict__ counts, int bins, uint32_t weight,
                                                            uint32_t clip_q8, Levels levels, uint16_t* __restrict__ lut) {
  __shared__ LutScratch<BLOCK> s;
  clipped_lut_block<BLOCK>(s, counts, bins, weight, clip_q8, levels, lut);
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

Status build_lut_clipped_gpu(const uint32_t* d_counts, int bins, uint32_t weight, uint32_t clip_q8, const Levels& levels,
                             uint16_t* d_lut, cudaStream_t stream) {
  if (clip_q8 == 0) return build_lut_gpu(d_counts, bins, weight, levels, d_lut, stream);
  HISTEQ_TRY(validate_lut_args(bins, weight));
  HISTEQ_TRY(validate_levels(bins, levels));
  if (d_counts == nullptr || d_lut == nullptr) return HISTEQ_ERROR(Code::invalid_argument, "null histogram or LUT");
  if (bins <= 256) clipped_lut_kernel<256><<<1, 256, 0, stream>>>(d_counts, bins, weight, clip_q8, levels, d_lut);
  else clipped_lut_kernel<kMaxBins><<<1, kMaxBins, 0, stream>>>(d_counts, bins, weight, clip_q8, levels, d_lut);
  HISTEQ_CUDA_TRY_LAUNCH();
  return Status::ok();
}

Status build_tile_luts_gpu(const uint32_t* d_tile_counts, int tiles, int bins, uint32_t weight, uint32_t clip_q8,
                           const Levels& levels, uint16_t* d_tile_luts, uint16_t* d_mean_lut, cudaStream_t stream) {
  HISTEQ_TRY(validate_lut_args(bins, weight));
  HISTEQ_TRY(validate_levels(bins, levels));
  if (d_tile_counts == nullptr || d_tile_luts == nullptr || tiles < 1)
    return HISTEQ_ERROR(Code::invalid_argument, "null tile histograms or LUTs");
  if (bins <= 256) tile_lut_kernel<256><<<tiles, 256, 0, stream>>>(d_tile_counts, bins, weight, clip_q8, levels, d_tile_luts);
  else tile_lut_kernel<kMaxBins><<<tiles, kMaxBins, 0, stream>>>(d_tile_counts, bins, weight, clip_q8, levels, d_tile_luts);
  HISTEQ_CUDA_TRY_LAUNCH();
  if (d_mean_lut != nullptr) return tiles_reduce<uint16_t, uint16_t, true>(d_tile_luts, tiles, bins, d_mean_lut, stream);
  return Status::ok();
}

}  // namespace histeq::eq
