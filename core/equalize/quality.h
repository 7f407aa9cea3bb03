// The picture-quality controls of the equalizer: what a user sets with --mode, --tiles,
// --clip-limit, --temporal, --scene-cut, --chroma and --chroma-limit, and the player's overlay.
//
//   mode        global: one LUT for the frame (lut.h's formula: today's equalization);
//               clahe: contrast-limited adaptive equalization (Zuiderveld, "Contrast Limited
//               Adaptive Histogram Equalization", Graphics Gems IV, 1994): a LUT per tile of a
//               cols x rows grid, bilinear interpolation between the LUTs of the four nearest tile
//               centres (tone.h).
//   clip_limit  the histogram is clipped at clip_limit x (samples / bins) before its CDF, and what
//               was cut off is spread over all bins (as Zuiderveld and OpenCV's createCLAHE do), so
//               no LUT slope exceeds about clip_limit: flat regions are not stretched into noise.
//               Per tile in clahe mode, on the frame's histogram in global mode. 0 = off.
//   temporal_s  the LUTs follow the pictures through a first-order IIR filter with this time
//               constant (seconds; the frame interval comes from the frames' timestamps), reset at a
//               scene cut: when the total-variation distance between the luma histograms of two
//               consecutive frames exceeds scene_cut (0..1; 1 = never). 0 = off.
//   chroma      keep: chroma untouched (today); follow ("auto" on the command line): each chroma
//               sample's deviation from neutral is scaled by the luma gain of its co-sited luma
//               samples, (Y_out - black) / (Y_in - black), limited to [1, chroma_limit]: a
//               brightened pixel keeps (up to the limit) its saturation instead of turning grey, a
//               darkened one keeps its chroma. Saturation is chroma over luma, so scaling chroma
//               with the luma keeps it; the limit keeps chroma noise in the darkest areas (gains of
//               5 and more) from becoming colour blotches.
//   range       how the input's levels are read: auto (the frame's tag; untagged video
//               is limited range, as ffmpeg and players assume), limited or full. Every mode's
//               curves map within the nominal range: luma [16, 235] << (depth - 8) in limited
//               range, [0, max] in full range; samples outside it (sub-black, super-white) are
//               counted and map to its ends; a level above black never becomes black, nor one
//               below white white (lut.h's guard); chroma follow stays within [16, 240] likewise.
//   textbook    the classic formula (cv2.equalizeHist's, histeq's before the range-aware curves): levels
//               stretched onto 0..max whatever the range, no guard; for comparisons.
//   denoise     the temporal denoiser (denoise.h), before the curve: the luma's noise sigma in
//               levels of 255 (scaled for 10-bit), which sets its motion test; 0 = off (default:
//               docs/quality.md, "Denoiser", says why).
//
// Everything off (plain_quality()) maps within the nominal range; with textbook on as well it is
// the classic equalization, bit for bit. The integer forms the frames are computed with (clip_q8,
// cut_q16, the levels, ...) are fixed here, once, on the host, so that the CPU and the GPU compute
// identical frames (tone.h).
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include "core/cuda/status.h"
#include "core/equalize/lut.h"
#include "core/equalize/ops/apply/options.h"
#include "core/equalize/ops/denoise/options.h"
#include "core/equalize/ops/histogram/options.h"
#include "core/equalize/ops/lut/options.h"
#include "core/equalize/ops/temporal/options.h"
#include "core/histogram/histogram.h"

namespace histeq::eq {

// The settings: the composition of the operations' options (each operation's options.h, whose spec
// table says each field's range, default and plain value), so that q.clip_limit reads as before,
// plus the values of the operations outside these (params). ==, plain(), describe() and the
// defaults derive from the specs (controls.h).
struct Quality : HistogramOptions, LutOptions, TemporalOptions, ApplyOptions, DenoiseOptions {
  // The controls of operations outside the ones above (controls.h, param_spec()): name -> value;
  // a control at its default is absent.
  std::map<std::string, double> params;

  double param(const std::string& name, double fallback) const {
    const auto it = params.find(name);
    return it == params.end() ? fallback : it->second;
  }

