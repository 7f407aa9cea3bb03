// tlb family: thread-local buckets (a GPU course's exercise report on atomic histogram kernels,
// "182.731 GPU Architectures and Computing, Exercise 1", §3.3 and §3.4, algorithms 3 and 4).
//
// Idea. Every thread counts its grid-stride share of the samples in its own array of 256 buckets,
// then the buckets are added to the output:
//  - tlb (§3.3, "tlr" in the report's contents): each thread adds all 256 of its buckets with global
//    atomics, starting at bucket threadIdx.x so that neighbouring threads hit different addresses:
//    threads x 256 atomics;
//  - tlb_blr (§3.4): per bin, the block's threads put their bucket in a shared array and sum it with
//    a tree reduction (log2(blockDim) halving steps), then one thread adds the block's sum with one
//    global atomic: blocks x 256 atomics.
// A bucket array indexed by the data cannot live in registers, so it is in local memory (1 KB per
// thread, cached in L1): ld.local/st.local in the hot loop are the method, not a spill, and the
// report itself names that cost. Time depends on the data (how many L1 lines a warp's buckets
// touch) and, for tlb, on the thread count.
//
// Adapted for Hopper (sm_90): the report's grid-stride loop over 32-bit ints becomes the common
// persistent traversal with 16-byte loads of 8-bit samples (several in flight), its grid the
// occupancy calculator's (honours KernelOptions::max_blocks) with a minimum of work per thread
// (policy::Tlb) so the fixed 256-bucket flush is amortized. The report's tlb_blr has no barrier
// between thread 0's last read of the shared array and the other threads' stores of the next bin
// (a race under any scheduling); a barrier closes each bin here. Buckets are 32-bit: a plane
// (< 2^32 samples) cannot overflow them.
#include "core/histogram/kernels/common.cuh"

namespace histeq::hist {
namespace {

using namespace detail;
constexpr int kBins = 256;

template <class P, bool kBlockReduce>
__global__ void __launch_bounds__(P::kThreads) tlb_kernel(PlaneGeometry g, uint32_t* __restrict__ hist) {
  uint32_t buckets[kBins];  // thread-local: local memory
#pragma unroll 16
  for (int i = 0; i < kBins; ++i) buckets[i] = 0;

  auto add = [&](uint32_t v) { ++buckets[v]; };
  UnitCursor cur = cursor_at(g, blockIdx.x * P::kThreads + threadIdx.x);
  walk<uint8_t, P::kUnroll>(g, cur, step_of(g, gridDim.x * P::kThreads), 0xFFFFFFFFu, add);

  if constexpr (!kBlockReduce) {
    for (int i = 0; i < kBins; ++i) {
      const int b = (i + threadIdx.x) & (kBins - 1);
      atomicAdd(&hist[b], buckets[b]);
    }
  } else {
    __shared__ uint32_t block_buc[P::kThreads];
    for (int b = 0; b < kBins; ++b) {
      const uint32_t sum = block_tree_sum<P::kThreads>(block_buc, buckets[b]);
      if (threadIdx.x == 0) atomicAdd(&hist[b], sum);
      __syncthreads();  // thread 0 has read the tree before the next bin overwrites it
    }
  }
}

template <class P, bool kBlockReduce>
class Tlb final : public Kernel {
 public:
  using Kernel::Kernel;
  Status run(const PlaneRef& in, const HistogramView& out, cudaStream_t stream) override {
    return launch_persistent(tlb_kernel<P, kBlockReduce>, P::kThreads, 0, P::kMinUnitsPerThread, in, out, options(), stream,
                             out.counts);
  }
};

template <class P, bool kBlockReduce>
KernelEntry tlb_entry(const char* name, const char* description, const char* section) {
  return KernelSpec(name)
      .description(description)
      .source("course exercise report 'Atomic kernels' (182.731 GPU Architectures, Exercise 1)", section)
      .bins_8bit(bins_bit(256))
      .on(Backend::gpu)
      .make<Tlb<P, kBlockReduce>>();
}

}  // namespace

KernelEntry entry_tlb() {
  return tlb_entry<policy::Tlb, false>("tlb", "thread-local buckets in local memory, each thread flushes 256 global atomics",
                          "§3.3 thread-local buckets, algorithm 3");
}
KernelEntry entry_tlb_blr() {
  return tlb_entry<policy::TlbBlr, true>("tlb_blr", "thread-local buckets, per-bin block tree reduction, 256 global atomics per block",
                         "§3.4 block-level reduction, algorithm 4");
}

}  // namespace histeq::hist
