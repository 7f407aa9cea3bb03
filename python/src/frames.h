// A frame given from Python (one plane, (y, u, v) or (y, uv)) as a histeq::Image, checked: every
// shape, dtype, device and stride error is a ValueError or TypeError naming the plane, before any
// work is queued.
#pragma once

#include <vector>

#include "arrays.h"

namespace histeq::py {

struct Frame {
  Image image;
  std::vector<ArrayView> planes;  // keeps the planes' memory alive for the call
  bool single = true;             // one array, not a tuple
};

// `what` names the frame in errors ("frame", "out").
Frame parse_frame(nb::handle frame, const char* what, const CallStream& stream);

// out= must have the frame's geometry, format and memory, and be writable.
void check_output(const Frame& in, const Frame& out);

// New arrays for the result of `frame` (a single array or a tuple, as `frame` was).
nb::object new_output(nb::handle frame, const Frame& in, const CallStream& stream);

}  // namespace histeq::py