  // Every control's value the same (the specs'), and params.
  bool operator==(const Quality& o) const noexcept;
  bool operator!=(const Quality& o) const noexcept { return !(*this == o); }
  // True for plain equalization: every control that has a plain value (its spec) is at it, those
  // that apply only with another one aside (tiles, scene cut, chroma limit), params included
  // (whatever the levels; with textbook on, the classic formula). The planner fuses only these.
  bool plain() const noexcept;
};

// Plain equalization: each control at its spec's plain value (global, no clip limit, no temporal
// filter, chroma kept, no denoiser), the others at Quality{}'s (range auto).
Quality plain_quality();
// The defaults of the command line and the player: each spec's default (chosen by the
// measurements of docs/quality.md).
Quality default_quality();

// Every control's range (controls.h): clip_limit 0 or 1..64, temporal_s 0..10, scene_cut 0..1,
// chroma_limit 1..4, denoise 0 or 0.5..20, tiles 1..hist::kMaxTiles per axis, and the ranges of the
// operations' params. Errors name the control.
Status validate(const Quality& q);

// "global", "clahe"; "keep", "auto"; "auto", "limited", "full".
const char* mode_name(Mode m) noexcept;
const char* chroma_name(ChromaMode c) noexcept;
const char* range_name(RangeMode r) noexcept;
Result<Mode> parse_mode(const std::string& s);
Result<ChromaMode> parse_chroma(const std::string& s);
Result<RangeMode> parse_range(const std::string& s);
// "8x8" -> {8, 8}
Result<hist::TileGrid> parse_tiles(const std::string& s);
// "plain" or e.g. "clahe 8x8, clip 1.1, temporal 0.35 s (cut 0.3), chroma auto (limit 1.2)", and
// ", range full" or ", textbook levels" when those are set: the specs' words (Control::brief).
std::string describe(const Quality& q);

// The integer forms (tone.h). clip_q8 = round(clip_limit * 256) (0 = off); cut_q16 =
// round(scene_cut * 65536); limit_q12 = round(chroma_limit * 4096); alpha_q16 = round((1 -
// exp(-dt / temporal_s)) * 65536), at least 1 (the filter always moves), for a frame interval dt.
uint32_t clip_q8(const Quality& q) noexcept;
uint32_t cut_q16(const Quality& q) noexcept;
uint32_t chroma_limit_q12(const Quality& q) noexcept;
uint32_t temporal_alpha_q16(double temporal_s, double dt_s) noexcept;

// The levels of a frame of `bit_depth` whose tag says full range or not (FrameContext::full_range),
// under q's range and textbook controls: the tone curves' (lut.h), the luma black the chroma gain
// is measured from, and the bounds of the scaled chroma (tone.h).
struct FrameLevels {
  Levels luma;
  uint32_t black = 16;
  uint32_t chroma_lo = 0, chroma_hi = 255;
};
FrameLevels frame_levels(const Quality& q, int bit_depth, bool tagged_full_range) noexcept;

// Clahe's tiles on a frame of width x height (tone.h, "OpenCV's tile grid"). histeq's grid: q.tiles
// clamped to at most one tile per sample, tile i of n over `size` samples from floor(i size / n).
// With the textbook levels OpenCV's: q.tiles as they are, and unless both axes are whole numbers of
// tiles the picture padded by reflection to width x height below, tiles of step samples from 0.
struct TileLayout {
  hist::TileGrid grid;
  int step_x = 0, step_y = 0;  // OpenCV's tile size; 0: histeq's grid
  int width = 0, height = 0;   // the picture the tile histograms count: the frame's, or padded
  bool padded(int frame_width, int frame_height) const noexcept { return width != frame_width || height != frame_height; }
  bool operator==(const TileLayout& o) const noexcept {
    return grid == o.grid && step_x == o.step_x && step_y == o.step_y && width == o.width && height == o.height;
  }
  bool operator!=(const TileLayout& o) const noexcept { return !(*this == o); }
};
TileLayout tile_layout(const Quality& q, int width, int height) noexcept;
// tile_layout's grid.
hist::TileGrid effective_tiles(const Quality& q, int width, int height) noexcept;

}  // namespace histeq::eq
