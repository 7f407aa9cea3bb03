// GPU side of the picture-quality controls: tone.h's formulas, the same integer steps as
// quality_cpu.cpp, so the frames are identical. Kernels:
//   clip + CDF per tile      one block per tile (CUB block reduce and scan), bins <= block size
//   sum / mean over tiles    32 bins a block, the tiles spread over 16 slices of threads
//   temporal filter          the histogram's figures, the scene cut, every LUT's state and the
//                            brightness offset: one block (global mode; folded with the clipped
//                            LUT, the fused count's last block: temporal_fold_gpu), a cluster of 8
//                            that also puts out the tile LUTs (clahe, sm_90+), else one block,
//                            then one block per tile LUT
//   apply with tiles         one thread per 16-byte unit of a row, its axis entries in 16-byte
//                            loads, LUTs read through L1 (bound by L1's gathers: staging the
//                            block's LUTs in shared memory measured slower; docs/performance.md,
//                            "method2_tuned's tiled form")
//   padded picture           one thread per sample of the padded plane (textbook clahe on a
//                            picture that is not a whole number of tiles: OpenCV's grid)
//   apply with colour        one thread per chroma sample and its co-sited luma samples, every
//                            load issued before the first store; folded (global mode's defaults,
//                            8-bit 4:2:0): the fused kernel's apply, in 16-byte units loaded while
//                            the last block builds the curve (FusedColour)
#include <map>
#include <mutex>
#include <cooperative_groups.h>
#include <cub/block/block_reduce.cuh>
#include <cub/block/block_scan.cuh>

#include "core/cuda/check.h"
#include "core/cuda/device.h"
#include "core/equalize/equalize.h"
#include "core/equalize/fused_gpu.cuh"
#include "core/histogram/policy.h"
#include "core/equalize/tone.h"

namespace histeq::eq {
namespace {

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

Status check_bins(int bins) {
  if (hist::bins_log2(bins) < 1 || bins > kMaxBins) return HISTEQ_ERROR(Code::invalid_argument, "LUT size must be a power of two in 2..1024");
  return Status::ok();
}

// --- tile LUTs and the clipped global LUT ------------------------------------------------------------

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

// lut.h's formula on the clipped histogram: cdf_min from the one bin lut.h's is_first_counted picks,
// as in equalize_gpu.cu's kernel.
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

template <int BLOCK>
__global__ void __launch_bounds__(BLOCK) clipped_lut_kernel(const uint32_t* __restrict__ counts, int bins, uint32_t weight,
                                                            uint32_t clip_q8, Levels levels, uint16_t* __restrict__ lut) {
  __shared__ LutScratch<BLOCK> s;
  clipped_lut_block<BLOCK>(s, counts, bins, weight, clip_q8, levels, lut);
}

// out[v] = sum over tiles (uint32 counts), or the rounded mean (uint16 LUTs). A block takes
// kReduceBins bins and spreads the tiles over kReduceSlices slices of threads, then sums the
// slices in shared memory: one thread a bin walking every tile took 4.3-5.1 us for 64 tiles at
// 1080p, 2.8-3.1 us this way (Nsight Compute, H200; docs/performance.md, "method2_tuned's tiled form").
constexpr int kReduceBins = 32, kReduceSlices = 16;

template <class In, class Out, bool kMean>
__global__ void __launch_bounds__(kReduceBins * kReduceSlices)
    tiles_reduce_kernel(const In* __restrict__ in, int tiles, int bins, Out* __restrict__ out) {
  __shared__ uint32_t part[kReduceSlices][kReduceBins + 1];
  const int b = static_cast<int>(threadIdx.x) % kReduceBins, slice = static_cast<int>(threadIdx.x) / kReduceBins;
  const int v = static_cast<int>(blockIdx.x) * kReduceBins + b;
  uint32_t sum = 0;
  if (v < bins)
    for (int t = slice; t < tiles; t += kReduceSlices) sum += in[static_cast<size_t>(t) * bins + v];
  part[slice][b] = sum;
  __syncthreads();
  if (slice != 0 || v >= bins) return;
  for (int s = 1; s < kReduceSlices; ++s) sum += part[s][b];
  out[v] = static_cast<Out>(kMean ? (sum + static_cast<uint32_t>(tiles) / 2) / static_cast<uint32_t>(tiles) : sum);
}

template <class In, class Out, bool kMean>
Status tiles_reduce(const In* in, int tiles, int bins, Out* out, cudaStream_t stream) {
  tiles_reduce_kernel<In, Out, kMean>
      <<<(bins + kReduceBins - 1) / kReduceBins, kReduceBins * kReduceSlices, 0, stream>>>(in, tiles, bins, out);
  HISTEQ_CUDA_TRY_LAUNCH();
  return Status::ok();
}

// --- temporal filter ----------------------------------------------------------------------------

// Clahe's measure on sm_90 and later: a cluster of this many blocks, each with its share of the
// tiles, summing through distributed shared memory. One block took 2.5 us a walk over 64 x 256
// entries at 16 a thread (issue-bound in one SM), and a frame takes seven to nine walks. Swept on
// an H200 (quality --bench, clahe 8x8 + every control, its temporal stage at 1080p;
// docs/results/hold-cluster/cluster_size_sweep.txt): 2 blocks 39.9 us, 4 30.8, 8 29.1, 16 40.1
// (more blocks, dearer barriers and remote reads than the walk they share).
constexpr int kClusterBlocks = 8;

// The entries the brightness is measured on (quality_cpu.cpp's Measure): the reference LUT's,
// weighted by the frame's histogram; in clahe mode every tile's, weighted by its own tile's, read
// from the states this block stepped. Entry i is bin i mod bins of LUT i / bins; this block sums
// entries [begin, end). Staged: their terms' y and w in shared memory (bounds: lo | hi << 16 a
// level), taken once for the search's many walks over them; the arrays hold entry i at i - base.
struct MeasuredEntries {
  const uint32_t* h;
  const int32_t* state;
  int end;
  const int32_t* y = nullptr;
  const int32_t* w = nullptr;
  const uint32_t* bounds = nullptr;
  int begin = 0;
  int base = 0;
};

// Cluster sums (sm_90 and later; K > 1 is never launched below). Each follows a cluster barrier,
// which also orders the block's own shared memory; the caller alternates the slots it passes, so
// a block writes a slot again only after the next barrier, when every block has read it.
template <int K>
__device__ uint64_t cluster_sum_of_one(uint64_t* slot) {
#if __CUDA_ARCH__ >= 900
  cooperative_groups::cluster_group cluster = cooperative_groups::this_cluster();
  cluster.sync();
  const int lane = static_cast<int>(threadIdx.x) & 31;
  uint64_t x = lane < K ? *cluster.map_shared_rank(slot, lane) : 0;
  for (int m = 1; m < K; m <<= 1) x += __shfl_xor_sync(0xFFFFFFFFu, x, m);
  return __shfl_sync(0xFFFFFFFFu, x, 0);
#else
  return *slot;
#endif
}
template <int K>
__device__ uint64_t cluster_sum_of_each(uint64_t* slot) {
#if __CUDA_ARCH__ >= 900
  cooperative_groups::cluster_group cluster = cooperative_groups::this_cluster();
  cluster.sync();
  uint64_t x = 0;
  for (int r = 0; r < K; ++r) x += *cluster.map_shared_rank(slot, r);
  return x;
#else
  return *slot;
#endif
}

// The brightness measure over the block (K = 1) or a cluster of K blocks (every thread calls
// every method with the same arguments and gets the same values, so limit_offset's branches are
// uniform), as quality_cpu.cpp's Measure: mean() sums every entry at one offset; last_at_most
// walks the entries for the levels each passes within its range, adds their weights into BLOCK
// buckets of offsets (shared atomics), and takes the bucket where the sum passes the bound from a
// block scan: BLOCK ways a round, so a range of 2^20 offsets takes two rounds at 1,024 threads and
// three at 256, where bisection measured every entry at a dozen offsets and more (92 us a frame
// for 64 tiles, against 27 for the whole filter before).
template <int BLOCK, int K>
struct BlockMeasure {
  using Reduce = cub::BlockReduce<uint64_t, BLOCK>;
  using Scan = cub::BlockScan<uint64_t, BLOCK>;
  static constexpr int kSlots = K > 1 ? 2 : 1;
  struct Shared {
    union {
      typename Reduce::TempStorage reduce;
      typename Scan::TempStorage scan;
    } tmp;
    uint64_t bucket[kSlots][BLOCK], sum[kSlots], before;
    int j;
  };
  Shared& sh;
  const TemporalArgs& a;
  const MeasuredEntries& e;
  uint64_t total;
  int tid = static_cast<int>(threadIdx.x);
  int bins_log2 = tone::log2_pow2(a.bins), ramp_log2 = tone::ramp_log2(bins_log2);
  int slot = 0;  // the cluster's shared slots alternate from one sum to the next
  // The last sum is kept: the search starts where limit_offset last measured, and the offset it
  // returns is often the one it measured first.
  bool have_last = false;
  int32_t last_off = 0;
  uint64_t last_sum = 0;

