// method2 mappings 1, 2 and 4: the thread-private histograms of method2 with the other counter
// layouts and block sizes that Nugteren et al. explore (Nugteren, van den Braak, Corporaal, Mesman,
// "High performance predictable histogramming on GPUs", GPGPU-4 2011, §7.1, §7.2, §7.4, table 3,
// figures 10, 11 and 13). Mapping 3 is `method2` itself (method2.cu); all four share the kernel of
// method2_common.cuh, which describes both layouts.
//
//  - method2_map1 (§7.1): layout 1, 32 threads. The plain 16-bit array [bin][thread] (figure 10):
//    threads t and t^1 share a word, and a thread's bank depends on its bin's parity, so two
//    threads of the warp conflict when they hit the same bank in different rows: data-dependent.
//  - method2_map2 (§7.2): layout 1, 64 threads (figure 11): each warp's threads use 16 banks, two
//    threads per bank, a conflict whenever their bins differ.
//  - method2_map4 (§7.4): layout 2, 64 threads (figure 13): thread t owns bank t % 32; threads t and
//    t + 32 share a bank but sit in different warps.
//
// Adapted for Hopper (sm_90), besides what method2.cu lists for all mappings:
//  - shared memory is 228 KB per SM, not 48 KB: the paper's 3 blocks of 32 threads (1 of 64) per SM
//    become as many as the occupancy calculator allows (16 KB / 32 KB a block for 8-bit planes);
//  - the GTX470's shared memory served one half-warp per cycle at half clock and two schedulers
//    shared it, so the paper counts conflicts across half-warps and warps. Today a warp's 32 lanes
//    are served together and only lanes of the same instruction conflict: mapping 4's inter-warp
//    sharing costs nothing (it is data-independent like mapping 3), mapping 2's two threads per
//    bank still conflict within a warp;
//  - layout 1's counters are 16-bit read-modify-writes (ld/st.shared.u16), as "requesting a 16-bit
//    array" gives; two lanes writing the two halves of one word in the same instruction are both
//    kept (sub-word stores), so the layout needs no atomics.
#include "core/histogram/kernels/method2_common.cuh"

namespace histeq::hist {

KernelEntry entry_method2_map1() {
  return method2_entry<Method2Layout::interleaved16, policy::Method2Map1>(
      "method2_map1", "method2 with layout 1 (plain 16-bit [bin][thread] array), 32 threads", "§7.1 mapping 1 (layout 1, 32 threads)");
}
KernelEntry entry_method2_map2() {
  return method2_entry<Method2Layout::interleaved16, policy::Method2Map2>(
      "method2_map2", "method2 with layout 1, 64 threads (two threads per bank)", "§7.2 mapping 2 (layout 1, 64 threads)");
}
KernelEntry entry_method2_map4() {
  return method2_entry<Method2Layout::bank_private, policy::Method2Map4>(
      "method2_map4", "method2 with layout 2 (one bank per thread), 64 threads", "§7.4 mapping 4 (layout 2, 64 threads)");
}

}  // namespace histeq::hist
