// linear: one block per bin, no atomics (a GPU course's exercise report on atomic histogram kernels,
// "182.731 GPU Architectures and Computing, Exercise 1", §3.5 "One color per block", algorithm 5).
//
// Idea. Block b reads the WHOLE plane and counts only the samples that fall in bin b: every thread
// counts in a register over its block-stride share, a tree reduction in shared memory sums the
// block, and thread 0 writes bin b. No atomics and no memset (every bin is written by its block),
// but the plane is read once per bin: 256 times for an 8-bit histogram. Slow by design: the report
// keeps it "as an example for a lower bound"; histeq keeps it correct and measured, not fast.
//
// The grid is one block per bin, inherent to the method, so KernelOptions::max_blocks does not
// apply (it is ignored).
//
// Adapted for Hopper (sm_90): the report compares 32-bit colour values with blockIdx.x; here a
// sample goes through the API's binning (bin = v >> (bit_depth - log2 bins), out-of-range 16-bit
// samples skipped), so any 2..1024 bins on 8- and 16-bit planes work; 16-byte loads of pitched
// rows, several in flight; 1024-thread blocks so that the fixed grid of 256 blocks fills an
// H100/H200 (policy::Linear).
#include "core/histogram/kernels/common.cuh"

namespace histeq::hist {
namespace {

using namespace detail;
using P = policy::Linear;

template <class T>
__global__ void __launch_bounds__(P::kThreads) linear_kernel(PlaneGeometry g, BinMap m, uint32_t* __restrict__ hist) {
  __shared__ uint32_t local_sums[P::kThreads];
  const uint32_t my_bin = blockIdx.x;
  uint32_t sum = 0;
  auto count = [&](uint32_t v) { sum += ((sizeof(T) == 1 || v < m.limit) && (v >> m.shift) == my_bin) ? 1u : 0u; };
  UnitCursor cur = cursor_at(g, threadIdx.x);
  walk<T, P::kUnroll>(g, cur, step_of(g, P::kThreads), 0xFFFFFFFFu, count);
  sum = block_tree_sum<P::kThreads>(local_sums, sum);
  if (threadIdx.x == 0) hist[my_bin] = sum;
}

class Linear final : public Kernel {
 public:
  using Kernel::Kernel;
  Status run(const PlaneRef& in, const HistogramView& out, cudaStream_t stream) override {
    return by_sample_type(in, [&](auto sample) -> Status {
      using T = decltype(sample);
      linear_kernel<T><<<out.bins, P::kThreads, 0, stream>>>(make_geometry(in), make_binmap(in, out.bins), out.counts);
      HISTEQ_CUDA_TRY_LAUNCH();
      return Status::ok();
    });
  }
};

}  // namespace

KernelEntry entry_linear() {
  return KernelSpec("linear")
      .description("one block per bin reads the whole plane and counts its bin; no atomics (slow by design)")
      .source("course exercise report 'Atomic kernels' (182.731 GPU Architectures, Exercise 1)",
              "§3.5 one color per block, algorithm 5")
      .bins_8bit(kAnyBins)
      .bins_16bit(kAnyBins)
      .data_independent()
      .on(Backend::gpu)
      .make<Linear>();
}

}  // namespace histeq::hist
