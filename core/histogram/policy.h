// Launch policies: every tunable of every histogram kernel, in one place, per GPU architecture (as
// CUB's Policy900 and its siblings). Grids are sized at run time from the device (SM count, shared
// memory, occupancy calculator), never from a fixed block count. Each value names what chose it:
// "bench:" values were picked with `histeq bench --max-blocks ...` sweeps (docs/performance.md,
// "method2 grid sweep"; raw: docs/results/sweep_h200.csv); "sweep 1/2" values by the harness of
// bench/sweep/ (docs/performance.md, "method2_tuned sweeps"; raw: docs/results/method2-tuned/sweep*_h100.csv);
// "paper:" values are kept where the kernel must stay faithful to its paper; "not swept" says so.
//
// Architectures. Policy900 is sm_90 (H100, H200), the only architecture measured so far and the
// build's default (CMAKE_CUDA_ARCHITECTURES=90). The kernels use the names below it (policy::Method2
// etc.), which `Active` selects; a device of another architecture runs sm_90's values, untuned.
// Tuning another architecture: a PolicyNNN beside Policy900 (start from a copy), its own sweeps
// cited in it, and a run-time choice of the policy by the device's compute capability (CUB's
// ChainedPolicy) in the kernels' launch code.
#pragma once

namespace histeq::hist::policy {

// One 16-byte vector load is the unit of work of every GPU kernel: 16 8-bit or 8 16-bit samples.
constexpr int kUnitBytes = 16;

// method2_tuned (agent/method2_tuned.cuh, kernels/method2_tuned.cu): the hot loop's shape. kBits:
// counter width (8, 16 or 32 bits: lanes per SM vs flushes and instructions per sample); kIlp:
// samples of one lane read-modified-written together (independent loads, no atomics); kUnroll:
// 16-byte loads per stage; kPrefetch: the next stage is loaded before the current one is counted.
template <int kBits_, int kIlp_, int kUnroll_, bool kPrefetch_>
struct Method2TunedLoop {
  static constexpr int kBits = kBits_;
  static constexpr int kIlp = kIlp_;
  static constexpr int kUnroll = kUnroll_;
  static constexpr bool kPrefetch = kPrefetch_;
  static_assert(kBits == 8 || kBits == 16 || kBits == 32, "counters are 8, 16 or 32 bits");
  static_assert(kIlp == 1 || kIlp == 2 || kIlp == 4, "ILP groups of 1, 2 or 4 samples");
  static_assert(kUnroll >= 1 && kUnroll <= 16, "1..16 loads per stage");
};

// sm_90: H100 and H200 (every sweep cited here ran on one of them).
struct Policy900 {
  struct GlobalAtomic {
    // not swept: the kernel is bound by same-address L2 atomics, not by the launch
    static constexpr int kThreads = 256;
    static constexpr int kUnroll = 4;             // not swept: 4 loads in flight per thread (walk())
    static constexpr int kMinUnitsPerThread = 4;  // not swept: small frames use fewer blocks, not idle threads
  };

  struct BlockAtomic {
    static constexpr int kThreads = 512;  // Wilt's per-block histogram; not yet swept
    static constexpr int kUnroll = 4;     // not swept
    // bench (docs/performance.md, "method2 grid sweep", H200): block_atomic was flat from 132 to
    // 1716 blocks (9.3-9.7 us at 1080p, 416-471 us at 1 GiB), so any floor that keeps small frames
    // off idle blocks will do.
    static constexpr int kMinUnitsPerThread = 8;
  };

  // Nugteren et al. 2011 §7.3, mapping 3: layout 2, 32 threads per block. Blocks per SM come from the
  // occupancy calculator for the real shared memory of the device (not the GTX470's 48 KB).
  struct Method2 {
    static constexpr int kThreads = 32;  // paper: mapping 3 is one warp per block, one bank per thread
    static constexpr int kUnroll = 4;
    // 16-bit counters overflow past 65535. A pass is at most this many grid-stride steps per thread,
    // then the block merges its counters into the output and clears them ("bounded work per thread").
    static constexpr int kStepsPerPass8 = 65535 / 16;   // 16 samples per step: 65520 <= 65535
    static constexpr int kStepsPerPass16 = 65535 / 8;   // 8 samples per step
    // bench (docs/performance.md, "method2 grid sweep", H200): at 1080p the block merge (128 shared reads and up
    // to 256 global atomics per block) dominates, and 264 blocks (~15 units per thread) ran 18.5 us
    // against 41-48 us on the full-occupancy grid of 1716; at 1 GiB the full grid wins (881 us vs
    // 1026 us at 1056 blocks). 16 units per thread gives both.
    static constexpr int kMinUnitsPerThread = 16;
  };

