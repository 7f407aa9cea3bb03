// The histogram operation's clahe helpers: the frame's histogram from the tile histograms, and the
// textbook clahe's padded picture. CPU forms (tiles_cpu.cpp) on host memory, synchronous; GPU forms
// (tiles_gpu.cu) on device memory, asynchronous on `stream`. All return a Status, never print.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "core/cuda/status.h"
#include "core/equalize/lut.h"
#include "core/histogram/histogram.h"
#include "core/image/plane.h"

namespace histeq::eq {

// counts[v] = the sum over the tiles of tile_counts[t * bins + v]: the frame's histogram.
Status sum_tiles(const uint32_t* tile_counts, int tiles, int bins, uint32_t* counts);
Status sum_tiles_gpu(const uint32_t* d_tile_counts, int tiles, int bins, uint32_t* d_counts, cudaStream_t stream);

// `out` = `in` extended to out's size (at least in's on both axes; the same sample size and memory)
// by reflection past its last column and row (tone::reflect_101: OpenCV's BORDER_REFLECT_101), the
// picture the textbook clahe's tiles count (TileLayout). Host planes / device planes on `stream`.
Status pad_reflect(const PlaneRef& in, const PlaneRef& out);
Status pad_reflect_gpu(const PlaneRef& in, const PlaneRef& out, cudaStream_t stream);
// The argument checks both make (planes of `memory`).
Status check_pad(const PlaneRef& in, const PlaneRef& out, MemoryKind memory);

}  // namespace histeq::eq
