// method2: thread-private histograms (Nugteren, van den Braak, Corporaal, Mesman, "High performance
// predictable histogramming on GPUs", GPGPU-4 2011, §7, mapping 3 = §7.3, table 3, figure 12).
//
// Idea. Every thread owns a whole histogram of 16-bit counters in shared memory, so the hot loop
// has no atomics and no collisions: its cost does not depend on the picture ("data-independent").
// Layout 2 with 32 threads (mapping 3): the block is one warp and thread t's counters all live in
// bank t. Two 16-bit counters share a 32-bit word: word (b/2)*32 + t holds bins b&~1 (low half)
// and b|1 (high half) of thread t, so a warp's 32 increments hit 32 distinct banks whatever the data.
// After its work the block sums the 32 private histograms (staggered column start so the 32 readers
// hit 32 banks) and adds each non-zero bin to the output with one global atomic.
//
// Adapted for today's GPUs:
//  - shared memory per SM comes from the device: the occupancy calculator places as many 32-thread
//    blocks per SM as the real shared memory allows (13 on Hopper's 228 KB, vs 3 on the GTX470);
//  - 16-byte vector loads, several in flight (the paper grouped data as 32-bit elements);
//  - the increment is one 32-bit add of 1 << 16*(b&1) rather than a 16-bit read-modify-write;
//  - overflow: a thread handles at most 65535 samples per pass (policy::Method2::kStepsPerPass*),
//    then the block merges and clears its counters and goes on, so any plane size is exact;
//  - 16-bit planes (10-bit video) with 1024 bins: the same layout, 64 KB of shared memory per block.
//
// The kernel is shared with the other three mappings (method2_common.cuh, method2_mappings.cu).
#include "core/histogram/kernels/method2_common.cuh"

namespace histeq::hist {

static_assert(policy::Method2::kThreads == 32, "mapping 3 is one warp per block: one shared-memory bank per thread");

KernelEntry entry_method2() {
  return method2_entry<Method2Layout::bank_private, policy::Method2>(
      "method2", "thread-private 16-bit histograms, one bank per thread, no atomics in the hot loop (the paper's mapping 3)",
      "§7.3 mapping 3 (layout 2, 32 threads)");
}

}  // namespace histeq::hist
