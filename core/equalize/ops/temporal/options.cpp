// The temporal filter's controls, one spec each (controls.h: name, field, range, default, plain
// value, words, help, doc; then where it applies and how describe() words it).
#include "core/equalize/ops/temporal/options.h"

#include "core/equalize/controls.h"

namespace histeq::eq {

std::vector<Control> temporal_controls() {
  return {
      number_spec("temporal", &TemporalOptions::temporal_s, {0, 10, kZeroOff}, 0.35, 0, {"", "temporal time constant", "s"},
                  "smooth the LUT over time with this time constant in seconds (no pumping); 0 = off",
                  "the curve through a first-order filter over time with this time constant, reset at scene cuts; 0 = off")
          .described("temporal {} s (cut {scene-cut})", "no temporal"),
      number_spec("scene-cut", &TemporalOptions::scene_cut, {0, 1}, 0.3, 0.3, {"cut", "scene-cut threshold"},
                  "with --temporal: a histogram distance (0..1) between consecutive frames above this is a cut, "
                  "where the filter starts over (1 = never)",
                  "with temporal: the histogram distance between consecutive frames above which the filter starts over; 1 = never")
          .applies_with("temporal"),
  };
}

}  // namespace histeq::eq