  __device__ tone::EntryTerms terms(int i) const {
    if (e.y == nullptr) return tone::entry_terms(e.state[i - e.base], i & (a.bins - 1), bins_log2, a.levels);
    const uint32_t b = e.bounds[i & (a.bins - 1)];
    return tone::EntryTerms{e.y[i - e.base], e.w[i - e.base], static_cast<uint16_t>(b), static_cast<uint16_t>(b >> 16)};
  }
  // Every thread's `part` summed over the block, or the cluster, for every thread.
  __device__ uint64_t summed(uint64_t part) {
    part = Reduce(sh.tmp.reduce).Sum(part);
    if (tid == 0) sh.sum[slot] = part;
    if constexpr (K == 1) {
      __syncthreads();
      part = sh.sum[0];
      __syncthreads();  // tmp and sum are free again
    } else {
      part = cluster_sum_of_one<K>(&sh.sum[slot]);  // its barrier frees tmp
      slot ^= 1;
    }
    return part;
  }
  // The sum of h x entry at `off`.
  __device__ uint64_t sum_at(int32_t off) {
    if (have_last && off == last_off) return last_sum;
    uint64_t sum = 0;
    for (int i = e.begin + tid; i < e.end; i += BLOCK) {
      const uint32_t h = e.h[i - e.base];
      if (h != 0) sum += static_cast<uint64_t>(h) * tone::entry_at(terms(i), off, ramp_log2);
    }
    sum = summed(sum);
    have_last = true;
    last_off = off;
    last_sum = sum;
    return sum;
  }
  __device__ int32_t mean(int32_t off) { return tone::mean_q12(sum_at(off), total); }
  // The weights of the levels passed in (lo, hi] into buckets of `width` offsets; returns bucket
  // tid's, over the cluster.
  __device__ uint64_t fill_buckets(int32_t lo, int32_t hi, int64_t width) {
    uint64_t* bucket = sh.bucket[slot];
    bucket[tid] = 0;
    __syncthreads();
    for (int i = e.begin + tid; i < e.end; i += BLOCK) {
      const uint32_t h = e.h[i - e.base];
      if (h == 0) continue;
      const tone::EntryTerms te = terms(i);
      const uint32_t elo = tone::entry_at(te, lo, ramp_log2), ehi = tone::entry_at(te, hi, ramp_log2);
      for (uint32_t k = elo + 1; k <= ehi; ++k) {
        const int64_t at = (tone::entry_threshold(te, k, ramp_log2) - static_cast<int64_t>(lo) - 1) / width;
        atomicAdd(reinterpret_cast<unsigned long long*>(&bucket[at]), static_cast<unsigned long long>(h));
      }
    }
    if constexpr (K == 1) {
      __syncthreads();
      return bucket[tid];
    } else {
      const uint64_t all = cluster_sum_of_each<K>(&bucket[tid]);
      slot ^= 1;
      return all;
    }
  }
  // tone::limit_offset's search: the largest c in [lo, hi) with mean(c) <= t, given mean(lo) <= t < mean(hi).
  __device__ int32_t last_at_most(int32_t lo, int32_t hi, int32_t t) {
    uint64_t budget = tone::sum_at_most(t, total) - sum_at(lo);
    while (hi - lo > 1) {
      const int64_t width = (static_cast<int64_t>(hi) - lo + BLOCK - 1) / BLOCK;
      const uint64_t mine = fill_buckets(lo, hi, width);
      uint64_t upto = 0;
      Scan(sh.tmp.scan).InclusiveSum(mine, upto);
      if (upto > budget && upto - mine <= budget) {  // the first bucket past the budget: mean(hi) > t, so one is
        sh.j = tid;
        sh.before = upto - mine;
      }
      __syncthreads();
      budget -= sh.before;
      const int64_t nlo = lo + sh.j * width;
      hi = static_cast<int32_t>(min(static_cast<int64_t>(hi), nlo + width));
      lo = static_cast<int32_t>(nlo);
      __syncthreads();  // j, before and tmp read by every thread before the next round
    }
    return lo;
  }
};

// The frame's brightness offset c (tone::limit_offset) and u(c) in *u_c, block- or cluster-wide.
template <int BLOCK, int K>
__device__ int32_t block_offset(const TemporalArgs& a, const MeasuredEntries& e, uint32_t total, int32_t m, bool cut, int32_t* u_c) {
  __shared__ typename BlockMeasure<BLOCK, K>::Shared sh;
  BlockMeasure<BLOCK, K> u{sh, a, e, total};
  const bool free = a.restart || (cut && tone::free_cut(a.prev_scalars[4], m - a.prev_scalars[2], a.prev_scalars[5], a.bins));
  int32_t c = 0;
  if (!free) {
    const int32_t d = m > a.prev_scalars[2] ? m - a.prev_scalars[2] : a.prev_scalars[2] - m;
    auto u_of = [&u](int32_t off) { return u.mean(off); };
    auto search = [&u](int32_t lo, int32_t hi, int32_t t) { return u.last_at_most(lo, hi, t); };
    c = tone::limit_offset(u_of, search, a.prev_scalars[0], a.alpha_q16, a.prev_scalars[1] - d, a.prev_scalars[1] + d,
                           tone::max_offset(a.bins));
  }
  *u_c = u.mean(c);
  return c;
}

// The histogram's total and mean (Q12), whether this frame is a cut (the normalized bins kept for
// the next frame's test when `writes`), block-wide; v = threadIdx.x, one bin a thread.
struct FrameFigures {
  uint32_t total;
  int32_t m;
  bool cut;
};
template <int BLOCK>
__device__ FrameFigures frame_figures(const TemporalArgs& a, int v, bool writes) {
  using R32 = cub::BlockReduce<uint32_t, BLOCK>;
  using R64 = cub::BlockReduce<uint64_t, BLOCK>;
  __shared__ union {
    typename R32::TempStorage r32;
    typename R64::TempStorage r64;
  } tmp;
  __shared__ FrameFigures s;
  const bool mine = v < a.bins;
  const uint32_t h = mine ? a.counts[v] : 0u;
  const uint32_t total = R32(tmp.r32).Sum(h);
  if (v == 0) s.total = total;
  __syncthreads();
  const uint64_t sum_hv = R64(tmp.r64).Sum(static_cast<uint64_t>(h) * static_cast<uint64_t>(v));
  if (v == 0) {
    s.m = tone::mean_q12(sum_hv, s.total);
    s.cut = a.restart;
  }
  __syncthreads();
  const uint32_t p = tone::normalized_bin(h, s.total);
  uint32_t d = 0;
  if (!a.restart && mine) d = p > a.prev_hist[v] ? p - a.prev_hist[v] : a.prev_hist[v] - p;
  if (mine && writes) a.next_hist[v] = p;
  const uint32_t diff = R32(tmp.r32).Sum(d);  // at most 2 x 65536 + bins: no overflow
  if (v == 0 && !a.restart) s.cut = diff / 2 > a.cut_q16;
  __syncthreads();
  return s;
}

// The LUT entries a block of the temporal kernel steps and measures: the tiles' (or the one LUT's)
// [begin, end), and the extra LUT's when `extra`. One block: all of them; a cluster: a share of
// the tiles each, the extra with block 0, which also writes the frame's figures.
struct Slice {
  int begin, end;
  bool extra;
};
template <int K>
__device__ Slice slice_of(const TemporalArgs& a) {
  const int rank = static_cast<int>(blockIdx.x), per = (a.count + K - 1) / K;
  return {min(a.count, rank * per) * a.bins, min(a.count, (rank + 1) * per) * a.bins, rank == 0 && a.extra != nullptr};
}

// The slice's LUT states through the filter, block-wide; staged: the tiles' weights and terms
// into shared memory (s_h, s_y, s_w: entry i at i - s.begin), with each level's bounds in
// s_bounds. A barrier after: the measure reads them.
template <int BLOCK>
__device__ void step_states(const TemporalArgs& a, bool cut, const Slice& s, bool staged, uint32_t* s_h, int32_t* s_y, int32_t* s_w,
                            uint32_t* s_bounds) {
  const int v = static_cast<int>(threadIdx.x);
  const int n = a.count * a.bins;
  const int bins_log2 = tone::log2_pow2(a.bins);
  if (v < a.bins) {
    const tone::EntryTerms t = tone::entry_terms(0, v, bins_log2, a.levels);  // a level's part of the terms
    s_bounds[v] = t.lo | static_cast<uint32_t>(t.hi) << 16;
  }
  auto step = [&](int i) {
    const uint32_t t = i < n ? a.luts[i] : a.extra[i - n];
    const int32_t st = cut ? tone::temporal_start(t) : tone::temporal_step(a.state[i], t, a.alpha_q16);
    a.state[i] = st;
    if (staged && i < n) {
      const tone::EntryTerms te = tone::entry_terms(st, i & (a.bins - 1), bins_log2, a.levels);
      s_h[i - s.begin] = a.tile_counts[i];
      s_y[i - s.begin] = te.y;
      s_w[i - s.begin] = te.w;
    }
  };
  for (int i = s.begin + v; i < s.end; i += BLOCK) step(i);
  if (s.extra)
    for (int i = n + v; i < n + a.bins; i += BLOCK) step(i);
  __syncthreads();
}

// staged: clahe's entries (weights and their terms' y and w) are copied into the dynamic shared
// memory, which the launch sized for them (kStagedBytes an entry), and measured there.
constexpr size_t kStagedBytes = 12;

// The histogram's mean and normalized bins, the scene-cut test, every LUT's state through the
// filter, the brightness offset, the reference LUT (the extra one, else LUT 0), and the scalars
// for the next frame. K = 1: one block, and in clahe mode temporal_tiles_kernel then puts out the
// tile LUTs; K > 1 (clahe, sm_90 and later): a cluster, each block with its share of the tiles,
// whose LUTs it puts out itself.
template <int BLOCK, int K>
__device__ void temporal_ref_block(const TemporalArgs& a, bool staged, uint32_t* t_smem) {
  __shared__ uint32_t s_bounds[BLOCK];
  const int v = static_cast<int>(threadIdx.x);
  const Slice s = K == 1 ? Slice{0, a.count * a.bins, a.extra != nullptr} : slice_of<K>(a);
  const bool first = K == 1 || blockIdx.x == 0;  // K = 1: the block may be any of a larger grid's (the fold's)
  const FrameFigures f = frame_figures<BLOCK>(a, v, first);
  const int size = s.end - s.begin;
  int32_t* s_y = staged ? reinterpret_cast<int32_t*>(t_smem + size) : nullptr;
  int32_t* s_w = staged ? s_y + size : nullptr;
  step_states<BLOCK>(a, f.cut, s, staged, t_smem, s_y, s_w, s_bounds);
  const bool tiles = a.tile_counts != nullptr && a.extra != nullptr;
  int32_t* state = a.state + static_cast<size_t>(a.extra != nullptr ? a.count : 0) * a.bins;  // the reference LUT's
  const MeasuredEntries e = !tiles ? MeasuredEntries{a.counts, state, a.bins}
                            : staged ? MeasuredEntries{t_smem, nullptr, s.end, s_y, s_w, s_bounds, s.begin, s.begin}
                                     : MeasuredEntries{a.tile_counts, a.state, s.end, nullptr, nullptr, nullptr, s.begin};
  int32_t u = 0;
  const int32_t c = block_offset<BLOCK, K>(a, e, f.total, f.m, f.cut, &u);
  if (first && v == 0) {
    a.next_scalars[0] = c;
    a.next_scalars[1] = u;
    a.next_scalars[2] = f.m;
    a.next_scalars[3] = f.cut ? 1 : 0;
    a.next_scalars[4] = f.cut ? 0 : min(a.restart ? 1 : a.prev_scalars[4] + 1, 1 << 20);
    a.next_scalars[5] = a.restart ? 0 : f.m - a.prev_scalars[2];
  }
  uint16_t* lut = a.extra != nullptr ? a.extra : a.luts;
  if (first && v < a.bins) lut[v] = static_cast<uint16_t>(tone::temporal_entry(state[v], c, v, a.bins, a.levels));
  if constexpr (K > 1) {
    const int bins_log2 = tone::log2_pow2(a.bins);
    for (int i = s.begin + v; i < s.end; i += BLOCK)
      a.luts[i] = static_cast<uint16_t>(tone::temporal_entry_log2(a.state[i], c, i & (a.bins - 1), bins_log2, a.levels));
#if __CUDA_ARCH__ >= 900
    cooperative_groups::this_cluster().sync();  // no block leaves while another may read its shared memory
#endif
  }
}

template <int BLOCK, int K>
__global__ void __launch_bounds__(BLOCK) temporal_ref_kernel(TemporalArgs a, bool staged) {
  extern __shared__ uint32_t t_smem[];
  temporal_ref_block<BLOCK, K>(a, staged, t_smem);
}

// Global mode's curve folded into the histogram's launch (FusedEqualizer::count_with): the last
// block to finish counting builds the clipped LUT and takes it through the filter, from its shared
// memory, with the fused block's threads; bins <= kFoldThreads (one bin a thread, as the kernels
// above). The same steps as clipped_lut_kernel then temporal_ref_kernel<.., 1>: the same LUT.
constexpr int kFoldThreads = fused_detail::policy_fused_threads;
struct TemporalFoldBuilder {
  TemporalArgs a;  // counts and luts: the building block's histogram and LUT
  uint32_t clip_q8;
  __device__ void operator()(const LutBuildArgs& b) const {
    __shared__ LutScratch<kFoldThreads> s;
    const int bins = static_cast<int>(b.bins);
    clipped_lut_block<kFoldThreads>(s, b.hist, bins, b.weight, clip_q8, a.levels, b.lut);
    __syncthreads();
    TemporalArgs t = a;
    t.counts = b.hist;
    t.luts = b.lut;
    temporal_ref_block<kFoldThreads, 1>(t, false, nullptr);
  }
};

// Clahe: the tile LUTs (one block each) from the states and the offset the reference block decided.
__global__ void temporal_tiles_kernel(TemporalArgs a) {
  const int v = static_cast<int>(threadIdx.x);
  if (v >= a.bins) return;
  const size_t at = static_cast<size_t>(blockIdx.x) * a.bins + v;
  a.luts[at] = static_cast<uint16_t>(tone::temporal_entry(a.state[at], a.next_scalars[0], v, a.bins, a.levels));
}

// --- apply with tiles ---------------------------------------------------------------------------

constexpr int kApplyThreads = 256;
using hist::policy::kUnitBytes;  // the 16-byte unit of every GPU plane walk (core/histogram/policy.h)
constexpr int kMaxGridRows = 65535;  // gridDim.y: one row of chroma per block row

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
Status check_device_plane(const PlaneView<T>& p) {
  if (p.memory != MemoryKind::device) return HISTEQ_ERROR(Code::invalid_argument, "a device plane is needed");
  if (!p.empty() && p.data == nullptr) return HISTEQ_ERROR(Code::invalid_argument, "null plane");
  if (p.height > 1 && p.pitch < p.row_bytes()) return HISTEQ_ERROR(Code::invalid_argument, "pitch smaller than a row");
  if (p.pitch % sizeof(T) != 0) return HISTEQ_ERROR(Code::invalid_argument, "pitch is not a whole number of samples");
  return Status::ok();
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

// --- the textbook clahe's padded picture ---------------------------------------------------------

constexpr int kPadThreads = 256;

// One thread per sample of the padded plane: out(x, y) = in(reflect(x), reflect(y)) (a copy inside
// the picture). Textbook clahe only, on pictures that are not whole tiles; its cost is a copy.
template <class T>
__global__ void __launch_bounds__(kPadThreads) pad_reflect_kernel(PlaneView<const T> in, PlaneView<T> out) {
  const uint64_t i = static_cast<uint64_t>(blockIdx.x) * kPadThreads + threadIdx.x;
  if (i >= static_cast<uint64_t>(out.width) * static_cast<uint64_t>(out.height)) return;
  const int y = static_cast<int>(i / static_cast<uint64_t>(out.width)), x = static_cast<int>(i % static_cast<uint64_t>(out.width));
  out.row(y)[x] = in.row(tone::reflect_101(y, in.height))[tone::reflect_101(x, in.width)];
}

template <class T>
Status pad_reflect_device(const PlaneRef& in, const PlaneRef& out, cudaStream_t stream) {
  const uint64_t blocks = (static_cast<uint64_t>(out.width) * static_cast<uint64_t>(out.height) + kPadThreads - 1) / kPadThreads;
  if (blocks > 0x7FFFFFFFull) return HISTEQ_ERROR(Code::unsupported, "plane too large for pad_reflect_gpu");
  pad_reflect_kernel<T><<<static_cast<unsigned>(blocks), kPadThreads, 0, stream>>>(in.as<T>(), out.as_writable<T>());
  HISTEQ_CUDA_TRY_LAUNCH();
  return Status::ok();
}

// --- apply with colour --------------------------------------------------------------------------

struct ColourPlan {
  int cw = 0, ch = 0;  // chroma samples per row, rows
};

// The luma samples co-sited with one chroma sample: columns x0..x1 - 1 of rows y0..y1 - 1, 2 x 2
// at most (the launch checks the subsampling), as values >> sh; ok says which lie in the plane.
template <class T>
struct Cosited {
  T* rows[2];
  uint32_t in[2][2];
  bool ok[2][2];
};

template <class T>
__device__ __forceinline__ Cosited<T> load_cosited(const PlaneView<T>& y, int x0, int x1, int y0, int y1, int sh) {
  Cosited<T> q;
#pragma unroll
  for (int dy = 0; dy < 2; ++dy) {
    q.rows[dy] = y.row(min(y0 + dy, y1 - 1));
#pragma unroll
    for (int dx = 0; dx < 2; ++dx) {
      q.ok[dy][dx] = y0 + dy < y1 && x0 + dx < x1;
      q.in[dy][dx] = q.ok[dy][dx] ? static_cast<uint32_t>(q.rows[dy][x0 + dx]) >> sh : 0u;
    }
  }
  return q;
}

// Maps every co-sited sample by map(value, dx, dy), stores it (<< sh) and adds to the sums.
template <class T, class Map>
__device__ __forceinline__ void map_cosited(const Cosited<T>& q, int x0, int sh, uint32_t& sum_in, uint32_t& sum_out,
                                            uint32_t& count, Map&& map) {
#pragma unroll
  for (int dy = 0; dy < 2; ++dy)
#pragma unroll
    for (int dx = 0; dx < 2; ++dx) {
      if (!q.ok[dy][dx]) continue;
      const uint32_t out = map(q.in[dy][dx], dx, dy);
      q.rows[dy][x0 + dx] = static_cast<T>(out << sh);
      sum_in += q.in[dy][dx];
      sum_out += out;
      ++count;
    }
}

// One chroma sample (cx, cy) of the colour pass, loaded: its co-sited luma samples, U and V.
// Every load comes first, the mapping and the stores after (colour_store): loaded row by row behind
// the previous row's stores, a thread made three trips to memory in a row, and warps spent 54-58%
// of their stalls waiting on them (Nsight Compute, H200, docs/performance.md).
template <class T>
struct ColourSample {
  Cosited<T> q;
  T* pu;
  T* pv;
  uint32_t u_in, v_in;
  int x0, y0, x1, y1;
};

template <class T>
__device__ __forceinline__ ColourSample<T> colour_load(const PlaneView<T>& y, const PlaneView<T>& u, const PlaneView<T>& v,
                                                       const ChromaPlanes& c, int cx, int cy) {
  ColourSample<T> s;
  s.y0 = cy << c.shift_y;
  s.y1 = min(y.height, (cy + 1) << c.shift_y);
  s.x0 = cx << c.shift_x;
  s.x1 = min(y.width, (cx + 1) << c.shift_x);
  s.pu = c.interleaved ? u.row(cy) + 2 * cx : u.row(cy) + cx;
  s.pv = c.interleaved ? u.row(cy) + 2 * cx + 1 : v.row(cy) + cx;
  s.q = load_cosited(y, s.x0, s.x1, s.y0, s.y1, c.shift);  // P010: the values are v >> 6, stored << 6
  s.u_in = static_cast<uint32_t>(*s.pu) >> c.shift;
  s.v_in = static_cast<uint32_t>(*s.pv) >> c.shift;
  return s;
}

// The sample's luma mapped by map(value, dx, dy) and stored, U and V scaled by its gain.
template <class T, class Map>
__device__ __forceinline__ void colour_store(const ColourSample<T>& s, const ChromaPlanes& c, int bit_depth, Map&& map) {
  const int sh = c.shift;
  const uint32_t depth = static_cast<uint32_t>(bit_depth - sh);
  const uint32_t maxval = (1u << depth) - 1, neutral = 1u << (depth - 1);
  uint32_t sum_in = 0, sum_out = 0, count = 0;
  map_cosited(s.q, s.x0, sh, sum_in, sum_out, count, map);
  if (count == 0) return;
  const uint32_t g = tone::chroma_scale(sum_in, sum_out, count, c.black, c.limit_q12);
  const uint32_t c_lo = c.lo, c_hi = min(c.hi, maxval);
  *s.pu = static_cast<T>(tone::scale_chroma(s.u_in, g, neutral, c_lo, c_hi) << sh);
  *s.pv = static_cast<T>(tone::scale_chroma(s.v_in, g, neutral, c_lo, c_hi) << sh);
}

// One thread per chroma sample (cx, cy): maps its co-sited luma samples and scales its U and V.
// Global mode keeps the LUT in shared memory (as apply_kernel); tiles read theirs through L1.
template <class T, bool kTiles>
__global__ void __launch_bounds__(kApplyThreads)
    colour_kernel(PlaneView<T> y, PlaneView<T> u, PlaneView<T> v, ChromaPlanes c, const uint16_t* __restrict__ lut, TileLuts t,
                  int bins, ColourPlan plan) {
  constexpr int kTable = sizeof(T) == 1 ? 256 : kMaxBins;
  __shared__ uint16_t s_lut[kTiles ? 1 : kTable];
  if constexpr (!kTiles) {
    for (int i = threadIdx.x; i < kTable; i += kApplyThreads) s_lut[i] = static_cast<uint16_t>(i < bins ? lut[i] : i);
    __syncthreads();
  }
  // A chroma row per blockIdx.y: no 64-bit division per thread to find it.
  const int cx = static_cast<int>(blockIdx.x * kApplyThreads + threadIdx.x), cy = static_cast<int>(blockIdx.y);
  if (cx >= plan.cw) return;
  const ColourSample<T> s = colour_load(y, u, v, c, cx, cy);
  uint32_t ex[2] = {0, 0}, ey[2] = {0, 0};  // the tiles' axis entries, loaded with the rest
  if constexpr (kTiles) {
#pragma unroll
    for (int d = 0; d < 2; ++d) {
      ex[d] = __ldg(t.x_table + min(s.x0 + d, s.x1 - 1));
      ey[d] = __ldg(t.y_table + min(s.y0 + d, s.y1 - 1));
    }
  }
  const uint32_t n = static_cast<uint32_t>(bins);
  colour_store(s, c, y.bit_depth, [&](uint32_t i, int dx, int dy) -> uint32_t {
    if (sizeof(T) != 1 && i >= n) return i;
    if constexpr (kTiles) return tone::tile_map(t.luts, t.grid.cols, bins, ex[dx], ey[dy], i);
    else return s_lut[i];
  });
}

// 8-bit 4:2:0 in 16-byte units: 16 luma columns of the two luma rows of a chroma row, and their
// 8 chroma samples (planar: 8 bytes of U and of V; NV12: 16 bytes of UV), as four loads. The
// per-sample walk issued six loads of one or two bytes a chroma sample; at one fused block an SM
// (a quarter of the threads colour_kernel has in flight) that left the fold's apply latency-bound:
// 56 us at 4K against 30 + 22 for the fold and colour_kernel apart (H200, docs/performance.md).
struct Unit420 {
  uint4 y0, y1;  // luma rows 2 cy and 2 cy + 1
  uint4 c;       // planar: U in x, y and V in z, w; NV12: UV
};

// The units' walk: `cols` units a chroma row, over the chroma rows whose two luma rows both exist.
struct UnitWalk {
  int cols, rows;       // units a row, rows
  int at_r, at_c;       // the next unit
  int step_r, step_c;   // a grid-stride step
  __device__ void start(uint32_t gid, uint32_t stride) {
    at_r = static_cast<int>(gid / static_cast<uint32_t>(cols));
    at_c = static_cast<int>(gid % static_cast<uint32_t>(cols));
    step_r = static_cast<int>(stride / static_cast<uint32_t>(cols));
    step_c = static_cast<int>(stride % static_cast<uint32_t>(cols));
  }
  __device__ bool more() const { return at_r < rows; }
  __device__ void advance() {
    at_r += step_r;
    at_c += step_c;
    if (at_c >= cols) {
      at_c -= cols;
      ++at_r;
    }
  }
};

// The colour pass as the fused kernel's apply (fused_gpu.cuh's applier; temporal_fold_gpu), for
// 8-bit 4:2:0 with aligned rows (units_fit): a grid-stride over Unit420s, kAhead of them a thread
// loaded before the LUT is known, then the samples the units leave (the columns past the last
// whole unit, an odd last luma row) one by one. The same steps and values as colour_kernel in
// global mode. kAhead swept on an H200 (quality --bench, global + every control, median us;
// docs/results/fused-apply/qb_histeq*): 2 units 34.6 at 1080p and 50.5-50.9 at 4K,
// 3 units 34.8-35.0 and 52.5-52.6, 4 units 35.6-35.7 and 56.0-56.8 (registers spilled).
struct FusedColour {
  using T = uint8_t;
  static constexpr int kAhead = 2;
  PlaneView<T> y, u, v;
  ChromaPlanes c;
  ColourPlan plan;
  struct Stage {
    Unit420 w[kAhead];
    int r[kAhead], col[kAhead];
    int n;
    UnitWalk walk;
  };

  static bool units_fit(const PlaneView<T>& y, const PlaneView<T>& u, const PlaneView<T>& v, const ChromaPlanes& c) {
    auto aligned = [](const void* p, size_t pitch, size_t a) { return reinterpret_cast<uintptr_t>(p) % a == 0 && pitch % a == 0; };
    if (c.shift_x != 1 || c.shift_y != 1 || c.shift != 0 || !aligned(y.data, y.pitch, 16)) return false;
    if (y.width < 16 || y.height < 2) return false;  // not one whole unit (UnitWalk divides by the units a row)
    return c.interleaved ? aligned(u.data, u.pitch, 16) : aligned(u.data, u.pitch, 8) && aligned(v.data, v.pitch, 8);
  }
  __device__ UnitWalk unit_walk() const { return UnitWalk{y.width / 16, y.height / 2}; }

  __device__ Unit420 load_unit(int r, int col) const {
    Unit420 w;
    w.y0 = __ldcg(reinterpret_cast<const uint4*>(y.row(2 * r)) + col);
    w.y1 = __ldcg(reinterpret_cast<const uint4*>(y.row(2 * r + 1)) + col);
    if (c.interleaved) {
      w.c = __ldcg(reinterpret_cast<const uint4*>(u.row(r)) + col);
    } else {
      const uint2 a = __ldcg(reinterpret_cast<const uint2*>(u.row(r)) + col), b = __ldcg(reinterpret_cast<const uint2*>(v.row(r)) + col);
      w.c = make_uint4(a.x, a.y, b.x, b.y);
    }
    return w;
  }
  __device__ void fill(Stage& st) const {
    st.n = 0;
#pragma unroll
    for (int k = 0; k < kAhead; ++k) {
      if (st.walk.more()) {
        st.w[k] = load_unit(st.walk.at_r, st.walk.at_c);
        st.r[k] = st.walk.at_r;
        st.col[k] = st.walk.at_c;
        st.n = k + 1;
        st.walk.advance();
      }
    }
  }
  // Byte i of a 16-byte word.
  __device__ static uint32_t byte_of(const uint4& q, int i) {
    const uint32_t w = i < 4 ? q.x : i < 8 ? q.y : i < 12 ? q.z : q.w;
    return (w >> (8 * (i & 3))) & 0xFFu;
  }
  __device__ void store_unit(const Unit420& w, int r, int col, const uint16_t* lut) const {
    const uint32_t neutral = 128, hi = min(c.hi, 255u);
    uint32_t ym[2][4] = {}, cm[4] = {};
#pragma unroll
    for (int s = 0; s < 8; ++s) {
      const uint32_t a = byte_of(w.y0, 2 * s), b = byte_of(w.y0, 2 * s + 1), e = byte_of(w.y1, 2 * s), f = byte_of(w.y1, 2 * s + 1);
      const uint32_t oa = lut[a], ob = lut[b], oe = lut[e], of = lut[f];
      const uint32_t g = tone::chroma_scale(a + b + e + f, oa + ob + oe + of, 4, c.black, c.limit_q12);
      ym[0][s / 2] |= (oa | ob << 8) << (16 * (s & 1));
      ym[1][s / 2] |= (oe | of << 8) << (16 * (s & 1));
      if (c.interleaved) {  // U at byte 2 s, V at 2 s + 1
        const uint32_t uo = tone::scale_chroma(byte_of(w.c, 2 * s), g, neutral, c.lo, hi);
        const uint32_t vo = tone::scale_chroma(byte_of(w.c, 2 * s + 1), g, neutral, c.lo, hi);
        cm[s / 2] |= (uo | vo << 8) << (16 * (s & 1));
      } else {  // U at byte s, V at 8 + s
        cm[s / 4] |= tone::scale_chroma(byte_of(w.c, s), g, neutral, c.lo, hi) << (8 * (s & 3));
        cm[2 + s / 4] |= tone::scale_chroma(byte_of(w.c, 8 + s), g, neutral, c.lo, hi) << (8 * (s & 3));
      }
    }
    reinterpret_cast<uint4*>(y.row(2 * r))[col] = make_uint4(ym[0][0], ym[0][1], ym[0][2], ym[0][3]);
    reinterpret_cast<uint4*>(y.row(2 * r + 1))[col] = make_uint4(ym[1][0], ym[1][1], ym[1][2], ym[1][3]);
    if (c.interleaved) {
      reinterpret_cast<uint4*>(u.row(r))[col] = make_uint4(cm[0], cm[1], cm[2], cm[3]);
    } else {
      reinterpret_cast<uint2*>(u.row(r))[col] = make_uint2(cm[0], cm[1]);
      reinterpret_cast<uint2*>(v.row(r))[col] = make_uint2(cm[2], cm[3]);
    }
  }
  // Samples (cx, cy) of the rectangle [x0, x1) x [y0, y1) one by one, a grid-stride over it.
  template <class Map>
  __device__ void samples(int x0, int x1, int y0, int y1, uint32_t gid, uint32_t stride, Map&& map) const {
    const uint32_t w = static_cast<uint32_t>(max(0, x1 - x0)), n = w * static_cast<uint32_t>(max(0, y1 - y0));
    for (uint32_t i = gid; i < n; i += stride) {
      const int cx = x0 + static_cast<int>(i % w), cy = y0 + static_cast<int>(i / w);
      colour_store(colour_load(y, u, v, c, cx, cy), c, y.bit_depth, map);
    }
  }

  __device__ void load(Stage& st, uint32_t gid, uint32_t stride) const {
    st.walk = unit_walk();
    st.walk.start(gid, stride);
    fill(st);
  }
  __device__ void apply(Stage& st, const uint16_t* lut, uint32_t, uint32_t gid, uint32_t stride) const {
    auto map = [&](uint32_t i, int, int) -> uint32_t { return lut[i]; };  // 8-bit: every value has an entry
    while (st.n > 0) {
#pragma unroll
      for (int k = 0; k < kAhead; ++k)
        if (k < st.n) store_unit(st.w[k], st.r[k], st.col[k], lut);
      fill(st);
    }
    const UnitWalk whole = unit_walk();
    samples(8 * whole.cols, plan.cw, 0, whole.rows, gid, stride, map);  // past the last whole unit
    samples(0, plan.cw, whole.rows, plan.ch, gid, stride, map);         // an odd last luma row
  }
};

// The colour pass's planes, checked: luma, U and V (V = U where interleaved) and the chroma grid;
// plan.cw 0 where there is nothing to do.
template <class T>
struct ColourPlanes {
  PlaneView<T> y, u, v;
  ColourPlan plan;
};
template <class T>
Result<ColourPlanes<T>> colour_planes(const PlaneRef& luma, const ChromaPlanes& c) {
  ColourPlanes<T> p;
  p.y = luma.as_writable<T>();
  HISTEQ_TRY(check_device_plane(p.y));
  p.u = c.planes[0].as_writable<T>();
  p.v = c.interleaved ? p.u : c.planes[1].as_writable<T>();
  for (const PlaneView<T>* q : {&p.u, &p.v}) {
    if (q->bit_depth != p.y.bit_depth && !q->empty()) return HISTEQ_ERROR(Code::invalid_argument, "chroma and luma depths differ");
    if (c.planes[0].bytes_per_sample != luma.bytes_per_sample) return HISTEQ_ERROR(Code::invalid_argument, "chroma and luma sample sizes differ");
    HISTEQ_TRY(check_device_plane(*q));
  }
  if (p.y.empty()) return p;
  if (c.shift_x < 0 || c.shift_x > 1 || c.shift_y < 0 || c.shift_y > 1)
    return HISTEQ_ERROR(Code::unsupported, "the colour pass: chroma subsampled more than 2x2");
  p.plan = ColourPlan{c.interleaved ? p.u.width / 2 : p.u.width, p.u.height};
  if (p.plan.cw <= 0 || p.plan.ch <= 0) p.plan = ColourPlan{};
  return p;
}

template <class T>
Status apply_colour_device(const PlaneRef& luma, const ChromaPlanes& c, const uint16_t* d_lut, const TileLuts* tiles, int bins,
                           cudaStream_t stream) {
  auto planes = colour_planes<T>(luma, c);
  if (!planes) return planes.status();
  const auto& [y, u, v, plan] = planes.value();
  if (plan.cw <= 0) return Status::ok();
  if (plan.ch > kMaxGridRows) return HISTEQ_ERROR(Code::unsupported, "plane too tall for apply_colour_gpu");
  const dim3 grid((static_cast<unsigned>(plan.cw) + kApplyThreads - 1) / kApplyThreads, static_cast<unsigned>(plan.ch));
  if (tiles != nullptr) {
    colour_kernel<T, true><<<grid, kApplyThreads, 0, stream>>>(y, u, v, c, nullptr, *tiles, bins, plan);
  } else {
    colour_kernel<T, false><<<grid, kApplyThreads, 0, stream>>>(y, u, v, c, d_lut, TileLuts{}, bins, plan);
  }
  HISTEQ_CUDA_TRY_LAUNCH();
  return Status::ok();
}

// The fold with an apply (temporal_fold_gpu): the LUT on the luma (the fused kernel's own apply),
// or the colour pass as its applier where its units fit (8-bit 4:2:0, aligned rows); otherwise
// colour_kernel after the fold, a second launch (sample by sample in the fold was slower: Unit420).
template <class T>
Status fold_apply(FusedEqualizer& fe, const PlaneRef& luma, uint32_t weight, const TemporalFoldBuilder& builder, FoldApply apply,
                  const ChromaPlanes* chroma, const FusedOutputs& out, cudaStream_t stream) {
  if (apply == FoldApply::luma) return fe.run_with(luma.as_writable<T>(), weight, builder, stream, out);
  if (chroma == nullptr) return HISTEQ_ERROR(Code::invalid_argument, "the folded colour pass without chroma planes");
  auto planes = colour_planes<T>(luma, *chroma);
  if (!planes) return planes.status();
  if constexpr (sizeof(T) == 1) {
    const auto& [y, u, v, plan] = planes.value();
    if (plan.cw > 0 && FusedColour::units_fit(y, u, v, *chroma))
      return fe.apply_with(y, weight, builder, FusedColour{y, u, v, *chroma, plan}, stream, out);
  }
  HISTEQ_TRY(fe.count_with(luma.as_writable<T>(), weight, builder, stream, out));
  return apply_colour_device<T>(luma, *chroma, out.d_lut, nullptr, static_cast<int>(1u << luma.bit_depth), stream);
}

}  // namespace

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

Status sum_tiles_gpu(const uint32_t* d_tile_counts, int tiles, int bins, uint32_t* d_counts, cudaStream_t stream) {
  HISTEQ_TRY(check_bins(bins));
  if (d_tile_counts == nullptr || d_counts == nullptr || tiles < 1) return HISTEQ_ERROR(Code::invalid_argument, "null histograms");
  return tiles_reduce<uint32_t, uint32_t, false>(d_tile_counts, tiles, bins, d_counts, stream);
}

Status apply_tiles_gpu(const PlaneView<uint8_t>& plane, const TileLuts& t, int bins, cudaStream_t stream) {
  return apply_tiles_device(plane, t, bins, stream);
}
Status apply_tiles_gpu(const PlaneView<uint16_t>& plane, const TileLuts& t, int bins, cudaStream_t stream) {
  return apply_tiles_device(plane, t, bins, stream);
}

Status pad_reflect_gpu(const PlaneRef& in, const PlaneRef& out, cudaStream_t stream) {
  HISTEQ_TRY(check_pad(in, out, MemoryKind::device));
  return in.bytes_per_sample == 1 ? pad_reflect_device<uint8_t>(in, out, stream) : pad_reflect_device<uint16_t>(in, out, stream);
}

Status apply_colour_gpu(const PlaneRef& luma, const ChromaPlanes& chroma, const uint16_t* d_lut, const TileLuts* tiles, int bins,
                        cudaStream_t stream) {
  HISTEQ_TRY(check_bins(bins));
  if (tiles == nullptr && d_lut == nullptr) return HISTEQ_ERROR(Code::invalid_argument, "null LUT");
  if (luma.bytes_per_sample == 1) return apply_colour_device<uint8_t>(luma, chroma, d_lut, tiles, bins, stream);
  return apply_colour_device<uint16_t>(luma, chroma, d_lut, tiles, bins, stream);
}

// The most dynamic shared memory a block of `kernel` may stage entries in on this device (its
// limit less the kernel's static shared memory), raised to that once per device and kernel: the
// attribute call costs the host more than the launch, and the stage's GPU time would include the
// wait.
template <class Kernel>
static Result<size_t> staged_limit(Kernel* kernel) {
  static std::mutex mu;
  static std::map<std::pair<int, const void*>, size_t> limit;
  auto dev = cuda::device_info();
  if (!dev) return dev.status();
  std::lock_guard<std::mutex> lock(mu);
  const auto key = std::make_pair(dev->ordinal, reinterpret_cast<const void*>(kernel));
  if (auto it = limit.find(key); it != limit.end()) return it->second;
  cudaFuncAttributes attr{};
  HISTEQ_CUDA_TRY(cudaFuncGetAttributes(&attr, kernel));
  const size_t most = dev->shared_mem_per_block_optin > attr.sharedSizeBytes ? dev->shared_mem_per_block_optin - attr.sharedSizeBytes : 0;
  if (most > 0) HISTEQ_CUDA_TRY(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(most)));
  limit[key] = most;
  return most;
}

// The bytes `kernel`'s blocks stage `entries` each in, or 0 where they do not fit.
template <class Kernel>
static Result<size_t> staged_bytes(Kernel* kernel, size_t entries) {
  auto most = staged_limit(kernel);
  if (!most) return most.status();
  const size_t bytes = entries * kStagedBytes;
  return bytes <= most.value() ? bytes : 0;
}

// Clahe's cluster: kClusterBlocks blocks, each with its share of the tiles' entries staged where
// they fit (64 tiles of 256 bins: 8 a block, 24 KB), and each putting out its tiles' LUTs.
static Status temporal_cluster(const TemporalArgs& a, cudaStream_t stream) {
  constexpr auto kernel = temporal_ref_kernel<kMaxBins, kClusterBlocks>;
  const size_t per = static_cast<size_t>((a.count + kClusterBlocks - 1) / kClusterBlocks) * a.bins;
  auto staged = staged_bytes(kernel, per);
  if (!staged) return staged.status();
  cudaLaunchConfig_t config{};
  config.gridDim = dim3(kClusterBlocks);
  config.blockDim = dim3(kMaxBins);
  config.dynamicSmemBytes = staged.value();
  config.stream = stream;
  cudaLaunchAttribute cluster{};
  cluster.id = cudaLaunchAttributeClusterDimension;
  cluster.val.clusterDim.x = kClusterBlocks;
  cluster.val.clusterDim.y = 1;
  cluster.val.clusterDim.z = 1;
  config.attrs = &cluster;
  config.numAttrs = 1;
  HISTEQ_CUDA_TRY(cudaLaunchKernelEx(&config, kernel, a, staged.value() != 0));
  return Status::ok();
}

Status temporal_update_gpu(const TemporalArgs& a, cudaStream_t stream, bool cluster) {
  HISTEQ_TRY(check_temporal_args(a));
  const bool tiles = a.tile_counts != nullptr && a.extra != nullptr;
  if (tiles && cluster) {
    auto dev = cuda::device_info();
    if (!dev) return dev.status();
    if (dev->cc_major >= 9) return temporal_cluster(a, stream);
  }
  // One block: clahe measures every tile's entries, so the largest block for them (16 or 64 a
  // thread), and from shared memory where the device lets a block have them all (64 tiles of 256
  // bins: 192 KB; the search reads them half a dozen times and more).
  if (a.bins <= 256 && a.extra == nullptr) {
    temporal_ref_kernel<256, 1><<<1, 256, 0, stream>>>(a, false);
  } else {
    size_t staged = 0;
    if (tiles) {
      auto bytes = staged_bytes(temporal_ref_kernel<kMaxBins, 1>, static_cast<size_t>(a.count) * a.bins);
      if (!bytes) return bytes.status();
      staged = bytes.value();
    }
    temporal_ref_kernel<kMaxBins, 1><<<1, kMaxBins, staged, stream>>>(a, staged != 0);
  }
  HISTEQ_CUDA_TRY_LAUNCH();
  if (a.extra != nullptr) {
    temporal_tiles_kernel<<<static_cast<unsigned>(a.count), a.bins <= 256 ? 256 : kMaxBins, 0, stream>>>(a);
    HISTEQ_CUDA_TRY_LAUNCH();
  }
  return Status::ok();
}

Status temporal_fold_gpu(FusedEqualizer& fe, const PlaneRef& luma, uint32_t weight, uint32_t clip_q8, TemporalArgs a,
                         uint32_t* d_counts, cudaStream_t stream, FoldApply apply, const ChromaPlanes* chroma) {
  static_assert(kFoldMaxBins == kFoldThreads, "one bin a thread of the fused block");
  a.counts = d_counts;
  HISTEQ_TRY(check_temporal_args(a, false));
  HISTEQ_TRY(validate_lut_args(a.bins, weight));
  if (a.extra != nullptr || a.tile_counts != nullptr || a.count != 1)
    return HISTEQ_ERROR(Code::invalid_argument, "the folded temporal filter takes global mode's one LUT only");
  if (a.bins > kFoldMaxBins)
    return HISTEQ_ERROR(Code::unsupported, "the folded temporal filter takes at most " + std::to_string(kFoldMaxBins) + " bins");
  if (luma.bit_depth < 1 || luma.bit_depth > 10 || (1 << luma.bit_depth) != a.bins)
    return HISTEQ_ERROR(Code::invalid_argument, "the plane's bit depth does not match the temporal filter's bins");
  const FusedOutputs out{d_counts, a.luts};
  const TemporalFoldBuilder builder{a, clip_q8};
  if (apply != FoldApply::none) {
    if (luma.bytes_per_sample == 1) return fold_apply<uint8_t>(fe, luma, weight, builder, apply, chroma, out, stream);
    return fold_apply<uint16_t>(fe, luma, weight, builder, apply, chroma, out, stream);
  }
  if (luma.bytes_per_sample == 1) return fe.count_with(luma.as_writable<uint8_t>(), weight, builder, stream, out);
  return fe.count_with(luma.as_writable<uint16_t>(), weight, builder, stream, out);
}

}  // namespace histeq::eq
