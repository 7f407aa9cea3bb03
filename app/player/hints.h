// The player's hints for the controls: how the overlay draws each one and which key toggles it,
// keyed by the control's name. The controls themselves (name, type, range, default, plain value,
// what they apply with) are core's specs (core/equalize/controls.h); these are the player's only.
// A control without a row gets a default widget (its own row labelled with its name, a free slider
// over its range, no key), so an operation plugs in without a line here.
#pragma once

#include <string>
#include <vector>

#include "core/cuda/status.h"
#include "core/equalize/controls.h"

namespace histeq::app::player {

struct ControlHints {
  std::string control;  // the control's name
  // The overlay row's label ("" = on the previous control's row).
  std::string label;
  double step = 0;        // the slider's step (0: free)
  double slider_max = 0;  // the slider's end (0: the control's max)
  std::string format;     // the slider's printf format for the value ("" = "%.2f", a grid "%d")
  std::string top_label;  // the text at the slider's top ("never"; "" = the value)
  std::string key, key_help;  // the toggle key (mpv's input.conf name) and its line in the keys panel
  // A number that 0 turns off: what the key turns it on at when neither the settings before nor
  // the defaults have it on (0: never the case).
  double on_value = 0;
};

// The table, one row a control.
const std::vector<ControlHints>& control_hints();
// c's row, or the default one (labelled with c's name).
ControlHints hints_of(const eq::Control& c);
// Every row names a control of `table` and no control has two rows; the error names the row.
Status check_hints(const std::vector<ControlHints>& hints, const std::vector<eq::Control>& table);

}  // namespace histeq::app::player
