// The temporal operation's functions: tone.h's filter through time on a frame's LUTs, and global
// mode's fold of the curve into the fused count's launch. CPU form (temporal_cpu.cpp) on host
// memory, synchronous; GPU forms (temporal_gpu.cu) on device memory, asynchronous on `stream`.
// Both give identical LUTs. All return a Status for bad arguments and never print.
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

#include "core/equalize/ops/apply/apply.h"  // ChromaPlanes, for the fold

namespace histeq::eq {

class FusedEqualizer;  // ops/equalize/fused_gpu.h

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
