// The agent of the method2 family (a public header of core/histogram, device side): the work of
// one block of Nugteren et al. 2011 §7 (thread-private 16-bit histograms in shared memory, no atomics
// in the hot loop, summed per block) in either of the paper's counter layouts, for any grid shape.
// kernels/method2_common.cuh runs it on the whole plane and on the tiles of a tiled histogram; the
// layouts and the mappings are described there. Include from .cu files only (nvcc).
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "core/histogram/agent/plane.cuh"

namespace histeq::hist::agent {

enum class Method2Layout { interleaved16, bank_private };  // the paper's layout 1, layout 2

// Barrier over the block: the block of a 32-thread mapping is one warp.
template <int kThreads>
__device__ __forceinline__ void method2_block_sync() {
  if constexpr (kThreads == 32) __syncwarp();
  else __syncthreads();
}

// Zeroes this thread's share of the counters. Layout 2: its own column. Layout 1: the two threads
// of a pair (t, t^1) share words, so lane t clears the pair's words of rows with t's parity, and the
// warp synchronizes before either counts again.
template <Method2Layout L, int kThreads, int BINS>
__device__ __forceinline__ void method2_clear(uint32_t* sh, uint32_t t) {
  if constexpr (L == Method2Layout::bank_private) {
    uint32_t* mine = sh + t;
#pragma unroll 8
    for (int j = 0; j < BINS / 2; ++j) mine[j * kThreads] = 0;
  } else {
    for (int j = t & 1; j < BINS; j += 2) sh[j * (kThreads / 2) + (t >> 1)] = 0;
    __syncwarp();
  }
}

// Adds the block's private histograms to the output, one global atomic per non-zero bin. Readers
// start at staggered columns so that a warp's 32 reads hit 32 banks.
template <Method2Layout L, int kThreads, int BINS>
__device__ __forceinline__ void method2_merge(const uint32_t* sh, uint32_t t, uint32_t* __restrict__ hist) {
  if constexpr (L == Method2Layout::bank_private) {
    constexpr int kRows = BINS / 2;
    for (int j = t; j < kRows; j += kThreads) {
      uint32_t lo = 0, hi = 0;
      const uint32_t* row = sh + j * kThreads;
#pragma unroll 8
      for (int k = 0; k < kThreads; ++k) {
        const uint32_t w = row[(k + t) & (kThreads - 1)];  // staggered: the warp reads 32 different banks
        lo += w & 0xFFFFu;
        hi += w >> 16;
      }
      if (lo) atomicAdd(&hist[2 * j], lo);
      if (hi) atomicAdd(&hist[2 * j + 1], hi);
    }
  } else {
    constexpr int kWords = kThreads / 2;      // one bin of all threads
    const uint32_t skew = (t * kWords) >> 5;  // 16 words a row: t / 2, 32 words: t; 32 banks for a warp
    for (int j = t; j < BINS; j += kThreads) {
      uint32_t lo = 0, hi = 0;
      const uint32_t* row = sh + j * kWords;
#pragma unroll 8
      for (int k = 0; k < kWords; ++k) {
        const uint32_t w = row[(k + skew) & (kWords - 1)];
        lo += w & 0xFFFFu;
        hi += w >> 16;
      }
      if (lo + hi) atomicAdd(&hist[j], lo + hi);
    }
  }
}

// The work of one block: block `block` of `blocks` in the grid stride over the plane `g`. The
// plain kernel runs it on the whole plane (block = blockIdx.x); the tiled one on tile blockIdx.y.
template <class T, int BINS, Method2Layout L, class P>
__device__ __forceinline__ void method2_block(const detail::PlaneGeometry& g, const detail::BinMap& m,
                                              uint32_t* __restrict__ hist, uint32_t block, uint32_t blocks) {
  using namespace detail;
  constexpr int kT = P::kThreads;
  static_assert(kT % 32 == 0 && (kT & (kT - 1)) == 0, "whole warps, power of two");
  static_assert(P::kStepsPerPass8 * 16 <= 65535 && P::kStepsPerPass16 * 8 <= 65535, "16-bit counters would overflow");
  extern __shared__ uint32_t sh[];  // BINS x kT 16-bit counters in the layout L
  constexpr uint32_t kPass = sizeof(T) == 1 ? P::kStepsPerPass8 : P::kStepsPerPass16;
  const uint32_t t = threadIdx.x;
  method2_clear<L, kT, BINS>(sh, t);

  // Thread 0 has the most steps; all threads run the same passes so that they can merge together.
  const BlockWalk bw = block_walk(g, block, blocks, kT);
  UnitCursor cur = bw.cur;
  const UnitStep st = bw.st;
  const uint32_t block_steps = bw.steps;
  uint32_t* mine = sh + t;                                              // layout 2: this thread's column (bank t)
  uint16_t* mine16 = reinterpret_cast<uint16_t*>(sh) + t;               // layout 1: halfword t of each row
  auto add = [&](uint32_t v) {
    if (sizeof(T) == 1 || v < m.limit) {
      const uint32_t b = v >> m.shift;
      if constexpr (L == Method2Layout::bank_private) mine[(b >> 1) * kT] += 1u << ((b & 1u) << 4);
      else ++mine16[b * kT];
    }
  };

  for (uint32_t done = 0; done < block_steps; done += kPass) {
    walk<T, P::kUnroll>(g, cur, st, min(kPass, block_steps - done), add);
    method2_block_sync<kT>();
    method2_merge<L, kT, BINS>(sh, t, hist);
    if (done + kPass >= block_steps) break;  // nothing follows the last pass: skip the clear
    method2_block_sync<kT>();
    method2_clear<L, kT, BINS>(sh, t);
  }
}

}  // namespace histeq::hist::agent
