#include "app/player/controls.h"

#include <algorithm>
#include <cctype>

#include "core/histogram/histogram.h"

namespace histeq::app::player {
namespace {

std::string trim(const std::string& s) {
  size_t a = 0, b = s.size();
  while (a < b && std::isspace(static_cast<unsigned char>(s[a]))) ++a;
  while (b > a && std::isspace(static_cast<unsigned char>(s[b - 1]))) --b;
  return s.substr(a, b - a);
}

std::vector<std::string> split_commas(const std::string& s) {
  std::vector<std::string> out;
  size_t start = 0;
  for (;;) {
    const size_t c = s.find(',', start);
    out.push_back(trim(s.substr(start, c == std::string::npos ? std::string::npos : c - start)));
    if (c == std::string::npos) break;
    start = c + 1;
  }
  return out;
}

}  // namespace

const std::vector<CommandInfo>& commands() {
  static const std::vector<CommandInfo> list = {
      {Command::pause, "space", "pause / play"},
      {Command::step, ".", "step one frame (pauses)"},
      {Command::seek_back, "left", "seek 5 s back"},
      {Command::seek_forward, "right", "seek 5 s forward"},
      {Command::next_kernel, "k", "next histogram kernel"},
      {Command::prev_kernel, "K", "previous histogram kernel"},
      {Command::overlay, "o", "show / hide the overlay"},
      {Command::split, "b", "split view: the input (or settings B) left, the output right; drag the divider"},
      {Command::mode, "g", "mode: global / clahe (tiles)"},
      {Command::clip, "l", "clip limit on / off"},
      {Command::temporal, "t", "temporal filter on / off"},
      {Command::denoise, "n", "denoiser on / off (noisy dark footage)"},
      {Command::chroma, "c", "colour: auto (keep saturation) / keep chroma"},
      {Command::textbook, "r", "levels: textbook (stretched onto 0..max) / the video's range"},
      {Command::plain, "p", "plain equalization / back"},
      {Command::compare, "v", "split view's left side: the input / settings B"},
      {Command::swap, "w", "swap the settings of the two sides"},
      {Command::screenshot, "s", "screenshot (PNG of the window)"},
      {Command::fullscreen, "f", "fullscreen"},
      {Command::mute, "m", "mute / unmute the sound"},
      {Command::volume_down, "9", "volume down (5%)"},
      {Command::volume_up, "0", "volume up (5%, up to 130%)"},
      {Command::help, "h", "this help"},
      {Command::quit, "q", "quit"},
  };
  return list;
}

Result<std::vector<ScriptedKey>> parse_key_script(const std::string& script) {
  std::vector<ScriptedKey> out;
  if (trim(script).empty()) return out;
  int64_t tick = 0;
  for (const std::string& item : split_commas(script)) {
    auto bad = [&](const std::string& why) {
      return HISTEQ_ERROR(Code::invalid_argument, "--keys: '" + item + "': " + why);
    };
    std::string key = item;
    int64_t at = tick + 1;
    const size_t colon = item.find(':');
    if (colon != std::string::npos) {
      const std::string num = trim(item.substr(0, colon));
      key = trim(item.substr(colon + 1));
      if (num.empty() || !std::all_of(num.begin(), num.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)); }))
        return bad("the frame must be a number (FRAME:KEY)");
      at = std::stoll(num);
      if (at < 1) return bad("frames count from 1");
      if (at < tick) return bad("frames may not go back (the previous item is at frame " + std::to_string(tick) + ")");
    }
    tick = at;
    const size_t eq = key.find('=');
    if (eq != std::string::npos) {  // open=PATH, export=PATH
      const std::string action = key.substr(0, eq), path = key.substr(eq + 1);
      if (action != "open" && action != "export") return bad("unknown action (open=PATH or export=PATH)");
      if (path.empty()) return bad("a path must follow '='");
      out.push_back({at, action == "open" ? Command::open_file : Command::export_file, path});
      continue;
    }
    const auto& cmds = commands();
    auto it = std::find_if(cmds.begin(), cmds.end(), [&](const CommandInfo& c) { return key == c.key; });
    if (it == cmds.end()) {
      std::string known;
      for (const auto& c : cmds) known += (known.empty() ? "" : " ") + std::string(c.key);
      return bad("unknown key (keys: " + known + ", open=PATH, export=PATH)");
    }
    out.push_back({at, it->command, ""});
  }
  return out;
}

