// The temporal operation on the GPU: tone.h's filter with the same integer steps as
// temporal_cpu.cpp. The histogram's figures, the scene cut, every LUT's state and the brightness
// offset: one block (global mode), a cluster of 8 that also puts out the tile LUTs (clahe, sm_90+),
// else one block, then one block per tile LUT. Global mode's fold: the clipped LUT and the filter
// in the fused count's last block (temporal_fold_gpu), with the luma's or the colour pass's apply
// in the same launch (FusedColour, ops/apply/colour_device.cuh).
#include <map>
#include <mutex>
#include <cooperative_groups.h>
#include <cub/block/block_reduce.cuh>
#include <cub/block/block_scan.cuh>

#include "core/cuda/check.h"
#include "core/cuda/device.h"
#include "core/equalize/ops/apply/colour_device.cuh"
#include "core/equalize/ops/equalize/fused_gpu.cuh"
#include "core/equalize/ops/lut/build_lut.h"
#include "core/equalize/ops/lut/lut_device.cuh"
#include "core/equalize/ops/temporal/temporal.h"
#include "core/equalize/tone.h"

namespace histeq::eq {
namespace {

// Clahe's measure on sm_90 and later: a cluster of this many blocks, each with its share of the
// tiles, summing through distributed shared memory. One block took 2.5 us a walk over 64 x 256
// entries at 16 a thread (issue-bound in one SM), and a frame takes seven to nine walks. Swept on
// an H200 (quality --bench, clahe 8x8 + every control, its temporal stage at 1080p;
// docs/results/hold-cluster/cluster_size_sweep.txt): 2 blocks 39.9 us, 4 30.8, 8 29.1, 16 40.1
// (more blocks, dearer barriers and remote reads than the walk they share).
constexpr int kClusterBlocks = 8;

// The entries the brightness is measured on (temporal_cpu.cpp's Measure): the reference LUT's,
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
// uniform), as temporal_cpu.cpp's Measure: mean() sums every entry at one offset; last_at_most
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
// above and lut_gpu.cu's). The same steps as clipped_lut_kernel (lut_gpu.cu) then
// temporal_ref_kernel<.., 1>: the same LUT.
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