  // method2_tuned and the fused equalizer (core/equalize/ops/equalize/fused_gpu.cuh). "sweep 1/2": the harness of
  // bench/sweep/ on an H100 (docs/performance.md "method2_tuned sweeps"; docs/results/method2-tuned/). Every
  // instance measured was data-independent (max/min of the medians over contents <= 1.01), so the
  // choice is by speed only.
  struct Method2Tuned {
    // 8-bit planes (256 bins: the direct layout; fewer bins: the generic one). sweep 2, worst content
    // median at 1 GiB / 8192^2: 16-bit counters, pairs (K=2), 4 loads double-buffered 529 / 42.0 us;
    // K=1 537 / 42.7; K=4 704 / 53.1; 8-bit counters (28 warps, flushes) 547 / 43.9; 32-bit counters
    // (7 warps) 738 / 55.2 at best; without double buffering 614 / 49.9.
    using Loop8 = Method2TunedLoop<16, 2, 4, true>;
    // 16-bit planes (10-bit video): 16-bit counters (32-bit ones leave one warp per SM at 1024 bins),
    // groups of 4 samples (three counting warps per SM, one per scheduler: ILP must come from inside
    // the warp). sweep 2, fused 10-bit: this loop 21.9 / 42.6 us at 1080p / 4K; K=2 21.9 / 43.4;
    // 8-bit counters (6 warps) 21.7 / 41.7: within 2%, and no flushes.
    using Loop16 = Method2TunedLoop<16, 4, 4, true>;
    // Grid: warps per SM grow until each lane has this many 16-byte units, up to what the counters
    // allow; then blocks (<= 1 per SM). See m2t::plan_for. sweep 1 (1080p, warps per SM swept with
    // one block per SM): 8 warps best (9.97 us; 4: 11.0, 14: 10.7), which 4 units per lane gives
    // (127 blocks x 8 warps); at 4K and above every value from 1 to 32 gives the largest block.
    static constexpr int kUnitsPerLane8 = 4;
    static constexpr int kUnitsPerLane16 = 4;
    // The tiled form (CLAHE; m2t::plan_tiles: the same rule on one tile, the SMs shared out among
    // the tiles). `histeq bench --tiles CxR --units-per-lane 1,2,4,8,16,32 --max-blocks 0,TILES`
    // (H200, 8-bit, medians over natural and real; docs/results/tiled-method2/sweep_*.csv):
    //   8x8   1080p: 4 units 10.0 us (1: 10.7, 8: 10.2, 16: 11.2; one block a tile 9.7)
    //         4K:    4 units 14.3 (16: 14.1; one block a tile 16.7)
    //   16x16 1080p: 4 units 11.2 (8: 13.4, 16: 16.3); 4K: 17.0, but 16 units 12.4
    //   32x32 1080p: 17.2, but 8 units 14.1; 4K: 32.1, but 8 units 25.1
    // The losses at 4 units were second waves of blocks (more tiles than SMs, a block too large to
    // be resident with the others), which plan_tiles now avoids by giving such blocks fewer warps.
    // 16-bit planes (10-bit video) take the same value, not swept.
    static constexpr int kTileUnitsPerLane8 = 4;
    static constexpr int kTileUnitsPerLane16 = 4;
    // Device-wide merge: every block adds every bin to a 32-bit accumulator with fire-and-forget
    // atomics, bins adjacent, so that the last block reads and clears it in 16-byte words. sweep 1
    // (4K / 8192^2): adjacent 13.60 / 45.63 us, 32 words apart 13.68 / 46.13, per-block partials
    // summed by the last block 48.37 at 8192^2.
    static constexpr int kAccStride = 1;
    // Planes up to L2 / kL2PrefetchFractionDen are prefetched into L2 by the bulk copy engine at the
    // start of the kernel (m2t::L2Prefetch): a few counting warps (10-bit: 3 per SM) cannot keep
    // enough loads in flight (sweep 1: 10-bit 4K at 0.56 TB/s). Not A/B-swept on the final loop.
    static constexpr int kL2PrefetchFractionDen = 2;
    // The fused equalizer: threads per block (the counting warps plus warps that only apply; not
    // swept: sweep 1's fused kernel, whose blocks had only the counting warps, applied a 10-bit 4K
    // frame in 3 warps per SM and took 72 us), units per lane (counting plan, as above) and 16-byte
    // units per apply stage (sweep 2: 4 loads 13.94 / 22.48 us at 1080p / 4K, 8 loads 14.40 / 21.97).
    static constexpr int kFusedThreads = 512;
    static constexpr int kFusedUnitsPerLane8 = 4;
    static constexpr int kFusedUnitsPerLane16 = 4;
    static constexpr int kFusedApplyUnroll8 = 8;
    static constexpr int kFusedApplyUnroll16 = 8;
  };

