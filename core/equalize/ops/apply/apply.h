// The apply operation's functions: a LUT on a luma plane, clahe's tile LUTs blended per pixel, and
// the colour pass (the luma mapped, the chroma scaled by its gain; tone.h). CPU forms
// (apply_cpu.cpp) take host planes and are synchronous; GPU forms (apply_gpu.cu) take device
// planes and are asynchronous on `stream`. Both give identical frames. All return a Status for bad
// arguments and never print.
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

// GPU: apply d_lut to a device plane in place, on `stream`. Any pitch and alignment; 16-byte
// vector accesses where the rows allow them. Only the `width` samples of each row are touched.
Status apply_lut_gpu(const PlaneView<uint8_t>& plane, const uint16_t* d_lut, int bins, cudaStream_t stream);
Status apply_lut_gpu(const PlaneView<uint16_t>& plane, const uint16_t* d_lut, int bins, cudaStream_t stream, int shift = 0);

// table[x] = tone::axis_entry(x, n, size, step) for x in [0, size): the interpolation of one axis
// (host); step: OpenCV's tile size (TileLayout), 0 for histeq's grid.
void axis_table(int size, int n, uint32_t* table, int step = 0);

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

}  // namespace histeq::eq
