// The LUT's block-level device steps (tone.h's clip and shadow floor, lut.h's formula), one thread a
// bin: the LUT kernels' (lut_gpu.cu) and the temporal fold's, which builds the clipped LUT in the
// fused count's last block (ops/temporal/temporal_gpu.cu). Every thread of the block calls them.
#pragma once

#include <cub/block/block_reduce.cuh>
#include <cub/block/block_scan.cuh>

#include "core/equalize/lut.h"
#include "core/equalize/tone.h"

namespace histeq::eq {

// The sum of h over this thread's clip group (tone.h): G consecutive threads, G in {1, 2, 4}, so
// lanes of one warp (G divides 32). Every thread of the warp takes part.
__device__ __forceinline__ uint32_t group_sum(uint32_t h, int g) {
  for (int m = 1; m < g; m <<= 1) h += __shfl_xor_sync(0xFFFFFFFFu, h, m);
  return h;
}

// tone.h's clip of one bin: the block's total excess from what every bin kept.
template <class Reduce>
__device__ __forceinline__ uint32_t clip_bin(typename Reduce::TempStorage& tmp, uint32_t* s_excess, uint32_t h, int v, int bins,
                                             uint32_t total, uint32_t clip_q8) {
  const uint32_t limit = tone::clip_count(clip_q8, total, bins);
  const uint32_t g = group_sum(h, tone::clip_group(bins));
  const uint32_t kept = v < bins ? tone::clip_kept(h, g, limit) : 0u;
  const uint32_t kept_sum = Reduce(tmp).Sum(kept);
  if (v == 0) *s_excess = total - kept_sum;
  __syncthreads();
  return v < bins ? tone::clipped_bin(kept, static_cast<uint32_t>(v), *s_excess, static_cast<uint32_t>(bins)) : 0u;
}

template <int BLOCK>
struct LutScratch {
  using Reduce = cub::BlockReduce<uint32_t, BLOCK>;
  using Reduce64 = cub::BlockReduce<uint64_t, BLOCK>;
  using Scan = cub::BlockScan<uint32_t, BLOCK>;
  union {
    typename Reduce::TempStorage reduce;
    typename Reduce64::TempStorage reduce64;
    typename Scan::TempStorage scan;
  } tmp;
  uint64_t terms;
  uint32_t total, excess, min, cdf_lo;
  bool found;
};

// tone.h's shadow floor on thread v's clipped bin h (raw: its count before the clip); s.total
// becomes the raised histogram's total. Group sums over the G lanes of a group (group_sum). Every
// thread of the block calls it.
template <int BLOCK>
__device__ __forceinline__ uint32_t floor_bin(LutScratch<BLOCK>& s, uint32_t h, uint32_t raw, int bins, const Levels& levels) {
  using Reduce = typename LutScratch<BLOCK>::Reduce;
  using Reduce64 = typename LutScratch<BLOCK>::Reduce64;
  const uint32_t v = threadIdx.x;
  const bool mine = v < static_cast<uint32_t>(bins);
  const int g = tone::clip_group(bins);
  const bool held = group_sum(raw, g) != 0;
  const uint32_t group = group_sum(h, g);
  const bool in = mine && tone::in_shadows(v, held, bins, levels);
  auto terms = [&](uint32_t f) {
    const uint64_t t = Reduce64(s.tmp.reduce64).Sum(tone::floor_terms(group, v, in, f, bins));
    if (v == 0) s.terms = t;
    __syncthreads();
    const uint64_t all = s.terms;
    __syncthreads();  // read by every thread before the next round writes it
    return all;
  };
  const uint32_t f = tone::shadow_floor(terms, s.total, levels);
  if (f == 0) return h;
  const uint32_t raised = mine ? tone::floored_bin(h, group, v, in, f, bins) : 0u;
  const uint32_t total = Reduce(s.tmp.reduce).Sum(raised);
  if (v == 0) s.total = total;
  __syncthreads();
  return raised;
}

// Thread v's bin of `counts` after the clip limit and the shadow floor (unchanged when clip_q8 is
// 0) and its inclusive CDF; s.total = the histogram's total. Every thread of the block calls it.
template <int BLOCK>
__device__ __forceinline__ uint32_t clipped_cdf(LutScratch<BLOCK>& s, const uint32_t* __restrict__ counts, int bins, uint32_t clip_q8,
                                                const Levels& levels, uint32_t& h) {
  using Reduce = typename LutScratch<BLOCK>::Reduce;
  using Scan = typename LutScratch<BLOCK>::Scan;
  const int v = static_cast<int>(threadIdx.x);
  h = v < bins ? counts[v] : 0u;
  const uint32_t total = Reduce(s.tmp.reduce).Sum(h);
  if (v == 0) s.total = total;
  __syncthreads();
  if (clip_q8 != 0) {
    const uint32_t raw = h;
    h = clip_bin<Reduce>(s.tmp.reduce, &s.excess, h, v, bins, s.total, clip_q8);
    h = floor_bin<BLOCK>(s, h, raw, bins, levels);
  }
  uint32_t cdf = 0;
  Scan(s.tmp.scan).InclusiveSum(h, cdf);
  return cdf;
}

// The CDF at x = clamp(v, lo, hi) (lut.h) for thread v, whose own CDF is cdf: bins below lo take
// the one at lo, shared by its thread. Every thread of the block calls it.
template <int BLOCK>
__device__ __forceinline__ uint32_t cdf_at_level(LutScratch<BLOCK>& s, uint32_t cdf, const Levels& levels) {
  if (threadIdx.x == levels.lo) s.cdf_lo = cdf;
  __syncthreads();
  return threadIdx.x < levels.lo ? s.cdf_lo : cdf;
}

// lut.h's formula on the clipped histogram: cdf_min from the one bin lut.h's is_first_counted picks,
// as in lut_gpu.cu's build_lut_kernel.
template <int BLOCK>
__device__ void clipped_lut_block(LutScratch<BLOCK>& s, const uint32_t* __restrict__ counts, int bins, uint32_t weight,
                                  uint32_t clip_q8, const Levels& levels, uint16_t* __restrict__ lut) {
  const int v = static_cast<int>(threadIdx.x);
  if (v == 0) s.found = false;  // ordered by clipped_cdf's barriers
  uint32_t h;
  const uint32_t cdf = clipped_cdf<BLOCK>(s, counts, bins, clip_q8, levels, h);
  if (v < bins && is_first_counted(static_cast<uint32_t>(v), h, cdf, levels)) {
    s.min = cdf;
    s.found = true;
  }
  const uint32_t cdf_x = cdf_at_level<BLOCK>(s, cdf, levels);  // its barrier orders s.min too
  const uint32_t cdf_min = s.found ? s.min : s.total;
  if (v < bins) lut[v] = static_cast<uint16_t>(lut_entry(static_cast<uint32_t>(v), cdf_x, cdf_min, s.total, levels, weight));
}

}  // namespace histeq::eq
