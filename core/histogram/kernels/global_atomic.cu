// global_atomic: one atomicAdd on the output histogram in global memory per sample.
// Source: Wilt, The CUDA Handbook, "Privatized (per thread) histograms", the one-histogram-per-grid
// formulation; also the "original" baseline of the course exercise report.
// Modern-GPU notes: reads are 16-byte vectors in a grid-stride loop; atomics resolve in L2, so the
// time depends strongly on the content (one-value frames serialize on a single address).
#include "core/histogram/kernels/common.cuh"

namespace histeq::hist {
namespace {

using namespace detail;
using P = policy::GlobalAtomic;

template <class T>
__global__ void __launch_bounds__(P::kThreads) global_atomic_kernel(PlaneGeometry g, BinMap m, uint32_t* __restrict__ hist) {
  const uint32_t tid = blockIdx.x * blockDim.x + threadIdx.x;
  const uint32_t stride = gridDim.x * blockDim.x;
  UnitCursor cur = cursor_at(g, tid);
  auto add = [&](uint32_t v) {
    if (sizeof(T) == 1 || v < m.limit) atomicAdd(&hist[v >> m.shift], 1u);
  };
  walk<T, P::kUnroll>(g, cur, step_of(g, stride), 0xFFFFFFFFu, add);
}

class GlobalAtomic final : public Kernel {
 public:
  using Kernel::Kernel;
  Status run(const PlaneRef& in, const HistogramView& out, cudaStream_t stream) override {
    return by_sample_type(in, [&](auto sample) -> Status {
      using T = decltype(sample);
      return launch_persistent(global_atomic_kernel<T>, P::kThreads, 0, P::kMinUnitsPerThread, in, out, options(), stream,
                               make_binmap(in, out.bins), out.counts);
    });
  }
};

}  // namespace

KernelEntry entry_global_atomic() {
  return KernelSpec("global_atomic")
      .description("one global atomicAdd per sample on the output histogram")
      .source("Wilt, The CUDA Handbook (privatized histograms); course exercise 'original'", "per-grid histogram")
      .bins_8bit(kAnyBins)
      .bins_16bit(kAnyBins)
      .on(Backend::gpu)
      .make<GlobalAtomic>();
}

}  // namespace histeq::hist
