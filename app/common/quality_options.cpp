// The picture-quality options shared by play, export and quality, `histeq quality`'s configurations
// and the docs' control table: all derived from the control table (core/equalize/controls.h).
#include <CLI/CLI.hpp>

#include <sstream>

#include "app/common/play_options.h"
#include "core/equalize/controls.h"

namespace histeq::app {
namespace {

const char* kGroup = "Picture quality (defaults: docs/quality.md)";

// --plain sets it to its plain value (and so excludes its own option).
bool resets_under_plain(const eq::Control& c) { return c.has_plain() && !c.plain_free; }

// --plain's help: the values it sets, from the controls it resets (those that depend on another
// one go with it).
std::string plain_help(const std::vector<eq::Control>& table) {
  const eq::Quality p = eq::plain_quality();
  std::string set;
  for (const auto& c : table)
    if (resets_under_plain(c) && c.needs.empty()) set += (set.empty() ? "--" : " --") + c.name + " " + eq::control_text(c, p);
  return "plain histogram equalization: " + set +
         ", mapped within the video's nominal range (see --range); with --textbook, the classic "
         "formula, histeq's frames before these options bit for bit";
}

CLI::Option* add_control(CLI::App* cmd, QualityArgs& q, const eq::Control& c) {
  const std::string flag = "--" + c.name;
  switch (c.type) {
    case eq::ControlType::flag: return cmd->add_flag(flag, q.flag[c.name], c.help)->group(kGroup);
    case eq::ControlType::choice:
      return cmd->add_option(flag, q.text[c.name], c.help)->check(CLI::IsMember(c.choices))->capture_default_str()->group(kGroup);
    case eq::ControlType::grid: return cmd->add_option(flag, q.text[c.name], c.help)->capture_default_str()->group(kGroup);
    case eq::ControlType::number: break;
  }
  return cmd->add_option(flag, q.number[c.name], c.help)->capture_default_str()->group(kGroup);
}

// A renamed control's old names: hidden options that set the same value (QualityArgs::warnings()
// says they are old).
std::vector<CLI::Option*> add_old_names(CLI::App* cmd, QualityArgs& q, const eq::Control& c, CLI::Option* current) {
  std::vector<CLI::Option*> added;
  for (const auto& old : c.aliases) {
    CLI::Option* o = nullptr;
    if (c.type == eq::ControlType::flag) o = cmd->add_flag("--" + old, q.flag[c.name]);
    else if (c.type == eq::ControlType::number) o = cmd->add_option("--" + old, q.number[c.name]);
    else o = cmd->add_option("--" + old, q.text[c.name]);
    o->group("")->excludes(current);
    q.old_names[old] = o;
    added.push_back(o);
  }
  return added;
}

// A preset of one control on plain equalization ("clip", "temporal", "chroma"): the controls that
// --plain resets whose default is not plain, with the default values of those that depend on them.
bool control_preset(const std::vector<eq::Control>& table, const std::string& name, eq::Quality& q) {
  const eq::Quality d = eq::default_quality(), p = eq::plain_quality();
  const eq::Control* c = eq::find_control(table, name);
  if (c == nullptr || !resets_under_plain(*c) || !c->needs.empty() || c->config_key() != name || c->get(d) == c->get(p)) return false;
  q = p;
  eq::copy_control(*c, d, q);
  for (const auto& dep : table)
    if (dep.needs == c->name) eq::copy_control(dep, d, q);
  return true;
}

std::vector<std::string> preset_names(const std::vector<eq::Control>& table) {
  std::vector<std::string> names = {"plain", "textbook", "default", "clahe"};
  eq::Quality scratch;
  for (const auto& c : table)
    if (control_preset(table, c.config_key(), scratch)) names.push_back(c.config_key());
  return names;
}

std::string join(const std::vector<std::string>& v) {
  std::string s;
  for (const auto& x : v) s += (s.empty() ? "" : ", ") + x;
  return s;
}

std::string config_keys(const std::vector<eq::Control>& table) {
  std::vector<std::string> keys;
  for (const auto& c : table) keys.push_back(c.config_key());
  return join(keys);
}

Result<eq::Quality> named_config(const std::vector<eq::Control>& table, const std::string& name) {
  eq::Quality q = eq::default_quality();
  if (name == "plain") return eq::plain_quality();
  if (name == "default") return q;
  if (name == "clahe") {
    q.mode = eq::Mode::clahe;
    return q;
  }
  if (name == "textbook") {  // the classic formula, 0..max whatever the range
    q = eq::plain_quality();
    q.textbook = true;
    return q;
  }
  if (control_preset(table, name, q)) return q;  // each control alone, on plain equalization
  return HISTEQ_ERROR(Code::invalid_argument,
                      "unknown configuration '" + name + "' (" + join(preset_names(table)) + ", or NAME:key=value:...)");
}

}  // namespace

QualityArgs::QualityArgs() {
  const eq::Quality d = eq::default_quality();
  for (const auto& c : eq::controls()) {
    if (c.type == eq::ControlType::number) number[c.name] = c.get(d);
    else if (c.type == eq::ControlType::flag) flag[c.name] = c.on(d);
    else text[c.name] = eq::control_text(c, d);
  }
}

Result<eq::Quality> QualityArgs::resolve() const {
  eq::Quality q = eq::default_quality();
  for (const auto& c : eq::controls()) {
    if (plain && resets_under_plain(c)) {
      eq::copy_control(c, eq::plain_quality(), q);
      continue;
    }
    if (c.type == eq::ControlType::number) {
      if (auto it = number.find(c.name); it != number.end()) c.set(q, it->second);
    } else if (c.type == eq::ControlType::flag) {
      if (auto it = flag.find(c.name); it != flag.end()) c.set(q, it->second ? 1 : 0);
    } else if (auto it = text.find(c.name); it != text.end()) {
      HISTEQ_TRY(eq::set_control_text(c, q, it->second));
    }
  }
  HISTEQ_TRY(eq::validate(q));
  return q;
}

void add_quality_options(CLI::App* cmd, QualityArgs& q) {
  const std::vector<eq::Control> table = eq::controls();
  std::vector<CLI::Option*> reset;
  for (const auto& c : table) {
    CLI::Option* o = add_control(cmd, q, c);
    const std::vector<CLI::Option*> old = add_old_names(cmd, q, c, o);
    if (!resets_under_plain(c)) continue;
    reset.push_back(o);
    reset.insert(reset.end(), old.begin(), old.end());
  }
  CLI::Option* plain = cmd->add_flag("--plain", q.plain, plain_help(table))->group(kGroup);
  for (CLI::Option* o : reset) plain->excludes(o);
}

std::vector<std::string> QualityArgs::warnings() const {
  std::vector<std::string> out;
  const std::vector<eq::Control> table = eq::controls();
  for (const auto& [old, option] : old_names)
    if (option->count() > 0)
      if (const eq::Control* c = eq::find_control(table, old)) out.push_back("--" + old + ": " + eq::alias_warning(*c, old));
  return out;
}

Result<eq::Quality> quality_config(const std::string& spec, std::vector<std::string>* warnings) {
  const std::vector<eq::Control> table = eq::controls();
  const size_t colon = spec.find(':');
  const std::string name = spec.substr(0, colon);
  eq::Quality q = eq::default_quality();
  if (colon == std::string::npos) {
    auto named = named_config(table, name);
    if (!named) return named.status();
    q = *named;
  } else {
    // NAME:key=value:...: the defaults with those keys changed.
    size_t at = colon + 1;
    while (at <= spec.size()) {
      const size_t end = std::min(spec.find(':', at), spec.size());
      const std::string kv = spec.substr(at, end - at);
      const size_t eqs = kv.find('=');
      if (eqs == std::string::npos) return HISTEQ_ERROR(Code::invalid_argument, "configuration '" + spec + "': '" + kv + "' is not key=value");
      const std::string key = kv.substr(0, eqs);
      const eq::Control* c = eq::find_control(table, key);
      const std::string old = c == nullptr ? "" : eq::alias_warning(*c, key);
      if (c == nullptr || (c->config_key() != key && old.empty()))
        return HISTEQ_ERROR(Code::invalid_argument, "unknown key '" + key + "' (" + config_keys(table) + ")");
      if (!old.empty() && warnings != nullptr) warnings->push_back("configuration '" + spec + "': " + old);
      HISTEQ_TRY(eq::set_control_text(*c, q, kv.substr(eqs + 1)));
      at = end + 1;
    }
  }
  HISTEQ_TRY(eq::validate(q));
  return q;
}

std::string quality_configs_help() {
  const std::vector<eq::Control> table = eq::controls();
  return "histeq configurations: " + join(preset_names(table)) + ", or NAME:key=value:... (keys " + config_keys(table) +
         "; choices and ranges: docs/controls.md; on the defaults)";
}

std::string controls_markdown() {
  const eq::Quality d = eq::default_quality(), p = eq::plain_quality();
  std::ostringstream md;
  md << "| control | `histeq quality` key | operation | values | default | plain | live | what it does |\n";
  md << "|---|---|---|---|---|---|---|---|\n";
  for (const auto& c : eq::controls()) {
    md << "| `--" << c.name << "` | `" << c.config_key() << "` | " << c.op << " | " << eq::range_text(c) << " | "
       << eq::control_text(c, d) << " | " << (resets_under_plain(c) ? eq::control_text(c, p) : "kept") << " | " << (c.live ? "yes" : "no")
       << " | " << c.doc;
    for (const auto& old : c.aliases) md << " (old name `" << old << "`: taken, with a warning)";
    md << " |\n";
  }
  return md.str();
}

}  // namespace histeq::app
