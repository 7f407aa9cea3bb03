// block_atomic: one histogram per block in shared memory, updated with shared-memory atomics, then
// one global atomicAdd per non-zero bin.
// Source: Wilt, The CUDA Handbook, "Privatized (per thread) histograms", the one-histogram-per-block
// formulation (shared atomics); the course exercise report's "block_partition".
// Modern-GPU notes: since Maxwell, shared atomics are native instructions (not lock loops), so this
// is fast on most content; identical samples in a warp still serialize on one bank address.
// Persistent grid sized by the occupancy calculator; 16-byte loads. Tiled histograms (CLAHE): the
// same block work with gridDim.y = the tiles, each block on its tile's sub-plane.
#include "core/histogram/kernels/common.cuh"

namespace histeq::hist {
namespace {

using namespace detail;
using P = policy::BlockAtomic;

// Block `block` of `blocks` in the grid stride over `g`: the whole plane (blockIdx.x) or a tile.
template <class T>
__device__ __forceinline__ void block_atomic_block(const PlaneGeometry& g, const BinMap& m, int bins,
                                                   uint32_t* __restrict__ hist, uint32_t block, uint32_t blocks) {
  extern __shared__ uint32_t sh[];
  for (int b = threadIdx.x; b < bins; b += blockDim.x) sh[b] = 0;
  __syncthreads();

  const uint32_t tid = block * blockDim.x + threadIdx.x;
  UnitCursor cur = cursor_at(g, tid);
  auto add = [&](uint32_t v) {
    if (sizeof(T) == 1 || v < m.limit) atomicAdd(&sh[v >> m.shift], 1u);
  };
  walk<T, P::kUnroll>(g, cur, step_of(g, blocks * blockDim.x), 0xFFFFFFFFu, add);
  __syncthreads();

  for (int b = threadIdx.x; b < bins; b += blockDim.x)
    if (const uint32_t c = sh[b]) atomicAdd(&hist[b], c);
}

template <class T>
__global__ void __launch_bounds__(P::kThreads) block_atomic_kernel(PlaneGeometry g, BinMap m, int bins,
                                                                   uint32_t* __restrict__ hist) {
  block_atomic_block<T>(g, m, bins, hist, blockIdx.x, gridDim.x);
}

// Tiled histograms: tile blockIdx.y into its own histogram, all tiles in one launch.
template <class T>
__global__ void __launch_bounds__(P::kThreads) block_atomic_tiles_kernel(TiledPlane tp, BinMap m, int bins,
                                                                         uint32_t* __restrict__ hist) {
  block_atomic_block<T>(tile_geometry(tp, blockIdx.y), m, bins, hist + static_cast<size_t>(blockIdx.y) * bins, blockIdx.x,
                        gridDim.x);
}

class BlockAtomic final : public Kernel {
 public:
  using Kernel::Kernel;
  Status run(const PlaneRef& in, const HistogramView& out, cudaStream_t stream) override {
    return by_sample_type(in, [&](auto sample) -> Status {
      using T = decltype(sample);
      const PlaneGeometry g = make_geometry(in);
      const size_t smem = sizeof(uint32_t) * out.bins;
      auto grid = grid_size(block_atomic_kernel<T>, P::kThreads, smem, g.total_units(), P::kMinUnitsPerThread, options());
      if (!grid) return grid.status();
      HISTEQ_CUDA_TRY(cudaMemsetAsync(out.counts, 0, sizeof(uint32_t) * out.bins, stream));
      block_atomic_kernel<T><<<*grid, P::kThreads, smem, stream>>>(g, make_binmap(in, out.bins), out.bins, out.counts);
      HISTEQ_CUDA_TRY_LAUNCH();
      return Status::ok();
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
