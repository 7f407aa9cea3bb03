// Launch policies: every tunable of every histogram kernel, in one place (as CUB's policy structs).
// Grids are sized at run time from the device (SM count, shared memory, occupancy calculator), never
// from a fixed block count. Each value names what chose it. "bench:" values were picked with
// `histeq bench --max-blocks ...` sweeps on an H200 (docs/performance.md has the run); "paper:"
// values are kept where the kernel must stay faithful to its paper.
#pragma once

namespace histeq::hist::policy {

// One 16-byte vector load is the unit of work of every GPU kernel: 16 8-bit or 8 16-bit samples.
constexpr int kUnitBytes = 16;

struct GlobalAtomic {
  static constexpr int kThreads = 256;          // not swept: the kernel is bound by same-address L2 atomics, not by the launch
  static constexpr int kUnroll = 4;             // 4 loads in flight per thread (HOPPER.md: several loads before first use)
  static constexpr int kMinUnitsPerThread = 4;  // small frames use fewer blocks rather than idle threads
};

struct BlockAtomic {
  static constexpr int kThreads = 512;           // Wilt's per-block histogram; not yet swept (see docs/performance.md)
  static constexpr int kUnroll = 4;
  static constexpr int kMinUnitsPerThread = 8;   // bench (grid sweep, H200): flat from 264 to 1716 blocks at 1080p and 1 GiB
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
  // bench (grid sweep, H200, docs/performance.md): at 1080p the block merge (128 shared reads and up
  // to 256 global atomics per block) dominates, and 264 blocks (~15 units per thread) ran 18.5 us
  // against 41-48 us on the full-occupancy grid of 1716; at 1 GiB the full grid wins (881 us vs
  // 1026 us at 1056 blocks). 16 units per thread gives both.
  static constexpr int kMinUnitsPerThread = 16;
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

struct Cub {
  // cub::DeviceHistogram::HistogramEven picks its own tuning; temp storage is kept between calls.
};

struct CpuParallel {
  static constexpr long kMinBytesPerThread = 1L << 18;  // below 256 KiB a thread costs more than it saves
};

}  // namespace histeq::hist::policy
