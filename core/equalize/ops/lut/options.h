// The curve's options: the clip limit and the levels (controls.h has the spec format; options.cpp
// the spec lines). Quality (quality.h) inherits them.
#pragma once

#include <vector>

namespace histeq::eq {

struct Control;

enum class RangeMode { automatic, limited, full };

struct LutOptions {  // the member initializers are the plain values
  double clip_limit = 0;  // 0 = off; else >= 1 (below 1 every bin would be clipped)
  RangeMode range = RangeMode::automatic;
  bool textbook = false;
};

std::vector<Control> lut_controls();

}  // namespace histeq::eq
