// The launch side of the GPU histogram kernels: grid sizing (occupancy calculator, work floor,
// test caps), the dynamic shared memory limit, the sample-type dispatch, and the one launch helper
// of the persistent-grid kernels, whole plane (launch_persistent) or tiled (launch_tiles). Private to
// core/histogram (kernels/): other modules use histogram.h, or the device-side agents in agent/.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>

#include "core/cuda/check.h"
#include "core/cuda/device.h"
#include "core/histogram/agent/plane.cuh"
#include "core/histogram/histogram.h"
#include "core/histogram/policy.h"

namespace histeq::hist::detail {

// Grid size: as many blocks as fit on the device at once (occupancy calculator, with the kernel's
// real registers and shared memory), but no more than the work needs at `min_units_per_thread`,
// and no more than opts.max_blocks when set.
template <class KernelFn>
Result<int> grid_size(KernelFn fn, int threads, size_t dyn_smem, uint32_t total_units, int min_units_per_thread,
                      const KernelOptions& opts) {
  auto dev = cuda::device_info();
  if (!dev) return dev.status();
  int per_sm = 0;
  HISTEQ_CUDA_TRY(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, fn, threads, dyn_smem));
  if (per_sm < 1) return HISTEQ_ERROR(Code::unsupported, "kernel does not fit on this device's multiprocessors");
  long blocks = static_cast<long>(per_sm) * dev->sm_count;
  const long per_block = static_cast<long>(threads) * min_units_per_thread;
  blocks = std::min(blocks, std::max(1L, (static_cast<long>(total_units) + per_block - 1) / per_block));
  if (opts.max_blocks > 0) blocks = std::min<long>(blocks, opts.max_blocks);
  return static_cast<int>(blocks);
}

// Raises a kernel's dynamic shared memory limit when it needs more than the default 48 KB.
template <class KernelFn>
Status allow_dynamic_smem(KernelFn fn, size_t bytes) {
  if (bytes <= 48 * 1024) return Status::ok();
  auto dev = cuda::device_info();
  if (!dev) return dev.status();
  if (bytes > dev->shared_mem_per_block_optin)
    return HISTEQ_ERROR(Code::unsupported, "needs " + std::to_string(bytes) + " bytes of shared memory per block, device allows " +
                                               std::to_string(dev->shared_mem_per_block_optin));
  HISTEQ_CUDA_TRY(cudaFuncSetAttribute(fn, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(bytes)));
  return Status::ok();
}

// Sample type dispatch: calls f(uint8_t{}) or f(uint16_t{}).
template <class F>
Status by_sample_type(const PlaneRef& in, F&& f) {
  if (in.bytes_per_sample == 1) return f(uint8_t{});
  return f(uint16_t{});
}

}  // namespace histeq::hist::detail

namespace histeq::hist::detail {

// The usual launch of a persistent-grid histogram kernel fn(PlaneGeometry, args...): raises the
// dynamic shared memory limit if `smem` needs it, sizes the grid with grid_size() (occupancy,
// min_units_per_thread, opts.max_blocks), zeroes the output on `stream`, then launches.
template <class... KArgs, class... Args>
Status launch_persistent(void (*fn)(PlaneGeometry, KArgs...), int threads, size_t smem, int min_units_per_thread,
                         const PlaneRef& in, const HistogramView& out, const KernelOptions& opts, cudaStream_t stream,
                         Args... args) {
  HISTEQ_TRY(allow_dynamic_smem(fn, smem));
  const PlaneGeometry g = make_geometry(in);
  auto grid = grid_size(fn, threads, smem, g.total_units(), min_units_per_thread, opts);
  if (!grid) return grid.status();
  HISTEQ_CUDA_TRY(cudaMemsetAsync(out.counts, 0, sizeof(uint32_t) * out.bins, stream));
  fn<<<*grid, threads, smem, stream>>>(g, args...);
  HISTEQ_CUDA_TRY_LAUNCH();
  return Status::ok();
}

// The units of the largest tile of `grid` over `in`: the bound the tiled launches plan every tile
// with (a row of a tile may cost one unit more than its share for alignment).
inline uint64_t largest_tile_units(const PlaneRef& in, const TileGrid& grid) {
  const uint64_t tile_w = static_cast<uint64_t>((in.width + grid.cols - 1) / grid.cols) * in.bytes_per_sample;
  return ((tile_w + policy::kUnitBytes - 1) / policy::kUnitBytes + 1) * static_cast<uint64_t>((in.height + grid.rows - 1) / grid.rows);
}

// The tiled launch of a kernel fn(TiledPlane, args...) whose blocks work on tile blockIdx.y with
// blockIdx.x / gridDim.x as their place in that tile's grid stride: the grid that grid_size() gives
// the whole plane, shared out evenly over the tiles (at least one block a tile), one launch for all
// tiles. Zeroes the grid.count() histograms on `stream` first.
template <class... KArgs, class... Args>
Status launch_tiles(void (*fn)(TiledPlane, KArgs...), int threads, size_t smem, int min_units_per_thread,
                    const PlaneRef& in, const TileGrid& grid, const HistogramView& out, const KernelOptions& opts,
                    cudaStream_t stream, Args... args) {
  HISTEQ_TRY(allow_dynamic_smem(fn, smem));
  const int tiles = grid.count();
  const uint64_t total = std::min<uint64_t>(largest_tile_units(in, grid) * static_cast<uint64_t>(tiles), 0xFFFFFFFFull);
  auto blocks = grid_size(fn, threads, smem, static_cast<uint32_t>(total), min_units_per_thread, opts);
  if (!blocks) return blocks.status();
  const unsigned per_tile = static_cast<unsigned>(std::max(1, (*blocks + tiles - 1) / tiles));
  HISTEQ_CUDA_TRY(cudaMemsetAsync(out.counts, 0, sizeof(uint32_t) * out.bins * static_cast<size_t>(tiles), stream));
  fn<<<dim3(per_tile, static_cast<unsigned>(tiles)), threads, smem, stream>>>(make_tiled(in, grid), args...);
  HISTEQ_CUDA_TRY_LAUNCH();
  return Status::ok();
}

}  // namespace histeq::hist::detail
