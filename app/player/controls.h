// The player's commands and their keys, the scripted key presses of --keys (tests drive the
// window through the same path as the keyboard), the kernel menu and kernel cycling. No SDL and no
// ImGui here: the headless player and the unit tests use it too.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/cuda/status.h"
#include "core/equalize/controls.h"
#include "core/equalize/quality.h"
#include "core/pipeline/equalizer.h"
#include "core/video/frame.h"

namespace histeq::app::player {

enum class Command {
  pause,         // space: pause / play
  step,          // .: one frame forward (pauses)
  seek_back,     // left: 5 s back
  seek_forward,  // right: 5 s forward
  next_kernel,   // k
  prev_kernel,   // K
  overlay,       // o: show / hide the overlay
  split,         // b: split view on / off
  control,       // a control's key (the control table's player_key: g mode, l clip limit, ...): toggle it
  plain,         // p: plain equalization / back to the settings before
  compare,       // v: the split's left side: the input / settings B
  swap,          // w: swap the settings of the two sides (A <-> B)
  screenshot,    // s: PNG of the window
  fullscreen,    // f
  mute,          // m: sound off / on
  volume_down,   // 9: 5% quieter
  volume_up,     // 0: 5% louder (up to 130%)
  help,          // h: the keyboard panel
  quit,          // q
  // Scripted only (--keys), with an argument: what drag and drop and the Export dialog do.
  open_file,     // open=PATH: play PATH
  export_file,   // export=PATH: export the current file to PATH in the background
};

struct CommandInfo {
  Command command;
  std::string key;      // as the help panel shows it, and as --keys names it ("space", "left", "k", "K", ...)
  std::string what;     // one line for the help panel
  std::string control;  // Command::control: the control's name (eq::Control::name)
};
// Every command, in the order of the help panel: the player's own, with the toggle keys of the
// control table (core/equalize/controls.h) after the split view's.
std::vector<CommandInfo> commands();
// The control toggled by `key` ("g"), or nullptr.
const CommandInfo* control_key(const std::vector<CommandInfo>& cmds, const std::string& key);

constexpr double kSeekStepS = 5.0;

// One scripted key press: `command` as if its key were pressed just before window frame `tick`
// (1-based: the first frame the window draws is tick 1) is built.
struct ScriptedKey {
  int64_t tick = 0;
  Command command = Command::pause;
  std::string arg;  // open_file, export_file: the path; control: the control's name
};
// --keys "space,5:o,k,20:s": comma-separated items [TICK:]KEY, KEY as in commands() ("space",
// "left", "right", ".", "k", "K", "o", ...), or open=PATH / export=PATH (paths without commas).
// An item without TICK comes one frame after the previous item (the first at tick 1). Ticks may
// not go back. Errors name the bad item.
Result<std::vector<ScriptedKey>> parse_key_script(const std::string& script);

// What a control's key does to quality settings: a choice moves to its next choice (global <->
// clahe, keep <-> auto), a flag flips (the textbook levels), a number that 0 turns off (the temporal
// filter, the clip limit, the denoiser) goes off, or back on at `on`'s value (eq::default_quality()'s
// when `on` has it off too, else the control's on_value: the denoiser's eq::kDenoiseOn). An unknown
// control: `q` unchanged.
eq::Quality toggle_control(const std::string& control, const eq::Quality& q, const eq::Quality& on);

// The controls the overlay draws, in the table's order: every live one, each with the row it
// starts (a label) or continues, and the control it depends on.
std::vector<eq::Control> overlay_controls();

// The split view's left side from --compare: "input" (nullopt) or the look of "plain", "clahe" or
// "default" settings (strength 1).
Result<std::optional<pipeline::Look>> compare_look(const std::string& name);

// The kernel selector: every registry kernel that has a mode for the stream's bins, and whether
// this equalizer can switch to it (or why not: the other backend, no GPU).
struct KernelChoice {
  std::string name, description, source;  // source: "Nugteren et al. 2011, §7.3"
  bool usable = false;
  std::string why_not;                     // when !usable
  bool is_default = false;                 // the equalizer's default for this backend
  std::string why_default;                 // when is_default: why (pipeline::default_kernel_reason)
};
std::vector<KernelChoice> kernel_menu(Backend backend, const video::FrameFormat& format);
// The usable names of a menu, in registry order.
std::vector<std::string> usable_kernels(const std::vector<KernelChoice>& menu);

// The kernel `step` places after `current` in `names` (wrapping; -1 = the one before). `current`
// not in `names`: the first (or last) one. Empty `names`: "".
std::string cycle(const std::vector<std::string>& names, const std::string& current, int step);

// --kernel-sequence: "all" (every usable kernel) or comma-separated names, each usable.
Result<std::vector<std::string>> parse_kernel_sequence(const std::string& spec, const std::vector<std::string>& usable);

}  // namespace histeq::app::player
