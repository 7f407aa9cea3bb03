// The temporal filter's options (controls.h has the spec format; options.cpp the spec lines).
// Quality (quality.h) inherits them.
#pragma once

#include <vector>

namespace histeq::eq {

struct Control;

struct TemporalOptions {  // the member initializers are the plain values
  double temporal_s = 0;  // 0 = off; else the IIR time constant in seconds
  double scene_cut = 0.3;  // total-variation distance 0..1 (docs/quality.md has the measurement)
};

std::vector<Control> temporal_controls();

}  // namespace histeq::eq
