// The apply operation's options: what happens to the chroma (controls.h has the spec format;
// options.cpp the spec lines). Quality (quality.h) inherits them.
#pragma once

#include <vector>

namespace histeq::eq {

struct Control;

enum class ChromaMode { keep, follow };

struct ApplyOptions {  // the member initializers are the plain values
  ChromaMode chroma = ChromaMode::keep;
  double chroma_limit = 1.2;  // >= 1
};

std::vector<Control> apply_controls();

}  // namespace histeq::eq
