#include "core/equalize/quality.h"

#include "core/cuda/numbers.h"
#include "core/equalize/controls.h"

#include <algorithm>
#include <cmath>

namespace histeq::eq {
namespace {

std::string number(double v) { return format_number(v); }

}  // namespace

Quality plain_quality() { return Quality{}; }

Quality default_quality() {
  Quality q;
  // docs/quality.md, "Choosing the defaults": sweeps over the clips of bench/make_quality_clips.py.
  //  - clip 1.1: the most contrast that keeps the noise of flat areas within 2x on every clip
  //    (1.25: 2.1x on the dark one, 1.5: 2.1-2.4x, 2: 2.5-2.9x; contrast 1.45-2.0x at 1.1);
  //  - temporal 0.35 s: the mean's flicker p99 at most the input's on every clip (trailer 0.996x,
  //    street 0.90x, dark 0.76x, cut 0.996x; 0.5 s: trailer 1.006x, 0.75 and 1 s: 1.04x: longer
  //    constants hold the offset longer after fades), while smoothing the curve's own changes;
  //  - scene cut 0.3: within the clips' shots the distance stayed below 0.07, at their hard cuts it
  //    was 0.34 and more (0.35 missed one of the trailer's); a bright block over a quarter of the
  //    picture appearing at once measures 0.25 and must not count as a cut (tests/unit);
  //  - chroma limit 1.2: colourfulness 1.03-1.2x of the input's (1.25: up to 1.31x, 1.5: 1.56x).
  q.mode = Mode::global;
  q.clip_limit = 1.1;
  q.temporal_s = 0.35;
  q.scene_cut = 0.3;
  q.chroma = ChromaMode::follow;
  q.chroma_limit = 1.2;
  return q;
}

Status validate(const Quality& q) {
  for (const Control& c : controls()) HISTEQ_TRY(check_control(c, q));
  return Status::ok();
}

const char* mode_name(Mode m) noexcept { return m == Mode::clahe ? "clahe" : "global"; }
const char* chroma_name(ChromaMode c) noexcept { return c == ChromaMode::follow ? "auto" : "keep"; }
const char* range_name(RangeMode r) noexcept {
  return r == RangeMode::limited ? "limited" : r == RangeMode::full ? "full" : "auto";
}

Result<Mode> parse_mode(const std::string& s) {
  if (s == "global") return Mode::global;
  if (s == "clahe") return Mode::clahe;
  return HISTEQ_ERROR(Code::invalid_argument, "mode must be global or clahe, not '" + s + "'");
}

Result<ChromaMode> parse_chroma(const std::string& s) {
  if (s == "keep") return ChromaMode::keep;
  if (s == "auto") return ChromaMode::follow;
  return HISTEQ_ERROR(Code::invalid_argument, "chroma must be auto or keep, not '" + s + "'");
}

Result<RangeMode> parse_range(const std::string& s) {
  if (s == "auto") return RangeMode::automatic;
  if (s == "limited") return RangeMode::limited;
  if (s == "full") return RangeMode::full;
  return HISTEQ_ERROR(Code::invalid_argument, "range must be auto, limited or full, not '" + s + "'");
}

Result<hist::TileGrid> parse_tiles(const std::string& s) {
  int c = 0, r = 0;
  HISTEQ_TRY(parse_dimensions(s, "tiles", hist::kMaxTiles, c, r));
  Quality q;
  q.tiles = {c, r};
  HISTEQ_TRY(validate(q));
  return q.tiles;
}

std::string describe(const Quality& q) {
  std::string s;
  if (q.plain()) {
    s = "plain";
  } else {
    s = mode_name(q.mode);
    if (q.mode == Mode::clahe) s += " " + std::to_string(q.tiles.cols) + "x" + std::to_string(q.tiles.rows);
    s += q.clip_limit > 0 ? ", clip " + number(q.clip_limit) : ", no clip";
    s += q.temporal_s > 0 ? ", temporal " + number(q.temporal_s) + " s (cut " + number(q.scene_cut) + ")" : ", no temporal";
    s += q.chroma == ChromaMode::follow ? ", chroma auto (limit " + number(q.chroma_limit) + ")" : ", chroma kept";
  }
  if (q.denoise > 0) s += ", denoise " + number(q.denoise);
  if (q.range != RangeMode::automatic) s += std::string(", range ") + range_name(q.range);
  if (q.textbook) s += ", textbook levels";
  for (const auto& [name, value] : q.params) s += ", " + name + " " + number(value);
  return s;
}

uint32_t clip_q8(const Quality& q) noexcept { return static_cast<uint32_t>(std::lround(q.clip_limit * 256)); }
uint32_t cut_q16(const Quality& q) noexcept { return static_cast<uint32_t>(std::lround(q.scene_cut * 65536)); }
uint32_t chroma_limit_q12(const Quality& q) noexcept { return static_cast<uint32_t>(std::lround(q.chroma_limit * 4096)); }

uint32_t temporal_alpha_q16(double temporal_s, double dt_s) noexcept {
  if (!(temporal_s > 0)) return 65536;
  const double a = 1.0 - std::exp(-dt_s / temporal_s);
  return static_cast<uint32_t>(std::clamp<long>(std::lround(a * 65536), 1, 65536));
}

FrameLevels frame_levels(const Quality& q, int bit_depth, bool tagged_full_range) noexcept {
  const bool full = q.range == RangeMode::full || (q.range == RangeMode::automatic && tagged_full_range);
  const uint32_t maxval = (1u << bit_depth) - 1u;
  FrameLevels f;
  f.luma = nominal_levels(bit_depth, full, q.textbook);
  f.black = full ? 0u : video_level(16, bit_depth);
  const bool limited_chroma = !full && !q.textbook;
  f.chroma_lo = limited_chroma ? video_level(16, bit_depth) : 0u;
  f.chroma_hi = limited_chroma ? video_level(240, bit_depth) : maxval;
  return f;
}

TileLayout tile_layout(const Quality& q, int width, int height) noexcept {
  TileLayout t;
  t.width = width;
  t.height = height;
  if (!q.textbook) {
    t.grid = {std::max(1, std::min(q.tiles.cols, width)), std::max(1, std::min(q.tiles.rows, height))};
    return t;
  }
  // OpenCV's CLAHE_Impl::apply: both axes padded, by n - size % n, unless both are whole.
  t.grid = q.tiles;
  const int cols = std::max(1, q.tiles.cols), rows = std::max(1, q.tiles.rows);
  const bool whole = width % cols == 0 && height % rows == 0;
  t.step_x = whole ? width / cols : width / cols + 1;
  t.step_y = whole ? height / rows : height / rows + 1;
  t.width = t.step_x * cols;
  t.height = t.step_y * rows;
  return t;
}

hist::TileGrid effective_tiles(const Quality& q, int width, int height) noexcept { return tile_layout(q, width, height).grid; }

}  // namespace histeq::eq
