#include "app/player/controls.h"

#include <algorithm>
#include <cctype>

#include "app/player/hints.h"
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

Result<std::vector<ScriptedKey>> parse_key_script(const std::string& script, const std::function<bool(const std::string&)>& known,
                                                  const std::string& bound) {
  std::vector<ScriptedKey> out;
  if (trim(script).empty()) return out;
  int64_t tick = 0;
  for (const std::string& item : split_commas(script)) {
    auto bad = [&](const std::string& why) {
      return HISTEQ_ERROR(Code::invalid_argument, "--keys: '" + item + "': " + why);
    };
    std::string key = item;
    int64_t at = tick + 1;
    // FRAME:KEY; a key that is itself ':' has nothing (or a number) before it.
    const size_t colon = item.find(':');
    if (colon != std::string::npos && item != ":") {
      const std::string num = trim(item.substr(0, colon));
      key = trim(item.substr(colon + 1));
      if (num.empty() || num.size() > 12 || !std::all_of(num.begin(), num.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)); }))
        return bad("the frame must be a number (FRAME:KEY)");
      at = std::stoll(num);
      if (at < 1) return bad("frames count from 1");
      if (at < tick) return bad("frames may not go back (the previous item is at frame " + std::to_string(tick) + ")");
    }
    tick = at;
    const size_t eq = key.find('=');
    if (eq != std::string::npos && eq > 0) {  // open=PATH, export=PATH
      const std::string action = key.substr(0, eq), path = key.substr(eq + 1);
      if (action != "open" && action != "export") return bad("unknown action (open=PATH or export=PATH)");
      if (path.empty()) return bad("a path must follow '='");
      out.push_back({at, action == "open" ? ScriptedKey::Action::open : ScriptedKey::Action::export_file, "", path});
      continue;
    }
    if (key.empty()) return bad("no key");
    if (!known(key)) return bad("no such key, or nothing bound to it (keys: " + bound + ", open=PATH, export=PATH)");
    out.push_back({at, ScriptedKey::Action::key, key, ""});
  }
  return out;
}

eq::Quality toggle_control(const std::string& control, const eq::Quality& q, const eq::Quality& on) {
  const std::vector<eq::Control> table = eq::controls();
  const eq::Control* c = eq::find_control(table, control);
  eq::Quality r = q;
  if (c == nullptr) return r;
  const double v = c->get(q);
  switch (c->type) {
    case eq::ControlType::choice: c->set(r, v + 1 > c->max ? 0 : v + 1); break;
    case eq::ControlType::flag: c->set(r, v != 0 ? 0 : 1); break;
    case eq::ControlType::number: {
      if (!c->zero_off) break;
      const double back = c->get(on) > 0 ? c->get(on) : c->get(eq::default_quality()) > 0 ? c->get(eq::default_quality()) : hints_of(*c).on_value;
      c->set(r, v > 0 ? 0 : back);
      break;
    }
    case eq::ControlType::grid: break;
  }
  return r;
}

std::vector<eq::Control> overlay_controls() {
  std::vector<eq::Control> out;
  for (const auto& c : eq::controls())
    if (c.live) out.push_back(c);
  return out;
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
