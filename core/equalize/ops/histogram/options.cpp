// The histogram operation's controls, one spec each (controls.h: name, field, range, default,
// plain value, words, help, doc; then where it applies and how describe() words it).
#include "core/equalize/ops/histogram/options.h"

#include "core/equalize/controls.h"

namespace histeq::eq {

std::vector<Control> histogram_controls() {
  return {
      choice_spec("mode", &HistogramOptions::mode,
                  {{"global", "one curve a frame"}, {"clahe", "a curve per tile, interpolated (CLAHE)"}}, "global", "global", {},
                  "global: one LUT a frame; clahe: a LUT per tile, interpolated (Zuiderveld's CLAHE)",
                  "global: one curve a frame; clahe: a curve per tile of a grid, interpolated between the tile centres")
          .described("{} {tiles}", "global"),
      grid_spec("tiles", &HistogramOptions::tiles, {1, hist::kMaxTiles}, 8, 8, {}, "clahe: the tile grid COLSxROWS (1..32 each)",
                "clahe: the tile grid, columns x rows (clamped to the frame's size)")
          .applies_with("mode"),
  };
}

}  // namespace histeq::eq
