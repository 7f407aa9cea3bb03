// The histogram operation's options: how the frame is cut into histograms (controls.h has the
// spec format; options.cpp the spec lines). Quality (quality.h) inherits them.
#pragma once

#include <vector>

#include "core/histogram/histogram.h"

namespace histeq::eq {

struct Control;

enum class Mode { global, clahe };

struct HistogramOptions {  // the member initializers are the plain values (tests/unit: Quality{} == plain_quality())
  Mode mode = Mode::global;
  hist::TileGrid tiles{8, 8};  // clahe: the tile grid (OpenCV's default); clamped to the frame's size
};

std::vector<Control> histogram_controls();

}  // namespace histeq::eq