  // Nugteren et al. 2011 §7, mappings 1, 2 and 4 (method2_mappings.cu): the same kernel as Method2
  // with another counter layout or block size. 16-bit counters: the same pass bound as Method2.
  struct Method2Map1 {                   // layout 1 (plain 16-bit [bin][thread] array), 32 threads
    static constexpr int kThreads = 32;  // paper: table 3, mapping 1
    static constexpr int kUnroll = 4;
    static constexpr int kStepsPerPass8 = 65535 / 16;
    static constexpr int kStepsPerPass16 = 65535 / 8;
    static constexpr int kMinUnitsPerThread = 16;  // not yet swept: Method2's value (same merge per block)
  };
  struct Method2Map2 {                   // layout 1, 64 threads
    static constexpr int kThreads = 64;  // paper: table 3, mapping 2
    static constexpr int kUnroll = 4;
    static constexpr int kStepsPerPass8 = 65535 / 16;
    static constexpr int kStepsPerPass16 = 65535 / 8;
    static constexpr int kMinUnitsPerThread = 16;  // not yet swept: Method2's value
  };
  struct Method2Map4 {                   // layout 2 (one bank per thread), 64 threads
    static constexpr int kThreads = 64;  // paper: table 3, mapping 4
    static constexpr int kUnroll = 4;
    static constexpr int kStepsPerPass8 = 65535 / 16;
    static constexpr int kStepsPerPass16 = 65535 / 8;
    static constexpr int kMinUnitsPerThread = 16;  // not yet swept: Method2's value
  };

  // Podlozhnyuk 2007, histogram64: one histogram of 64 one-byte counters per thread.
  struct Podlozhnyuk64 {
    // paper: THREAD_N must be a multiple of 4 x (number of banks) for the thread-position shuffle to
    // make every counter's bank independent of its bin: 4 x 16 = 64 on G80, 4 x 32 = 128 today.
    static constexpr int kThreads = 128;
    // paper: byte counters allow at most 255 samples per thread between merges; a step is one
    // 16-byte load (16 samples), so 15 steps (240 samples) per pass.
    static constexpr int kStepsPerPass = 255 / 16;
    static constexpr int kUnroll = 5;              // a pass is 3 batches of 5 loads in flight
    static constexpr int kMinUnitsPerThread = 15;  // not yet swept: at least one full pass per thread
  };

  // Podlozhnyuk 2007, histogram256 (Nugteren et al. 2011 §4, the reference method): one histogram of
  // 32-bit tagged counters per warp.
  struct Podlozhnyuk256 {
    static constexpr int kThreads = 192;  // paper: 6 warps per block (6 KB of warp histograms)
    static constexpr int kUnroll = 4;
    static constexpr int kCountBits = 27;  // paper: 5-bit thread tag above a 27-bit count
    // A warp histogram may count at most 2^27 - 1 samples: a pass of a warp (32 lanes x 16 samples a
    // step) is bounded so, then the block flushes and clears its warp histograms.
    static constexpr int kStepsPerPass = ((1 << kCountBits) - 1) / (32 * 16);
    static constexpr int kMinUnitsPerThread = 16;  // not yet swept
    static constexpr int kMergeThreads = 256;      // paper: the merge kernel's block (one block per bin)
  };

  // Nugteren et al. 2011 §6, method1: warp-private histograms with extensions 1-3. The family's
  // defaults; each kernel has its own struct below so that a sweep can tune one without the others.
  struct Method1 {
    static constexpr int kThreads = 256;  // not yet swept (the paper gives no block size): 8 warp histograms
    static constexpr int kUnroll = 4;
    static constexpr int kCountBits = 27;  // tag loop variants: 5-bit lane tag above a 27-bit count
    static constexpr int kStepsPerPass = ((1 << kCountBits) - 1) / (32 * 16);
    static constexpr int kMinUnitsPerThread = 16;  // not yet swept
  };
  struct Method1Base : Method1 {};
  struct Method1Ext1 : Method1 {
    // A warp stages 32 x kShuffleUnits consecutive 16-byte units in shared memory, then lane i
    // histograms units i*kShuffleUnits .. +kShuffleUnits-1 (a run of 112 neighbouring samples). Odd,
    // so that the transposed 16-byte shared reads of 8 lanes fall in 8 distinct bank groups. Not swept.
    static constexpr int kShuffleUnits = 7;
  };
  struct Method1Ext2 : Method1 {};
  struct Method1Ext3 : Method1 {};
  struct Method1Ext2Ext3 : Method1 {};

