// Settings and controls(): every control comes from the control table (core/equalize/controls.h);
// the equalizer's own four are specs of the same kind (core/equalize/equalizer_controls.h), so that
// parsing, printing and range checks are the table's functions for all of them.
#include <algorithm>
#include <cmath>

#include "core/api/api_impl.h"
#include "core/cuda/device.h"
#include "core/equalize/equalizer_controls.h"
#include "core/equalize/operation.h"
#include "core/histogram/histogram.h"

namespace histeq::api {
namespace {

// The table's controls, then the own ones; looked up by any of their names.
const eq::Control* lookup(const std::vector<eq::Control>& table, const std::string& name, bool& own) {
  own = false;
  if (const eq::Control* c = eq::find_control(table, name)) return c;
  own = true;
  return eq::find_control(own_controls(), name);
}

Status unknown_control(const std::vector<eq::Control>& table, const std::string& name) {
  std::string known;
  for (const auto& c : table) known += (known.empty() ? "" : ", ") + c.name;
  for (const auto& c : own_controls()) known += ", " + c.name;
  return Status(ErrorCode::invalid_argument, "unknown control '" + name + "' (controls: " + known + ")");
}

// The flag spellings the API takes besides the table's 0 / 1.
std::string flag_text(const std::string& v) {
  if (v == "on" || v == "true" || v == "yes") return "1";
  if (v == "off" || v == "false" || v == "no") return "0";
  return v;
}

// Sets c in q from text or number, all or nothing: q is only changed when the value is valid.
histeq::Status set_checked(const eq::Control& c, eq::Quality& q, const std::string* text, double number,
                           const hist::TileGrid* grid = nullptr) {
  eq::Quality t = q;
  if (grid != nullptr) {
    if (c.type != eq::ControlType::grid)
      return HISTEQ_ERROR(Code::invalid_argument, c.name + " is not a grid: give it one value, not columns and rows");
    c.set_grid(t, *grid);
  } else if (text != nullptr) {
    const std::string v = c.type == eq::ControlType::flag ? flag_text(*text) : *text;
    HISTEQ_TRY(eq::set_control_text(c, t, v.empty() && c.type == eq::ControlType::choice ? c.choices[0] : v));
  } else if (c.type == eq::ControlType::grid) {
    if (number != std::floor(number) || !(std::fabs(number) < 1e6))
      return HISTEQ_ERROR(Code::invalid_argument, c.what + " must be a whole number of tiles, not " + eq::control_number(number));
    c.set_grid(t, {static_cast<int>(number), static_cast<int>(number)});
  } else {
    // A choice's accessor may map any number onto a choice: the index is checked here.
    if (c.type == eq::ControlType::choice && !(number >= 0 && number <= c.max && number == std::floor(number)))
      return HISTEQ_ERROR(Code::invalid_argument, c.what + " must be " + eq::range_text(c) + " (index 0.." + eq::control_number(c.max) +
                                                      "), not " + eq::control_number(number));
    if (c.type == eq::ControlType::flag && number != 0 && number != 1)
      return HISTEQ_ERROR(Code::invalid_argument, c.what + " must be 0 or 1, not " + eq::control_number(number));
    c.set(t, number);
  }
  HISTEQ_TRY(eq::check_control(c, t));
  if (c.name == "device" && c.get(t) != std::floor(c.get(t)))
    return HISTEQ_ERROR(Code::invalid_argument, "device must be a whole number, not " + eq::control_text(c, t));
  q = std::move(t);
  return histeq::Status::ok();
}

const char* type_name(eq::ControlType t) {
  switch (t) {
    case eq::ControlType::choice: return "choice";
    case eq::ControlType::flag: return "flag";
    case eq::ControlType::grid: return "grid";
    case eq::ControlType::number: break;
  }
  return "number";
}

ControlInfo info_of(const eq::Control& c, const eq::Quality& defaults, const eq::Quality& plain) {
  ControlInfo i;
  i.name = c.name;
  i.python_name = c.python_name();
  i.type = type_name(c.type);
  i.choices = c.choices;
  i.choice_help = c.choice_help;
  i.min = c.min;
  i.max = c.max;
  i.zero_off = c.zero_off;
  i.unit = c.unit;
  i.default_value = eq::control_text(c, defaults);
  i.plain_value = eq::control_text(c, c.has_plain() ? plain : defaults);
  i.help = c.help;
  i.live = c.live;
  return i;
}

// The control `name` (any of its names: the table's or the equalizer's own) set by set_checked.
Status set_by_name(eq::Quality& quality, eq::Quality& own, const std::string& name, const std::string* text, double number,
                   const hist::TileGrid* grid = nullptr) {
  return guarded([&] {
    const std::vector<eq::Control> table = eq::controls();
    bool is_own = false;
    const eq::Control* c = lookup(table, name, is_own);
    if (c == nullptr) return unknown_control(table, name);
    return to_public(set_checked(*c, is_own ? own : quality, text, number, grid));
  });
}

}  // namespace

const std::vector<eq::Control>& own_controls() { return eq::equalizer_controls(); }

std::string kernel_of(const eq::Quality& own) {
  const std::string k = eq::control_text(own_controls()[0], own);
  return k == "auto" ? "" : k;
}
double strength_of(const eq::Quality& own) { return own_controls()[1].get(own); }
BackendChoice backend_of(const eq::Quality& own) { return static_cast<BackendChoice>(static_cast<int>(own_controls()[2].get(own))); }
int device_of(const eq::Quality& own) { return static_cast<int>(own_controls()[3].get(own)); }

Status to_public(const histeq::Status& s) {
  if (s.is_ok()) return Status();
  ErrorCode code = ErrorCode::internal;
  switch (s.code()) {
    case Code::invalid_argument:
    case Code::not_found: code = ErrorCode::invalid_argument; break;
    case Code::unsupported:
    case Code::no_device: code = ErrorCode::unsupported; break;
    case Code::cuda_error:
    case Code::out_of_memory: code = ErrorCode::device_error; break;
    default: break;
  }
  return Status(code, s.to_string());
}

std::vector<ControlInfo> controls() {
  std::vector<ControlInfo> v;
  const eq::Quality d = eq::default_quality(), p = eq::plain_quality();
  for (const auto& c : eq::controls()) v.push_back(info_of(c, d, p));
  const eq::Quality own;
  for (const auto& c : own_controls()) v.push_back(info_of(c, own, own));
  return v;
}

std::string control_warning(const std::string& name) {
  try {
    const std::vector<eq::Control> table = eq::controls();
    bool own = false;
    const eq::Control* c = lookup(table, name, own);
    return c == nullptr ? std::string() : eq::alias_warning(*c, name);
  } catch (...) {
    return {};
  }
}

std::vector<std::string> control_aliases(const std::string& name) {
  try {
    const std::vector<eq::Control> table = eq::controls();
    bool own = false;
    const eq::Control* c = lookup(table, name, own);
    return c == nullptr || c->name != name ? std::vector<std::string>{} : c->aliases;
  } catch (...) {
    return {};
  }
}

Settings::Settings() : impl_(std::make_unique<Impl>()) {}
Settings Settings::defaults() { return Settings(); }
Settings Settings::plain() {
  Settings s;
  for (const auto& c : eq::controls())
    if (c.has_plain() && !c.plain_free) eq::copy_control(c, eq::plain_quality(), s.impl_->quality);
  return s;
}
Settings::~Settings() = default;
Settings::Settings(const Settings& o) : impl_(std::make_unique<Impl>(*o.impl_)) {}
Settings& Settings::operator=(const Settings& o) {
  if (this != &o) *impl_ = *o.impl_;
  return *this;
}
// A moved-from Settings gets fresh defaults, so that it stays usable (impl_ is never null).
Settings::Settings(Settings&& o) noexcept : impl_(std::exchange(o.impl_, nullptr)) {
  try {
    o.impl_ = std::make_unique<Impl>();
  } catch (...) {  // out of memory: the moved-from object may then only be destroyed or assigned
  }
}
Settings& Settings::operator=(Settings&& o) noexcept {
  std::swap(impl_, o.impl_);
  return *this;
}

Status Settings::set(const std::string& name, const std::string& value) {
  return set_by_name(impl_->quality, impl_->own, name, &value, 0);
}

Status Settings::set(const std::string& name, double value) {
  return set_by_name(impl_->quality, impl_->own, name, nullptr, value);
}

Status Settings::set(const std::string& name, int columns, int rows) {
  const hist::TileGrid grid{columns, rows};
  return set_by_name(impl_->quality, impl_->own, name, nullptr, 0, &grid);
}

Result<std::string> Settings::get(const std::string& name) const {
  try {
    const std::vector<eq::Control> table = eq::controls();
    bool own = false;
    const eq::Control* c = lookup(table, name, own);
    if (c == nullptr) return unknown_control(table, name);
    return eq::control_text(*c, own ? impl_->own : impl_->quality);
  } catch (...) {
    return Status(ErrorCode::internal, "out of host memory");
  }
}

std::string Settings::describe() const {
  std::string s = eq::describe(impl_->quality);
  for (const auto& c : own_controls())
    if (c.get(impl_->own) != c.get(eq::Quality{})) s += ", " + c.name + " " + eq::control_text(c, impl_->own);
  return s;
}

}  // namespace histeq::api
