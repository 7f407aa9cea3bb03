// The apply operation's controls, one spec each (controls.h: name, field, range, default, plain
// value, words, help, doc; then where it applies and how describe() words it).
#include "core/equalize/ops/apply/options.h"

#include "core/equalize/controls.h"

namespace histeq::eq {

std::vector<Control> apply_controls() {
  return {
      choice_spec("chroma", &ApplyOptions::chroma,
                  {{"keep", "chroma untouched"}, {"auto", "chroma scaled with the luma's gain (saturation kept)"}}, "auto", "keep",
                  {}, "auto: scale chroma with the luma gain so colours keep their saturation; keep: chroma untouched",
                  "auto: chroma scaled with the luma's gain, so colours keep their saturation; keep: chroma untouched")
          .described("chroma {} (limit {chroma-limit})", "chroma kept"),
      number_spec("chroma-limit", &ApplyOptions::chroma_limit, {1, 4}, 1.2, 1.2, {"", "chroma limit"},
                  "with --chroma auto: the most chroma is scaled up (never down), 1..4", "with chroma auto: the largest chroma gain")
          .applies_with("chroma")
          .alias("limit"),  // its configuration key until it took its name ("limit" beside clip-limit was ambiguous)
  };
}

}  // namespace histeq::eq
