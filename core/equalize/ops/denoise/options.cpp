// The temporal denoiser's control (controls.h: name, field, range, default, plain value, words,
// help, doc). Plain equalization has it off, yet --plain leaves it to --denoise.
#include "core/equalize/ops/denoise/options.h"

#include "core/equalize/controls.h"

namespace histeq::eq {

std::vector<Control> denoise_controls() {
  return {
      number_spec("denoise", &DenoiseOptions::denoise, {0.5, 20, kZeroOff}, 0, 0, {"", "denoise", "levels"},
                  "temporal denoiser before the curve (motion-adaptive, so pans are not smeared): the noise sigma in "
                  "levels of 255 (e.g. 3 for dim camera footage; 0.5..20), 0 = off (the default: it helps noisy dark "
                  "footage only, docs/quality.md)",
                  "the temporal denoiser's noise sigma in levels of 255 (scaled for 10-bit), before the histogram; 0 = off")
          .free_under_plain(),
  };
}

}  // namespace histeq::eq
