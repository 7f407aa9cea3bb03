#include "core/equalize/quality.h"

#include "core/cuda/numbers.h"
#include "core/equalize/controls.h"

#include <algorithm>
#include <cmath>

namespace histeq::eq {
bool Quality::operator==(const Quality& o) const noexcept {
  bool same = params == o.params;
  for_each_control([&](const Control& c) { same = same && same_value(c, *this, o); });
  return same;
}

bool Quality::plain() const noexcept {
  bool plain = true;
  for_each_control([&](const Control& c) { plain = plain && (!c.plain_value || !c.needs.empty() || c.get(*this) == *c.plain_value); });
  return plain;
}

Quality plain_quality() {
  Quality q;
  make_plain(q);
  return q;
}

// Each spec's default: docs/quality.md, "Choosing the defaults", has the sweeps over the clips of
// bench/make_quality_clips.py that chose clip 1.1, temporal 0.35 s, scene cut 0.3 and chroma limit
// 1.2 (the reasons are beside the specs' lines' measurements there).
Quality default_quality() {
  Quality q;
  for_each_control([&q](const Control& c) { c.set(q, c.fallback); });
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

namespace {

// A spec's describe() words with "{}" its value and "{name}" another control's.
std::string brief_of(const Control& c, const std::string& words, const Quality& q) {
  if (words.empty()) return c.name + " " + control_text(c, q);
  std::string s;
  for (size_t i = 0; i < words.size(); ++i) {
    const size_t close = words[i] == '{' ? words.find('}', i) : std::string::npos;
    if (close == std::string::npos) {
      s += words[i];
      continue;
    }
    const std::string other = words.substr(i + 1, close - i - 1);
    const Control* o = other.empty() ? &c : nullptr;
    for_each_control([&](const Control& x) { o = o == nullptr && x.name == other ? &x : o; });
    s += o != nullptr ? control_text(*o, q) : "?";
    i = close;
  }
  return s;
}

}  // namespace

// The controls that make settings plain are worded first (those with brief_off: "global, no clip,
// ..."), or "plain" when they all are; then each other control off its plain settings' value.
std::string describe(const Quality& q) {
  const bool plain = q.plain();
  const Quality p = plain_quality();
  std::string s = plain ? "plain" : "";
  auto add = [&s](const std::string& w) { s += (s.empty() ? "" : ", ") + w; };
  for_each_control([&](const Control& c) {
    if (plain || c.brief_off.empty()) return;
    const bool on = !c.plain_value || c.get(q) != *c.plain_value;
    add(on ? brief_of(c, c.brief, q) : c.brief_off);
  });
  for_each_control([&](const Control& c) {
    if (!c.brief_off.empty() || !c.needs.empty() || same_value(c, q, p)) return;
    add(brief_of(c, c.brief, q));
  });
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
