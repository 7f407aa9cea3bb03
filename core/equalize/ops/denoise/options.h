// The temporal denoiser's options (controls.h has the spec format; options.cpp the spec line).
// Quality (quality.h) inherits them.
#pragma once

#include <vector>

namespace histeq::eq {

struct Control;

struct DenoiseOptions {  // the member initializer is the plain value
  double denoise = 0;  // 0 = off; else the noise sigma, 0.5..20 levels of 255
};

// The noise sigma the denoiser is switched on with where no value is given (the player's key, the
// bench's case): the middle of the dark footage's 3..6 levels (docs/quality.md, "Denoiser").
constexpr double kDenoiseOn = 4;

std::vector<Control> denoise_controls();

}  // namespace histeq::eq
