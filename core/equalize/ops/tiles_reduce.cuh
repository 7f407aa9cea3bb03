// Sums or rounded means over the tiles of a clahe frame, one value a bin: the frame's histogram from
// the tile histograms (ops/histogram/, sum_tiles_gpu) and the mean of the tile LUTs (ops/lut/,
// build_tile_luts_gpu). Device code for the operations' .cu files; asynchronous on `stream`.
#pragma once

#include <cuda_runtime_api.h>

#include "core/cuda/check.h"

namespace histeq::eq {

// out[v] = sum over tiles (uint32 counts), or the rounded mean (uint16 LUTs). A block takes
// kReduceBins bins and spreads the tiles over kReduceSlices slices of threads, then sums the
// slices in shared memory: one thread a bin walking every tile took 4.3-5.1 us for 64 tiles at
// 1080p, 2.8-3.1 us this way (Nsight Compute, H200; docs/performance.md, "method2_tuned's tiled form").
constexpr int kReduceBins = 32, kReduceSlices = 16;

template <class In, class Out, bool kMean>
__global__ void __launch_bounds__(kReduceBins * kReduceSlices)
    tiles_reduce_kernel(const In* __restrict__ in, int tiles, int bins, Out* __restrict__ out) {
  __shared__ uint32_t part[kReduceSlices][kReduceBins + 1];
  const int b = static_cast<int>(threadIdx.x) % kReduceBins, slice = static_cast<int>(threadIdx.x) / kReduceBins;
  const int v = static_cast<int>(blockIdx.x) * kReduceBins + b;
  uint32_t sum = 0;
  if (v < bins)
    for (int t = slice; t < tiles; t += kReduceSlices) sum += in[static_cast<size_t>(t) * bins + v];
  part[slice][b] = sum;
  __syncthreads();
  if (slice != 0 || v >= bins) return;
  for (int s = 1; s < kReduceSlices; ++s) sum += part[s][b];
  out[v] = static_cast<Out>(kMean ? (sum + static_cast<uint32_t>(tiles) / 2) / static_cast<uint32_t>(tiles) : sum);
}

template <class In, class Out, bool kMean>
Status tiles_reduce(const In* in, int tiles, int bins, Out* out, cudaStream_t stream) {
  tiles_reduce_kernel<In, Out, kMean>
      <<<(bins + kReduceBins - 1) / kReduceBins, kReduceBins * kReduceSlices, 0, stream>>>(in, tiles, bins, out);
  HISTEQ_CUDA_TRY_LAUNCH();
  return Status::ok();
}

}  // namespace histeq::eq
