// The agent of block_atomic (a public header of core/histogram, device side): the work of one block
// of a per-block shared-memory histogram (Wilt, The CUDA Handbook), for any grid shape. The
// registry's kernels run it on the whole plane (block = blockIdx.x of gridDim.x) and on the tiles of
// a tiled histogram (one tile per blockIdx.y); a fused kernel may run it on whatever share of a plane
// its blocks own. Include from .cu files only (nvcc).
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "core/histogram/agent/plane.cuh"

namespace histeq::hist::agent {

// Block `block` of `blocks` in the grid stride over `g` adds its samples to hist[0, bins) (global,
// zeroed by the caller): shared-memory atomics into the block's histogram, then one global atomic
// per non-zero bin. P: the policy (kUnroll loads in flight per thread, e.g. policy::BlockAtomic).
// Dynamic shared memory: bins words. Every thread of the block must call it (it has barriers).
template <class P, class T>
__device__ __forceinline__ void block_atomic_block(const detail::PlaneGeometry& g, const detail::BinMap& m, int bins,
                                                   uint32_t* __restrict__ hist, uint32_t block, uint32_t blocks) {
  using namespace detail;
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

}  // namespace histeq::hist::agent
