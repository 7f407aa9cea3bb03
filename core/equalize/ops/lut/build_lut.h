// The lut operation's functions: the curve from a histogram (lut.h's formula), plain, clipped
// (tone.h's clip and shadow floor) or per clahe tile. CPU forms (lut_cpu.cpp) take host memory and
// are synchronous; GPU forms (lut_gpu.cu) take device pointers and are asynchronous on `stream`.
// Both give identical LUTs. All return a Status for bad arguments and never print.
//
//   bins   = 2^bit_depth of the plane (256 for 8-bit, 1024 for 10-bit): one bin per value.
//   lut    = `bins` uint16_t entries, each in [0, bins - 1].
//   levels = what the curve maps onto (lut.h: the video's nominal range, or the textbook 0..max).
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "core/cuda/status.h"
#include "core/equalize/lut.h"
#include "core/histogram/histogram.h"
#include "core/image/plane.h"

namespace histeq::image {
class ForkJoin;
}

namespace histeq::eq {

// Quantizes a strength in [0, 1] to the integer weight both sides use: round(s * 65536).
// Out-of-range or NaN strengths are an invalid_argument error.
Result<uint32_t> strength_weight(double strength);

// Checks bins (a power of two in 2..1024) and weight (<= kWeightOne).
Status validate_lut_args(int bins, uint32_t weight);
// Checks levels for `bins`: lo <= hi <= bins - 1.
Status validate_levels(int bins, const Levels& levels);

// lut[v] for v in [0, bins) from counts[0, bins) (host memory), within `levels`.
Status build_lut(const uint32_t* counts, int bins, uint32_t weight, const Levels& levels, uint16_t* lut);
// The same with the textbook levels (textbook_levels(bins - 1)): the classic formula, cv2.equalizeHist's.
Status build_lut(const uint32_t* counts, int bins, uint32_t weight, uint16_t* lut);

// GPU: d_lut[v] from d_counts (both device memory), one block, on `stream`; without levels, the
// textbook ones.
Status build_lut_gpu(const uint32_t* d_counts, int bins, uint32_t weight, const Levels& levels, uint16_t* d_lut,
                     cudaStream_t stream);
Status build_lut_gpu(const uint32_t* d_counts, int bins, uint32_t weight, uint16_t* d_lut, cudaStream_t stream);

// The global LUT from a histogram clipped at clip_q8 / 256 x the mean bin count, its excess spread
// over all bins (tone.h), then lut.h's formula. clip_q8 = 0: build_lut / build_lut_gpu exactly.
Status build_lut_clipped(const uint32_t* counts, int bins, uint32_t weight, uint32_t clip_q8, const Levels& levels, uint16_t* lut);
Status build_lut_clipped_gpu(const uint32_t* d_counts, int bins, uint32_t weight, uint32_t clip_q8, const Levels& levels,
                             uint16_t* d_lut, cudaStream_t stream);

// CLAHE: `tiles` LUTs (tone.h's tile formula, clipped when clip_q8 > 0, blended by weight) from
// `tiles` histograms, tile-major, bins entries each; and mean_lut, the rounded mean of the tile
// LUTs (what a display shows as "the" LUT of a tiled frame). With a pool, the tiles are shared
// over its threads (the same LUTs).
Status build_tile_luts(const uint32_t* tile_counts, int tiles, int bins, uint32_t weight, uint32_t clip_q8, const Levels& levels,
                       uint16_t* tile_luts, uint16_t* mean_lut, image::ForkJoin* pool = nullptr);
Status build_tile_luts_gpu(const uint32_t* d_tile_counts, int tiles, int bins, uint32_t weight, uint32_t clip_q8,
                           const Levels& levels, uint16_t* d_tile_luts, uint16_t* d_mean_lut, cudaStream_t stream);

}  // namespace histeq::eq
