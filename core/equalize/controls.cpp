#include "core/equalize/controls.h"

#include <algorithm>
#include <utility>

#include "core/cuda/numbers.h"
#include "core/equalize/operation.h"

namespace histeq::eq {

// operations.def: each line's entry function, defined in the operation's file.
#define HISTEQ_OPERATION(name) OperationInfo name##_operation();
#include "core/equalize/operations.def"
#undef HISTEQ_OPERATION

namespace {

std::vector<OperationInfo>& list() {
  static std::vector<OperationInfo> ops = [] {
    std::vector<OperationInfo> v;
#define HISTEQ_OPERATION(name) v.push_back(name##_operation());
#include "core/equalize/operations.def"
#undef HISTEQ_OPERATION
    for (auto& op : v)
      for (auto& c : op.controls) c.op = op.name;
    return v;
  }();
  return ops;
}

bool in_range(double v, double lo, double hi) { return v >= lo && v <= hi; }  // false for NaN

// "a, b or c"
std::string either(const std::vector<std::string>& words) {
  std::string s;
  for (size_t i = 0; i < words.size(); ++i) s += (i == 0 ? "" : i + 1 == words.size() ? " or " : ", ") + words[i];
  return s;
}

Status parse_number(const Control& c, const std::string& text, double& out) {
  if (!histeq::parse_number(text, out))  // the C locale's decimal point whatever the host program's locale
    return HISTEQ_ERROR(Code::invalid_argument, c.config_key() + "=" + text + ": not a number");
  return Status::ok();
}

std::string underscored(std::string s) {
  std::replace(s.begin(), s.end(), '-', '_');
  return s;
}

}  // namespace

std::string control_number(double v) { return format_number(v); }

std::string Control::python_name() const { return underscored(name); }

namespace {

Control spec(std::string name, ControlType type, Range r, Words w, std::string help, std::string doc) {
  Control c;
  c.name = std::move(name);
  c.type = type;
  c.min = r.min;
  c.max = r.max;
  c.zero_off = r.zero_off;
  c.key = std::move(w.key);
  c.what = w.what.empty() ? c.name : std::move(w.what);
  c.unit = std::move(w.unit);
  c.help = std::move(help);
  c.doc = std::move(doc);
  return c;
}

}  // namespace

Control number_spec(std::string name, double Quality::*field, Range range, double fallback, std::optional<double> plain, Words words,
                    std::string help, std::string doc) {
  Control c = spec(std::move(name), ControlType::number, range, std::move(words), std::move(help), std::move(doc));
  c.fallback = fallback;
  c.plain_value = plain;
  c.get = [field](const Quality& q) { return q.*field; };
  c.set = [field](Quality& q, double v) { q.*field = v; };
  return c;
}

Control flag_spec(std::string name, bool Quality::*field, bool fallback, std::optional<bool> plain, Words words, std::string help,
                  std::string doc) {
  Control c = spec(std::move(name), ControlType::flag, {0, 1}, std::move(words), std::move(help), std::move(doc));
  c.fallback = fallback ? 1 : 0;
  if (plain) c.plain_value = *plain ? 1 : 0;
  c.get = [field](const Quality& q) { return q.*field ? 1.0 : 0.0; };
  c.set = [field](Quality& q, double v) { q.*field = v != 0; };
  return c;
}

Control grid_spec(std::string name, hist::TileGrid Quality::*field, Range per_axis, int fallback, std::optional<int> plain,
                  Words words, std::string help, std::string doc) {
  Control c = spec(std::move(name), ControlType::grid, per_axis, std::move(words), std::move(help), std::move(doc));
  c.fallback = fallback;
  if (plain) c.plain_value = *plain;
  c.get_grid = [field](const Quality& q) { return q.*field; };
  c.set_grid = [field](Quality& q, hist::TileGrid g) { q.*field = g; };
  c.get = [field](const Quality& q) { return static_cast<double>((q.*field).cols); };
  c.set = [field](Quality& q, double v) { q.*field = {static_cast<int>(v), static_cast<int>(v)}; };
  return c;
}

Control choice_spec_of(std::string name, std::vector<Choice> choices, const std::string& fallback, const std::string& plain,
                       Words words, std::string help, std::string doc) {
  Control c = spec(std::move(name), ControlType::choice, {0, static_cast<double>(choices.size()) - 1}, std::move(words),
                   std::move(help), std::move(doc));
  for (auto& ch : choices) {
    if (ch.name == fallback) c.fallback = static_cast<double>(c.choices.size());
    if (ch.name == plain) c.plain_value = static_cast<double>(c.choices.size());
    c.choices.push_back(std::move(ch.name));
    c.choice_help.push_back(std::move(ch.help));
  }
  return c;
}

Control param_spec(std::string name, Range range, double fallback, std::optional<double> plain, Words words, std::string help,
                   std::string doc) {
  Control c = param_control(std::move(name), fallback, range.min, range.max);
  Control s = spec(c.name, ControlType::number, range, std::move(words), std::move(help), std::move(doc));
  s.fallback = fallback;
  s.plain_value = plain ? plain : std::optional<double>(fallback);
  s.plain_free = true;
  s.get = std::move(c.get);
  s.set = std::move(c.set);
  return s;
}

Control number_control(std::string name, double Quality::*field, double min, double max) {
  Control c;
  c.name = std::move(name);
  c.type = ControlType::number;
  c.min = min;
  c.max = max;
  c.get = [field](const Quality& q) { return q.*field; };
  c.set = [field](Quality& q, double v) { q.*field = v; };
  return c;
}

Control choice_control(std::string name, std::vector<std::string> choices) {
  Control c;
  c.name = std::move(name);
  c.type = ControlType::choice;
  c.choices = std::move(choices);
  c.max = static_cast<double>(c.choices.size()) - 1;
  return c;
}

Control flag_control(std::string name, bool Quality::*field) {
  Control c;
  c.name = std::move(name);
  c.type = ControlType::flag;
  c.max = 1;
  c.get = [field](const Quality& q) { return q.*field ? 1.0 : 0.0; };
  c.set = [field](Quality& q, double v) { q.*field = v != 0; };
  return c;
}

Control param_control(std::string name, double fallback, double min, double max) {
  Control c;
  c.name = std::move(name);
  c.type = ControlType::number;
  c.min = min;
  c.max = max;
  c.fallback = fallback;
  c.plain_value = fallback;  // off: counts in plain(); --plain leaves it to its own option
  c.plain_free = true;
  const std::string n = c.name;
  c.get = [n, fallback](const Quality& q) { return q.param(n, fallback); };
  c.set = [n, fallback](Quality& q, double v) {
    if (v == fallback) q.params.erase(n);
    else q.params[n] = v;
  };
  return c;
}

const std::vector<OperationInfo>& operation_list() { return list(); }

Status register_operation(OperationInfo info, const std::string& before) {
  if (info.name.empty() || !info.make) return HISTEQ_ERROR(Code::invalid_argument, "an operation needs a name and a maker");
  const std::vector<Control> table = controls();
  for (const auto& op : list())
    if (op.name == info.name) return HISTEQ_ERROR(Code::invalid_argument, "operation '" + info.name + "' is registered already");
  for (auto& c : info.controls) {
    bool taken = find_control(table, c.name) != nullptr || find_control(table, c.config_key()) != nullptr;
    for (const auto& a : c.aliases) taken = taken || find_control(table, a) != nullptr;
    if (taken)
      return HISTEQ_ERROR(Code::invalid_argument, "control '" + c.name + "' of operation '" + info.name + "' is taken");
    if (!c.get || !c.set) return HISTEQ_ERROR(Code::invalid_argument, "control '" + c.name + "' has no accessors");
    c.op = info.name;
  }
  auto at = std::find_if(list().begin(), list().end(), [&](const OperationInfo& o) { return o.name == before; });
  if (!before.empty() && at == list().end()) return HISTEQ_ERROR(Code::invalid_argument, "no operation '" + before + "' to go before");
  list().insert(at, std::move(info));
  return Status::ok();
}

void remove_operation(const std::string& name) {
  auto& l = list();
  l.erase(std::remove_if(l.begin(), l.end(), [&](const OperationInfo& o) { return o.name == name; }), l.end());
}

std::vector<Control> controls() {
  std::vector<Control> t;
  for (const auto& op : list()) t.insert(t.end(), op.controls.begin(), op.controls.end());
  return t;
}

const Control* find_control(const std::vector<Control>& table, const std::string& name) {
  for (const auto& c : table)
    if (c.name == name || c.python_name() == name || c.config_key() == name) return &c;
  for (const auto& c : table)
    for (const auto& a : c.aliases)
      if (a == name || underscored(a) == name) return &c;
  return nullptr;
}

std::string alias_warning(const Control& c, const std::string& name) {
  for (const auto& a : c.aliases)
    if (a == name || underscored(a) == name)
      return "'" + name + "' is an old name of '" + c.name + "' and will go: use '" + c.name + "'";
  return {};
}

void make_plain(Quality& q) {
  for_each_control([&q](const Control& c) {
    if (c.plain_value) c.set(q, *c.plain_value);
  });
}

bool same_value(const Control& c, const Quality& a, const Quality& b) {
  if (c.type == ControlType::grid) return c.get_grid(a) == c.get_grid(b);
  return c.get(a) == c.get(b);
}

std::string control_text(const Control& c, const Quality& q) {
  switch (c.type) {
    case ControlType::choice: {
      const auto i = static_cast<size_t>(c.get(q));
      return i < c.choices.size() ? c.choices[i] : "?";
    }
    case ControlType::flag: return c.on(q) ? "1" : "0";
    case ControlType::grid: {
      const hist::TileGrid g = c.get_grid(q);
      return std::to_string(g.cols) + "x" + std::to_string(g.rows);
    }
    case ControlType::number: break;
  }
  return control_number(c.get(q));
}

Status set_control_text(const Control& c, Quality& q, const std::string& text) {
  switch (c.type) {
    case ControlType::choice: {
      const auto it = std::find(c.choices.begin(), c.choices.end(), text);
      if (it == c.choices.end())
        return HISTEQ_ERROR(Code::invalid_argument, c.what + " must be " + either(c.choices) + ", not '" + text + "'");
      c.set(q, static_cast<double>(it - c.choices.begin()));
      return Status::ok();
    }
    case ControlType::flag:
      if (text != "0" && text != "1") return HISTEQ_ERROR(Code::invalid_argument, c.config_key() + "=" + text + ": 0 or 1");
      c.set(q, text == "1" ? 1 : 0);
      return Status::ok();
    case ControlType::grid: {
      int cols = 0, rows = 0;
      HISTEQ_TRY(parse_dimensions(text, c.what, static_cast<int>(c.max), cols, rows));
      Quality t = q;
      c.set_grid(t, {cols, rows});
      HISTEQ_TRY(check_control(c, t));
      q = t;
      return Status::ok();
    }
    case ControlType::number: break;
  }
  double v = 0;
  HISTEQ_TRY(parse_number(c, text, v));
  c.set(q, v);
  return Status::ok();
}

void copy_control(const Control& c, const Quality& from, Quality& to) {
  if (c.type == ControlType::grid) c.set_grid(to, c.get_grid(from));
  else c.set(to, c.get(from));
}

std::string range_text(const Control& c) {
  const std::string unit = c.unit.empty() ? "" : " " + c.unit;
  switch (c.type) {
    case ControlType::choice: return either(c.choices);
    case ControlType::flag: return "0 or 1";
    case ControlType::grid: return control_number(c.min) + ".." + control_number(c.max) + " per axis";
    case ControlType::number: break;
  }
  const std::string span = control_number(c.min) + ".." + control_number(c.max) + unit;
  if (!c.zero_off) return span;
  return c.min == 0 ? "0 (off) .. " + control_number(c.max) + unit : "0 (off) or " + span;
}

Status check_control(const Control& c, const Quality& q) {
  switch (c.type) {
    case ControlType::choice: {
      const double i = c.get(q);
      if (in_range(i, 0, c.max) && i == static_cast<int>(i)) return Status::ok();
      return HISTEQ_ERROR(Code::invalid_argument, c.what + " must be " + either(c.choices));
    }
    case ControlType::flag: return Status::ok();
    case ControlType::grid: {
      const hist::TileGrid g = c.get_grid(q);
      if (in_range(g.cols, c.min, c.max) && in_range(g.rows, c.min, c.max)) return Status::ok();
      return HISTEQ_ERROR(Code::invalid_argument, c.what + " must be " + range_text(c) + ", not " + std::to_string(g.cols) + "x" +
                                                      std::to_string(g.rows));
    }
    case ControlType::number: break;
  }
  const double v = c.get(q);
  if ((c.zero_off && v == 0) || in_range(v, c.min, c.max)) return Status::ok();
  return HISTEQ_ERROR(Code::invalid_argument, c.what + " must be " + range_text(c) + ", not " + control_number(v));
}

}  // namespace histeq::eq
