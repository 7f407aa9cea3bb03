// The curve's controls, one spec each (controls.h: name, field, range, default, plain value, words,
// help, doc; then how describe() words it).
#include "core/equalize/ops/lut/options.h"

#include "core/equalize/controls.h"

namespace histeq::eq {

std::vector<Control> lut_controls() {
  return {
      number_spec("clip-limit", &LutOptions::clip_limit, {1, 64, kZeroOff}, 1.1, 0, {"clip", "clip limit"},
                  "clip the histogram at X times the mean bin count before the CDF, spreading the excess "
                  "(bounds the contrast gain, so flat regions are not stretched into noise); 0 = off",
                  "the histogram clipped at this many times its mean bin count before the curve, the excess spread; 0 = off")
          .described("clip {}", "no clip"),
      choice_spec("range", &LutOptions::range,
                  {{"auto", "the video's tag (untagged: limited)"},
                   {"limited", "limited range (luma 16..235)"},
                   {"full", "full range (luma 0..max)"}},
                  "auto", "", {},
                  "how the input's levels are read: auto (the video's tag; untagged = limited, as ffmpeg and players "
                  "assume), limited (luma 16..235, x4 at 10 bits) or full (0..max); the curves stay within that range",
                  "how the input's levels are read: the video's tag (untagged: limited), limited or full range")
          .described("range {}"),
      flag_spec("textbook", &LutOptions::textbook, false, std::nullopt, {},
                "the textbook formula (cv2.equalizeHist's): levels stretched onto 0..max whatever the video's range, the "
                "darkest to 0 and the brightest to max, and clahe on OpenCV's tile grid (createCLAHE's); crushes the blacks "
                "and whites of limited-range video; for comparisons",
                "the classic formula's levels: stretched onto 0..max whatever the range, and clahe on OpenCV's tile grid "
                "(for comparisons)")
          .described("textbook levels"),
  };
}

}  // namespace histeq::eq