  // Wilt, The CUDA Handbook, privatized (per-thread) histograms of packed 8-bit counters.
  struct Privatized8 {
    static constexpr int kThreads = 64;  // paper: listing 8 requires 64 threads (the square 64x64 layout)
    // paper: 8-bit counters take at most 255 increments between merges (listing 8 merges every 252
    // samples); 15 steps of 16 samples = 240.
    static constexpr int kStepsPerPass = 255 / 16;
    static constexpr int kUnroll = 5;              // a pass is 3 batches of 5 loads in flight
    static constexpr int kMinUnitsPerThread = 15;  // not yet swept (periodic merge): one full pass per thread
  };
  struct Privatized8Merge : Privatized8 {};
  struct Privatized8Avoid : Privatized8 {};  // grid: total units / (kThreads x kStepsPerPass), no minimum

  // Course exercise report: thread-local buckets (tlb; tlb_blr has its own struct, same values).
  struct Tlb {
    static constexpr int kThreads = 256;  // not yet swept (the report's BLOCK_SIZE is not given)
    static constexpr int kUnroll = 4;
    // not yet swept: a thread ends with 256 global atomics (tlb) or the block with 256 reductions
    // (tlb_blr), so each thread should see a few thousand samples before that.
    static constexpr int kMinUnitsPerThread = 128;
  };
  struct TlbBlr : Tlb {};  // kThreads must stay a power of two (tree reduction)

  // Course exercise report: one block per bin.
  struct Linear {
    // The grid is one block per bin (the method), so the block carries the occupancy: 256 blocks of
    // 1024 threads fill an H100/H200 (2 blocks per SM). Power of two for the tree reduction.
    static constexpr int kThreads = 1024;
    static constexpr int kUnroll = 4;
  };

  // Xu, Xu, Zhao, Hsu, "Efficient Weighted Histogramming on GPUs with CUDA": the four kernels of
  // kernels/xu_weighted.cu. Each works with or without a weight plane; "weighted" values apply when a
  // 16-byte unit of samples also loads its 16 (8-bit) or 8 (16-bit) float weights, 4 or 2 more
  // 16-byte loads, so fewer units are kept in flight.
  //
  // §4.2 collision-free: one private histogram per thread (16-bit counts, float weights) in shared
  // memory, thread t's words all in bank t, no atomics in the hot loop.
  struct XuCollisionFree {
    // 32 threads x 256 bins x 6 B = 48 KB, 4 warps per Hopper SM (228 KB): the occupancy the paper
    // ran at with 64 bins on a 48 KB GTX 580 (§6.1.1: 4 warps per SM). 512 and 1024 bins would leave
    // 2 and 1 warps per SM; those go to collision / collision_reduced.
    static constexpr int kMaxBins = 256;
    // Threads per block: kBlockBytes / (6 B x bins), a power of two in [32, 256] (256 bins: 32, 128: 64,
    // 64: 128, <= 32: 256), so small bin counts still fill an SM's threads. Not yet swept.
    static constexpr int kBlockBytes = 48 * 1024;
    static constexpr int kMinThreads = 32;   // at least a warp: bank t = thread t needs 32 columns
    static constexpr int kMaxThreads = 256;
    static constexpr int threads_for(int bins) {
      int t = kMaxThreads;
      while (t > kMinThreads && t * bins * 6 > kBlockBytes) t /= 2;
      return t;
    }
    // paper §6.1.1/table 5: unrolling (loads in flight) gave 2.2x at low occupancy, 16 4-byte loads
    // (64 B) for 16..128 bins. Here 4 16-byte loads (64 B) unweighted (8 units spilled registers in sm_90
    // ptxas); weighted 2 units = 2 x (1 + 4) loads for 8-bit samples. Not yet swept.
    static constexpr int kUnroll = 4;
    static constexpr int kUnrollWeighted = 2;
    // 16-bit counters: a pass is at most this many grid-stride steps per thread (<= 65535 samples),
    // then the block merges and clears (as method2).
    static constexpr int kStepsPerPass8 = 65535 / 16;
    static constexpr int kStepsPerPass16 = 65535 / 8;
    // A private float weight sum takes at most this many adds, then it is added to the block's double
    // sum and restarts: float error <= 63 x 2^-24 = 3.8e-6 relative (the API promises 1e-5). Lanes
    // flush at staggered counts (lane l when count + 2l = 0 mod 64), so a one-value picture does not
    // make 32 lanes flush one bin at once. A power of two in [32, 65536].
    static constexpr int kWeightChain = 64;
    static constexpr int kMinUnitsPerThread = 32;  // a block merge reads bins / 2 (1.5 x bins weighted) words per thread: amortize it; not yet swept
  };

