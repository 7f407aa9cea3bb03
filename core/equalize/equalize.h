// Histogram equalization of a luma plane: CDF -> LUT -> apply, on the CPU or on the GPU, with the
// same integer formula (lut.h), so that both give bit-identical frames.
//
//   bins   = 2^bit_depth of the plane (256 for 8-bit, 1024 for 10-bit): one bin per value.
//   lut    = `bins` uint16_t entries, each in [0, bins - 1].
//   levels = what the curve maps onto (lut.h: the video's nominal range, or the textbook 0..max).
//
// CPU functions are synchronous and need no CUDA device. GPU functions take device pointers and
// are asynchronous on `stream`; build_lut_gpu reads the histogram on the device, so frame data
// never makes a host round trip. All return a Status for bad arguments and never print.
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

class FusedEqualizer;  // fused_gpu.h

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

// plane[x, y] = lut[plane[x, y]] for samples < bins (others unchanged), in place, host plane.
// Only the `width` samples of each row are touched, never the padding. The host loops here and
// below take an optional pool (image/fork_join.h): rows are split over its threads (the caller's
// thread included; run() from one thread at a time); null: the caller's thread only.
Status apply_lut(const PlaneView<uint8_t>& plane, const uint16_t* lut, int bins, image::ForkJoin* pool = nullptr);
// 16-bit samples; `shift` > 0 for samples stored in the high bits (P010: shift 6): the table is
// indexed by v >> shift and its entry goes back to the high bits (the low bits are kept).
Status apply_lut(const PlaneView<uint16_t>& plane, const uint16_t* lut, int bins, int shift = 0, image::ForkJoin* pool = nullptr);
// The same from `in` into `out` (host planes of one size; `in` unchanged unless it is `out`): one
// pass where a copy then the in-place apply would make two.
Status apply_lut(const PlaneView<const uint8_t>& in, const PlaneView<uint8_t>& out, const uint16_t* lut, int bins,
                 image::ForkJoin* pool = nullptr);
Status apply_lut(const PlaneView<const uint16_t>& in, const PlaneView<uint16_t>& out, const uint16_t* lut, int bins, int shift = 0,
                 image::ForkJoin* pool = nullptr);

namespace detail {
// The 8-bit host apply has an AVX-512 VBMI path, chosen at run time; tests compare it with the
// plain loop.
bool apply_lut_has_simd();
Status apply_lut_scalar(const PlaneView<uint8_t>& plane, const uint16_t* lut, int bins);
// out[x] = table[in[x]] for n samples with that path (in may be out); false, having done nothing,
// on a CPU without it. For the colour pass's rows.
bool apply_row_simd(const uint8_t* in, uint8_t* out, int n, const uint8_t* table);
}  // namespace detail

// GPU: d_lut[v] from d_counts (both device memory), one block, on `stream`; without levels, the
// textbook ones.
Status build_lut_gpu(const uint32_t* d_counts, int bins, uint32_t weight, const Levels& levels, uint16_t* d_lut,
                     cudaStream_t stream);
Status build_lut_gpu(const uint32_t* d_counts, int bins, uint32_t weight, uint16_t* d_lut, cudaStream_t stream);

// GPU: apply d_lut to a device plane in place, on `stream`. Any pitch and alignment; 16-byte
// vector accesses where the rows allow them. Only the `width` samples of each row are touched.
Status apply_lut_gpu(const PlaneView<uint8_t>& plane, const uint16_t* d_lut, int bins, cudaStream_t stream);
Status apply_lut_gpu(const PlaneView<uint16_t>& plane, const uint16_t* d_lut, int bins, cudaStream_t stream, int shift = 0);

// ---------------------------------------------------------------------------------------------
// The picture-quality controls (quality.h), with the formulas of tone.h. Each function has a CPU
// form (host pointers, synchronous) and a GPU form (device pointers, asynchronous on `stream`);
// both give identical results.

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

// counts[v] = the sum over the tiles of tile_counts[t * bins + v]: the frame's histogram.
Status sum_tiles(const uint32_t* tile_counts, int tiles, int bins, uint32_t* counts);
Status sum_tiles_gpu(const uint32_t* d_tile_counts, int tiles, int bins, uint32_t* d_counts, cudaStream_t stream);

