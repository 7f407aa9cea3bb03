// The player's commands and their keys, the scripted key presses of --keys (tests drive the
// window through the same path as the keyboard), the kernel menu and kernel cycling. No SDL and no
// ImGui here: the headless player and the unit tests use it too.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "core/cuda/status.h"
#include "core/equalize/controls.h"
#include "core/equalize/quality.h"
#include "core/pipeline/equalizer.h"
#include "core/video/frame.h"

namespace histeq::app::player {

// What the session does on its own (Session::command); the keys reach them through the key
// bindings (app/player/bindings.h) and the commands of app/player/controller.h.
enum class Command {
  pause,         // pause / play
  step,          // one frame forward (pauses)
  step_back,     // one frame back (pauses)
  seek_back,     // kSeekStepS back
  seek_forward,  // kSeekStepS forward
  next_kernel,
  prev_kernel,
  split,         // split view on / off
  plain,         // plain equalization / back to the settings before
  compare,       // the split's left side: the input / settings B
  swap,          // swap the settings of the two sides (A <-> B)
  mute,          // sound off / on
  volume_down,   // kVolumeStep quieter
  volume_up,     // kVolumeStep louder (up to kMaxVolume)
  quit,
};

constexpr double kSeekStepS = 5.0;

// One scripted key press (--keys): `key` (a key name, app/player/bindings.h: "space", "k", "K",
// ".", "TAB", "Ctrl+s") as if pressed just before window frame `tick` is built (1-based: the first
// frame the window draws is tick 1), or what drag and drop and the Export dialog do.
struct ScriptedKey {
  enum class Action { key, open, export_file };
  int64_t tick = 0;
  Action action = Action::key;
  std::string key;  // Action::key: the key's name as given
  std::string arg;  // open, export_file: the path
};
// --keys "space,5:TAB,k,20:s": comma-separated items [TICK:]KEY, or open=PATH / export=PATH (paths
// without commas). An item without TICK comes one frame after the previous item (the first at
// tick 1). Ticks may not go back. `known(key)` says whether a key is bound; errors name the bad item
// and list `bound`.
Result<std::vector<ScriptedKey>> parse_key_script(const std::string& script, const std::function<bool(const std::string&)>& known,
                                                  const std::string& bound);

// What a control's key does to quality settings: a choice moves to its next choice (global <->
// clahe, keep <-> auto), a flag flips (the textbook levels), a number that 0 turns off (the temporal
// filter, the clip limit, the denoiser) goes off, or back on at `on`'s value (eq::default_quality()'s
// when `on` has it off too, else the control's on value (hints.h): the denoiser's eq::kDenoiseOn). An unknown
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