  // §4.3 collision: one histogram per block in shared memory (32-bit counts, double weight sums),
  // shared atomics for every sample.
  struct XuCollision {
    static constexpr int kThreads = 256;       // paper §6.2.1: 8 warps per block was best (1024 bins)
    static constexpr int kUnroll = 4;          // paper: N_unroll = 1 best over 4-byte loads; here 4 16-byte loads, not yet swept
    static constexpr int kUnrollWeighted = 2;
    static constexpr int kMinUnitsPerThread = 8;
  };

  // §4.4, algorithm 2, collision-reduced: a per-thread hash buffer in shared memory (N_buffer slots of
  // value<<16 | count, and the slot's float weight sum, linear probing) regroups equal values of a
  // round before they reach the block histogram's atomics. N_buffer = the samples of one 16-byte unit
  // (16 8-bit, 8 16-bit; paper table 6: 5 to 10), one unit per round, so a slot is always free.
  struct XuCollisionReduced {
    // paper table 6 (N_warp): 2 warps for 128 and 256 bins (and fewer), 3 for 512, 6 for 1024.
    static constexpr int warps_for(int bins) { return bins >= 1024 ? 6 : bins >= 512 ? 3 : 2; }
    static constexpr int kMaxThreads = 6 * 32;
    static constexpr int kUnroll = 4;          // units (rounds) loaded ahead; not yet swept
    static constexpr int kUnrollWeighted = 2;
    static constexpr int kMinUnitsPerThread = 8;
  };

  // §4.5, table 1, hybrid: collision-free up to kCollisionFreeMaxBins bins; above, the first call
  // runs collision and the second collision_reduced, each timed with CUDA events, and later calls use
  // the faster one ("comparing the running time of them at the first round"). A change of sample
  // size, bin count, weighting or plane size starts over, and so does every kReprobeCalls-th call.
  struct XuHybrid {
    static constexpr int kCollisionFreeMaxBins = 128;  // paper table 7: collision-free for 2..128 bins; not yet measured on Hopper
    static constexpr int kReprobeCalls = 600;          // about 10 s of 60 fps video between re-timings; not yet swept
  };
};

// The policy the GPU kernels are built with (see the header comment), and the names they use.
using Active = Policy900;
using GlobalAtomic = Active::GlobalAtomic;
using BlockAtomic = Active::BlockAtomic;
using Method2 = Active::Method2;
using Method2Tuned = Active::Method2Tuned;
using Method2Map1 = Active::Method2Map1;
using Method2Map2 = Active::Method2Map2;
using Method2Map4 = Active::Method2Map4;
using Podlozhnyuk64 = Active::Podlozhnyuk64;
using Podlozhnyuk256 = Active::Podlozhnyuk256;
using Method1 = Active::Method1;
using Method1Base = Active::Method1Base;
using Method1Ext1 = Active::Method1Ext1;
using Method1Ext2 = Active::Method1Ext2;
using Method1Ext3 = Active::Method1Ext3;
using Method1Ext2Ext3 = Active::Method1Ext2Ext3;
using Privatized8 = Active::Privatized8;
using Privatized8Merge = Active::Privatized8Merge;
using Privatized8Avoid = Active::Privatized8Avoid;
using Tlb = Active::Tlb;
using TlbBlr = Active::TlbBlr;
using Linear = Active::Linear;
using XuCollisionFree = Active::XuCollisionFree;
using XuCollision = Active::XuCollision;
using XuCollisionReduced = Active::XuCollisionReduced;
using XuHybrid = Active::XuHybrid;

struct Cub {
  // cub::DeviceHistogram::HistogramEven picks its own tuning; temp storage is kept between calls.
};

struct CpuParallel {
  // bench (H100 host, 16 cores, docs/results/cpu-histogram, `histeq bench --kernel
  // cpu_parallel --sizes 1080p,4k`, with the 64-bit byte loop): 64 KiB (16 threads at 1080p)
  // 224 us against 507-519 us at 256 KiB (8 threads); 4K 739-789 against 895-963 us.
  static constexpr long kMinBytesPerThread = 1L << 16;
};

}  // namespace histeq::hist::policy
