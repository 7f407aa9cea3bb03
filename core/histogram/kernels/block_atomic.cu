// block_atomic: one histogram per block in shared memory, updated with shared-memory atomics, then
// one global atomicAdd per non-zero bin.
// Source: Wilt, The CUDA Handbook, "Privatized (per thread) histograms", the one-histogram-per-block
// formulation (shared atomics); the course exercise report's "block_partition".
// Modern-GPU notes: since Maxwell, shared atomics are native instructions (not lock loops), so this
// is fast on most content; identical samples in a warp still serialize on one bank address.
// Persistent grid sized by the occupancy calculator; 16-byte loads. Tiled histograms (CLAHE): the
// same block work (agent/block_atomic.cuh) with gridDim.y = the tiles, each block on its tile's
// sub-plane.
#include "core/histogram/agent/block_atomic.cuh"
#include "core/histogram/kernels/common.cuh"

namespace histeq::hist {
namespace {

using namespace detail;
using P = policy::BlockAtomic;

template <class T>
__global__ void __launch_bounds__(P::kThreads) block_atomic_kernel(PlaneGeometry g, BinMap m, int bins,
                                                                   uint32_t* __restrict__ hist) {
  agent::block_atomic_block<P, T>(g, m, bins, hist, blockIdx.x, gridDim.x);
}

// Tiled histograms: tile blockIdx.y into its own histogram, all tiles in one launch.
template <class T>
__global__ void __launch_bounds__(P::kThreads) block_atomic_tiles_kernel(TiledPlane tp, BinMap m, int bins,
                                                                         uint32_t* __restrict__ hist) {
  agent::block_atomic_block<P, T>(tile_geometry(tp, blockIdx.y), m, bins, hist + static_cast<size_t>(blockIdx.y) * bins,
                                  blockIdx.x, gridDim.x);
}

class BlockAtomic final : public Kernel {
 public:
  using Kernel::Kernel;
  Status run(const PlaneRef& in, const HistogramView& out, cudaStream_t stream) override {
    return by_sample_type(in, [&](auto sample) -> Status {
      using T = decltype(sample);
      return launch_persistent(block_atomic_kernel<T>, P::kThreads, sizeof(uint32_t) * out.bins, P::kMinUnitsPerThread, in,
                               out, options(), stream, make_binmap(in, out.bins), out.bins, out.counts);
    });
  }
  Status run_tiles(const PlaneRef& in, const TileGrid& grid, const HistogramView& out, cudaStream_t stream) override {
    return by_sample_type(in, [&](auto sample) -> Status {
      using T = decltype(sample);
      return launch_tiles(block_atomic_tiles_kernel<T>, P::kThreads, sizeof(uint32_t) * out.bins, P::kMinUnitsPerThread, in,
                          grid, out, options(), stream, make_binmap(in, out.bins), out.bins, out.counts);
    });
  }
};

}  // namespace

KernelEntry entry_block_atomic() {
  return KernelSpec("block_atomic")
      .description("shared-memory atomics per block, one global atomic per non-zero bin")
      .source("Wilt, The CUDA Handbook (privatized histograms); course exercise 'block_partition'", "per-block histogram")
      .bins_8bit(kAnyBins)
      .bins_16bit(kAnyBins)
      .tiles()
      .on(Backend::gpu)
      .make<BlockAtomic>();
}

}  // namespace histeq::hist
