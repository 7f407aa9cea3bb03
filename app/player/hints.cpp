#include "app/player/hints.h"

#include <cctype>
#include <set>

namespace histeq::app::player {

const std::vector<ControlHints>& control_hints() {
  // control, label, step, slider end, format, top label, key, key help, on value
  static const std::vector<ControlHints> table = {
      {"denoise", "Denoise", 0.5, 12, "noise sigma %.1f", "", "n", "denoiser on / off (noisy dark footage)", eq::kDenoiseOn},
      {"mode", "Mode", 0, 0, "", "", "g", "mode: global / clahe (tiles)"},
      {"tiles", "", 0, 0, "%d tiles"},
      {"clip-limit", "Clip limit", 0.25, 8, "%.2f x mean", "", "C", "clip limit on / off"},  // mpv binds l (A-B loop)
      {"range", "Levels"},
      {"textbook", "", 0, 0, "", "", "r", "levels: textbook (stretched onto 0..max) / the video's range"},
      {"temporal", "Temporal", 0.01, 2, "%.2f s", "", "t", "temporal filter on / off"},
      {"scene-cut", "Scene cut", 0.01, 0, "distance > %.2f", "never"},
      {"chroma", "Colour", 0, 0, "", "", "c", "colour: auto (keep saturation) / keep chroma"},
      {"chroma-limit", "", 0.01, 3, "up to x%.2f"},
  };
  return table;
}

ControlHints hints_of(const eq::Control& c) {
  for (const auto& h : control_hints())
    if (h.control == c.name) return h;
  ControlHints h;
  h.control = c.name;
  h.label = c.what.empty() ? c.name : c.what;
  if (!h.label.empty()) h.label[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(h.label[0])));
  return h;
}

Status check_hints(const std::vector<ControlHints>& hints, const std::vector<eq::Control>& table) {
  std::set<std::string> seen;
  for (const auto& h : hints) {
    if (eq::find_control(table, h.control) == nullptr || eq::find_control(table, h.control)->name != h.control)
      return HISTEQ_ERROR(Code::invalid_argument, "the player's hints name '" + h.control + "', which is no control");
    if (!seen.insert(h.control).second) return HISTEQ_ERROR(Code::invalid_argument, "the player's hints have two rows for '" + h.control + "'");
  }
  return Status::ok();
}

}  // namespace histeq::app::player
