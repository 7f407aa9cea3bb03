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

struct Cub {
  // cub::DeviceHistogram::HistogramEven picks its own tuning; temp storage is kept between calls.
};

struct CpuParallel {
  static constexpr long kMinBytesPerThread = 1L << 18;  // below 256 KiB a thread costs more than it saves
};

}  // namespace histeq::hist::policy
