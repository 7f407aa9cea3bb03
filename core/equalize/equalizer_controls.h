// The equalizer's own controls (not an operation's): kernel, strength, backend, device. Specs of
// the same format as the operations' (controls.h), in one table that the C/C++ API and Python
// (core/api/settings.cpp), GStreamer's properties and the command line's --kernel, --strength,
// --backend (and --cpu, its shorthand) and --device derive from. Their values live in a Quality's
// params under their names (the API keeps them beside the picture settings).
#pragma once

#include <vector>

#include "core/equalize/controls.h"

namespace histeq::eq {

// kernel, strength, backend, device, in that order.
const std::vector<Control>& equalizer_controls();
// The one named `name` (a spelling find_control takes), or nullptr.
const Control* find_equalizer_control(const std::string& name);

}  // namespace histeq::eq