// table[x] = tone::axis_entry(x, n, size, step) for x in [0, size): the interpolation of one axis
// (host); step: OpenCV's tile size (TileLayout), 0 for histeq's grid.
void axis_table(int size, int n, uint32_t* table, int step = 0);

// `out` = `in` extended to out's size (at least in's on both axes; the same sample size and memory)
// by reflection past its last column and row (tone::reflect_101: OpenCV's BORDER_REFLECT_101), the
// picture the textbook clahe's tiles count (TileLayout). Host planes / device planes on `stream`.
Status pad_reflect(const PlaneRef& in, const PlaneRef& out);
Status pad_reflect_gpu(const PlaneRef& in, const PlaneRef& out, cudaStream_t stream);
// The argument checks both make (planes of `memory`).
Status check_pad(const PlaneRef& in, const PlaneRef& out, MemoryKind memory);

// The tile LUTs of a frame and where each pixel finds them (memory of the plane they map).
struct TileLuts {
  const uint16_t* luts = nullptr;  // grid.count() LUTs of `bins` entries, tile-major
  hist::TileGrid grid;
  const uint32_t* x_table = nullptr;  // plane width entries (axis_table)
  const uint32_t* y_table = nullptr;  // plane height entries
  int shift = 0;                      // samples in the high bits (P010: 6): the LUTs map v >> shift
};

// plane[x, y] = tone::tile_map(...) for samples < bins (others unchanged), in place; only the
// samples of each row are touched.
Status apply_tiles(const PlaneView<uint8_t>& plane, const TileLuts& t, int bins, image::ForkJoin* pool = nullptr);
Status apply_tiles(const PlaneView<uint16_t>& plane, const TileLuts& t, int bins, image::ForkJoin* pool = nullptr);
// The same from `in` into `out` (host planes of one size), as apply_lut's two-plane form.
Status apply_tiles(const PlaneView<const uint8_t>& in, const PlaneView<uint8_t>& out, const TileLuts& t, int bins,
                   image::ForkJoin* pool = nullptr);
Status apply_tiles(const PlaneView<const uint16_t>& in, const PlaneView<uint16_t>& out, const TileLuts& t, int bins,
                   image::ForkJoin* pool = nullptr);
Status apply_tiles_gpu(const PlaneView<uint8_t>& plane, const TileLuts& t, int bins, cudaStream_t stream);
Status apply_tiles_gpu(const PlaneView<uint16_t>& plane, const TileLuts& t, int bins, cudaStream_t stream);

// The chroma planes of a frame for apply_colour: planar U and V, or one interleaved UV plane
// (semi-planar, in chroma[0]), with the subsampling and the levels of tone.h's chroma formula.
struct ChromaPlanes {
  PlaneRef planes[2];          // planar: U, V; semi-planar: UV in planes[0]
  bool interleaved = false;
  int shift_x = 1, shift_y = 1;  // log2 subsampling
  uint32_t black = 16;           // luma black level (0 in full range)
  uint32_t limit_q12 = 4915;     // chroma_limit in Q12 (1.2)
  uint32_t lo = 0, hi = 0xFFFFu; // the chroma's nominal range, unshifted (tone.h); hi above maxval means maxval
  int shift = 0;                 // luma and chroma samples in the high bits (P010: 6); black is unshifted
};

// One pass over the frame: every luma sample mapped (by `lut`, or by `tiles` when it is not null),
// and every chroma sample's deviation from neutral scaled by the luma gain of its co-sited luma
// samples (tone.h). Luma and chroma in place, in the same memory.
Status apply_colour(const PlaneRef& luma, const ChromaPlanes& chroma, const uint16_t* lut, const TileLuts* tiles, int bins,
                    image::ForkJoin* pool = nullptr);
Status apply_colour_gpu(const PlaneRef& luma, const ChromaPlanes& chroma, const uint16_t* d_lut, const TileLuts* tiles, int bins,
                        cudaStream_t stream);