eq::Quality toggle_quality(Command c, const eq::Quality& q, const eq::Quality& on) {
  const eq::Quality d = eq::default_quality();
  eq::Quality r = q;
  switch (c) {
    case Command::mode: r.mode = q.mode == eq::Mode::clahe ? eq::Mode::global : eq::Mode::clahe; break;
    case Command::chroma: r.chroma = q.chroma == eq::ChromaMode::follow ? eq::ChromaMode::keep : eq::ChromaMode::follow; break;
    case Command::temporal: r.temporal_s = q.temporal_s > 0 ? 0 : on.temporal_s > 0 ? on.temporal_s : d.temporal_s; break;
    case Command::clip: r.clip_limit = q.clip_limit > 0 ? 0 : on.clip_limit > 0 ? on.clip_limit : d.clip_limit; break;
    case Command::textbook: r.textbook = !q.textbook; break;
    case Command::denoise: r.denoise = q.denoise > 0 ? 0 : on.denoise > 0 ? on.denoise : eq::kDenoiseOn; break;
    default: break;
  }
  return r;
}

Result<std::optional<pipeline::Look>> compare_look(const std::string& name) {
  if (name == "input") return std::optional<pipeline::Look>();
  pipeline::Look l;
  if (name == "plain") {
    l.quality = eq::plain_quality();
  } else if (name == "default") {
    l.quality = eq::default_quality();
  } else if (name == "clahe") {
    l.quality = eq::default_quality();
    l.quality.mode = eq::Mode::clahe;
  } else {
    return HISTEQ_ERROR(Code::invalid_argument, "--compare must be input, plain, clahe or default, not '" + name + "'");
  }
  return std::optional<pipeline::Look>(l);
}

std::vector<KernelChoice> kernel_menu(Backend backend, const video::FrameFormat& format) {
  std::vector<KernelChoice> menu;
  for (const auto& e : hist::registry()) {
    if (!e.info.supports(format.bytes_per_sample(), format.bins())) continue;
    KernelChoice c;
    c.name = e.info.name;
    c.description = e.info.description;
    c.source = e.info.paper.empty() ? "" : e.info.paper + (e.info.section.empty() ? "" : ", " + e.info.section);
    const Status s = pipeline::Equalizer::check_kernel(e.info.name, backend, format);
    c.usable = s.is_ok();
    if (!c.usable) c.why_not = s.message();
    c.is_default = e.info.name == pipeline::default_kernel(backend);
    if (c.is_default) c.why_default = pipeline::default_kernel_reason(backend);
    menu.push_back(std::move(c));
  }
  return menu;
}

std::vector<std::string> usable_kernels(const std::vector<KernelChoice>& menu) {
  std::vector<std::string> out;
  for (const auto& c : menu)
    if (c.usable) out.push_back(c.name);
  return out;
}

std::string cycle(const std::vector<std::string>& names, const std::string& current, int step) {
  if (names.empty()) return "";
  const auto it = std::find(names.begin(), names.end(), current);
  const int n = static_cast<int>(names.size());
  if (it == names.end()) return step >= 0 ? names.front() : names.back();
  const int i = static_cast<int>(it - names.begin());
  return names[static_cast<size_t>(((i + step) % n + n) % n)];
}

Result<std::vector<std::string>> parse_kernel_sequence(const std::string& spec, const std::vector<std::string>& usable) {
  if (trim(spec) == "all") {
    if (usable.empty()) return HISTEQ_ERROR(Code::unsupported, "--kernel-sequence all: no kernel can equalize this video here");
    return usable;
  }
  std::vector<std::string> out;
  for (const std::string& name : split_commas(spec)) {
    if (std::find(usable.begin(), usable.end(), name) == usable.end()) {
      std::string list;
      for (const auto& u : usable) list += (list.empty() ? "" : ", ") + u;
      return HISTEQ_ERROR(Code::invalid_argument,
                          "--kernel-sequence: '" + name + "' cannot equalize this video here (kernels that can: " + list + ")");
    }
    out.push_back(name);
  }
  return out;
}

}  // namespace histeq::app::player
