// The method2 kernel of Nugteren et al. 2011 §7 (thread-private 16-bit histograms in shared memory,
// no atomics in the hot loop, summed per block), parameterized by the paper's two counter layouts
// and the block size, i.e. its four mappings (table 3, figures 10-13). method2.cu registers mapping
// 3, method2_mappings.cu mappings 1, 2 and 4. Internal to core/histogram; included by those two
// files only (its kernels live in each includer's anonymous namespace).
//
// Layout 1 ("interleaved16", figures 10-11): a plain 16-bit array [bin][thread]: thread t's counter
//   of bin b is halfword b * THREADS + t. Two neighbouring threads share a 32-bit word, and which
//   bank a thread hits depends on its bin: bank conflicts depend on the data.
// Layout 2 ("bank_private", figures 12-13): word (b / 2) * THREADS + t holds thread t's bins b & ~1
//   (low half) and b | 1 (high half), so thread t's counters all live in bank t % 32: a warp's 32
//   increments hit 32 banks whatever the data.
//
// Common to all mappings (adapted for today's GPUs, see method2.cu): blocks per SM from the
// occupancy calculator for the device's real shared memory; 16-byte loads, several in flight;
// passes of at most 65535 samples per thread (16-bit counters), each followed by the block merge
// (one global atomic per non-zero bin) and a clear; 16-bit planes with 1024 bins use the same code.
// Tiled histograms (CLAHE): the same block work (agent/method2.cuh) in a second launch shape,
// gridDim.y = the tiles, each block on its tile's sub-plane (method2_tiles_kernel); the paper's
// kernel is unchanged.
#pragma once

#include "core/histogram/agent/method2.cuh"
#include "core/histogram/kernels/common.cuh"

namespace histeq::hist {
namespace {

using agent::Method2Layout;

template <class T, int BINS, Method2Layout L, class P>
__global__ void __launch_bounds__(P::kThreads) method2_kernel(detail::PlaneGeometry g, detail::BinMap m,
                                                              uint32_t* __restrict__ hist) {
  agent::method2_block<T, BINS, L, P>(g, m, hist, blockIdx.x, gridDim.x);
}

// Tiled histograms (compute_tiles): the same block work on tile blockIdx.y, into its histogram.
template <class T, int BINS, Method2Layout L, class P>
__global__ void __launch_bounds__(P::kThreads) method2_tiles_kernel(detail::TiledPlane tp, detail::BinMap m,
                                                                    uint32_t* __restrict__ hist) {
  agent::method2_block<T, BINS, L, P>(detail::tile_geometry(tp, blockIdx.y), m, hist + static_cast<size_t>(blockIdx.y) * BINS,
                               blockIdx.x, gridDim.x);
}

template <class T, int BINS, Method2Layout L, class P>
Status method2_launch(const PlaneRef& in, const HistogramView& out, const KernelOptions& opts, cudaStream_t stream) {
  constexpr size_t smem = sizeof(uint16_t) * BINS * P::kThreads;
  return detail::launch_persistent(method2_kernel<T, BINS, L, P>, P::kThreads, smem, P::kMinUnitsPerThread, in, out,
                                   opts, stream, detail::make_binmap(in, out.bins), out.counts);
}

template <class T, int BINS, Method2Layout L, class P>
Status method2_launch_tiles(const PlaneRef& in, const TileGrid& grid, const HistogramView& out, const KernelOptions& opts,
                            cudaStream_t stream) {
  constexpr size_t smem = sizeof(uint16_t) * BINS * P::kThreads;
  return detail::launch_tiles(method2_tiles_kernel<T, BINS, L, P>, P::kThreads, smem, P::kMinUnitsPerThread, in, grid, out,
                              opts, stream, detail::make_binmap(in, out.bins), out.counts);
}

template <Method2Layout L, class P>
class Method2Kernel final : public Kernel {
 public:
  using Kernel::Kernel;
  Status run(const PlaneRef& in, const HistogramView& out, cudaStream_t stream) override {
    if (in.bytes_per_sample == 1) return method2_launch<uint8_t, 256, L, P>(in, out, options(), stream);
    if (out.bins == 256) return method2_launch<uint16_t, 256, L, P>(in, out, options(), stream);
    return method2_launch<uint16_t, 1024, L, P>(in, out, options(), stream);
  }
  Status run_tiles(const PlaneRef& in, const TileGrid& grid, const HistogramView& out, cudaStream_t stream) override {
    if (in.bytes_per_sample == 1) return method2_launch_tiles<uint8_t, 256, L, P>(in, grid, out, options(), stream);
    if (out.bins == 256) return method2_launch_tiles<uint16_t, 256, L, P>(in, grid, out, options(), stream);
    return method2_launch_tiles<uint16_t, 1024, L, P>(in, grid, out, options(), stream);
  }
};

template <Method2Layout L, class P>
KernelEntry method2_entry(const char* name, const char* description, const char* section) {
  return KernelSpec(name)
      .description(description)
      .source("Nugteren et al. 2011, High performance predictable histogramming on GPUs", section)
      .bins_8bit(bins_bit(256))
      .bins_16bit(bins_bit(256) | bins_bit(1024))
      .data_independent(L == Method2Layout::bank_private)
      .tiles()
      .on(Backend::gpu)
      .make<Method2Kernel<L, P>>();
}

}  // namespace
}  // namespace histeq::hist
