// Launch policies: every tunable of every histogram kernel, in one place (as CUB's policy structs).
// Grids are sized at run time from the device (SM count, shared memory, occupancy calculator), never
// from a fixed block count. Each value names what chose it. "bench:" values were picked with
// `histeq bench` on an H100 (see docs/performance.md for the run); paper values are kept where the
// kernel must stay faithful to its paper.
#pragma once

namespace histeq::hist::policy {

// One 16-byte vector load is the unit of work of every GPU kernel: 16 8-bit or 8 16-bit samples.
constexpr int kUnitBytes = 16;

struct GlobalAtomic {
  static constexpr int kThreads = 256;          // bench: 128..512 within noise; contention-bound anyway
  static constexpr int kUnroll = 4;             // 4 loads in flight per thread (HOPPER.md: several loads before first use)
  static constexpr int kMinUnitsPerThread = 4;  // small frames use fewer blocks rather than idle threads
};

struct BlockAtomic {
  static constexpr int kThreads = 512;           // bench: 512 beat 256 by a few % at 1080p on random data
  static constexpr int kUnroll = 4;
  static constexpr int kMinUnitsPerThread = 8;   // amortizes the per-block zero + merge of the bins
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
  static constexpr int kMinUnitsPerThread = 2;        // bench: see docs/performance.md, method2 grid sweep
};

struct Cub {
  // cub::DeviceHistogram::HistogramEven picks its own tuning; temp storage is kept between calls.
};

struct CpuParallel {
  static constexpr long kMinBytesPerThread = 1L << 18;  // below 256 KiB a thread costs more than it saves
};

}  // namespace histeq::hist::policy