// The temporal filter of a frame (tone.h): the scene-cut test, the filtered curves and the
// brightness limit, in place on `count` LUTs at `luts` (bins entries each) and, when `extra` is not
// null, one more LUT there (clahe: the mean of the tile LUTs, which the brightness limit measures;
// else LUT 0). state holds (count + 1 if extra) x bins entries. prev_* are what the previous frame
// left, next_* receive this frame's (never the same buffers): its normalized histogram (Q16) and
// the scalars (kTemporalScalars). restart: no previous frame to follow (the first one, after a reset, or after a
// change of the settings): everything starts from these LUTs.
// The scalars: the brightness offset c, the output mean u, the input mean m (Q12), 1 when the
// curve started over (a cut), frames since the last cut, the input mean's change (Q12, signed).
constexpr int kTemporalScalars = 6;
struct TemporalArgs {
  const uint32_t* counts = nullptr;  // the frame's histogram (bins)
  int bins = 256;
  uint16_t* luts = nullptr;
  int count = 1;
  uint16_t* extra = nullptr;
  // Clahe, optional: the tiles' histograms (count x bins, tile-major, summing to counts). When given,
  // the brightness limit measures the mean the tiles put out (every tile LUT's entries, rounded as
  // applied, weighted by its own tile's histogram) rather than through the extra LUT's.
  const uint32_t* tile_counts = nullptr;
  int32_t* state = nullptr;
  const uint32_t* prev_hist = nullptr;
  uint32_t* next_hist = nullptr;
  const int32_t* prev_scalars = nullptr;
  int32_t* next_scalars = nullptr;
  bool restart = true;
  Levels levels;                     // the LUTs' levels (lut.h): entries stay in [lo, hi], the guard kept
  uint32_t cut_q16 = 65536;
  uint32_t alpha_q16 = 65536;
};
// pool: the per-LUT loops over its threads (null: the caller's only); the same values either way.
Status temporal_update(const TemporalArgs& a, image::ForkJoin* pool = nullptr);
// The argument checks both forms make (bins, buffers, the extra LUT of several). counts_in: the
// histogram a.counts is read (not by temporal_fold_gpu, which counts the plane itself).
Status check_temporal_args(const TemporalArgs& a, bool counts_in = true);
// cluster: clahe's measure (tile_counts given) spreads over a thread-block cluster on devices that
// have them (sm_90 and later); false keeps it in one block, as on older devices (the tests run
// both). The same values either way.
Status temporal_update_gpu(const TemporalArgs& a, cudaStream_t stream, bool cluster = true);

// What temporal_fold_gpu does with the curve in its launch: nothing (the plane is counted, not
// changed), the LUT on the luma (apply_lut_gpu's), or the colour pass (apply_colour_gpu's: the
// luma mapped, the chroma scaled by its gain; samples in the low bits).
enum class FoldApply { none, luma, colour };

// Global mode's histogram, clipped LUT (build_lut_clipped_gpu) and temporal filter
// (temporal_update_gpu), and with `apply` the curve's apply, in one launch: the last block of the
// fused equalizer's count (FusedEqualizer::count_with, apply_with) builds the curve in its shared
// memory while the other blocks load what they apply. `luma` (device, 2^bit_depth = a.bins <=
// kFoldMaxBins, samples in the low bits) is counted; its histogram goes to d_counts (may be null),
// the filtered LUT to a.luts; a.counts is not read. One LUT: a.count 1, no extra, no tile counts.
// chroma: the colour pass's planes (FoldApply::colour). The same values as hist::compute,
// build_lut_clipped_gpu, temporal_update_gpu and the apply in turn; fe's calls must be ordered
// (fused_gpu.h).
constexpr int kFoldMaxBins = 512;  // one bin a thread of the fused block
Status temporal_fold_gpu(FusedEqualizer& fe, const PlaneRef& luma, uint32_t weight, uint32_t clip_q8, TemporalArgs a,
                         uint32_t* d_counts, cudaStream_t stream, FoldApply apply = FoldApply::none,
                         const ChromaPlanes* chroma = nullptr);

}  // namespace histeq::eq
