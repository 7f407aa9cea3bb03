#include "properties.h"

#include <gst/gst.h>
#include <histeq/histeq.hpp>

#include <algorithm>
#include <cctype>
#include <regex>
#include <set>

namespace histeq_gst {
namespace {

// "chroma-limit" -> "GstHisteqChromaLimit": the GType name of a choice's enum.
std::string enum_type_name(const std::string& control) {
  std::string out = "GstHisteq";
  bool upper = true;
  for (char c : control) {
    if (!std::isalnum(static_cast<unsigned char>(c))) {
      upper = true;
      continue;
    }
    out += upper ? static_cast<char>(std::toupper(static_cast<unsigned char>(c))) : c;
    upper = false;
  }
  return out;
}

// The enum of a choice control; its values and names live for the process, as GType requires. A
// value's nick is the control's spelling (what gst-launch-1.0 and the other front ends take), its
// name what it means (gst-inspect-1.0 shows both); names are unique, as GLib looks values up by them.
GType register_enum(const histeq::ControlInfo& c) {
  const std::string type_name = enum_type_name(c.name);
  if (GType t = g_type_from_name(type_name.c_str())) return t;
  auto* values = g_new0(GEnumValue, c.choices.size() + 1);
  std::set<std::string> names;
  for (size_t i = 0; i < c.choices.size(); ++i) {
    std::string name = i < c.choice_help.size() && !c.choice_help[i].empty() ? c.choice_help[i] : c.choices[i];
    if (!names.insert(name).second) name += " (" + c.choices[i] + ")";
    values[i].value = static_cast<gint>(i);
    values[i].value_name = g_strdup(name.c_str());
    values[i].value_nick = g_strdup(c.choices[i].c_str());
  }
  return g_enum_register_static(g_strdup(type_name.c_str()), values);
}

int choice_index(const std::vector<std::string>& choices, const std::string& text) {
  const auto it = std::find(choices.begin(), choices.end(), text);
  return it == choices.end() ? 0 : static_cast<int>(it - choices.begin());
}

bool flag_of_text(const std::string& text) {
  return text == "1" || text == "on" || text == "true" || text == "yes";
}

// The property of control c, named `property` (its name, or an old name of it).
GParamSpec* spec_of(const histeq::ControlInfo& c, const std::string& property, GParamFlags flags) {
  // The help speaks of the command line's options ("with --chroma auto"): here they are properties.
  std::string blurb = std::regex_replace(c.help, std::regex("--([a-z])"), "$1");
  if (!c.unit.empty()) blurb += " (" + c.unit + ")";
  if (property != c.name) blurb = "the old name of " + c.name + ", which it sets (deprecated: use " + c.name + "): " + blurb;
  const char* name = property.c_str();
  const char* nick = property.c_str();
  if (c.name == "device") {
    blurb += "; -1 = auto: the CUDA memory's device, else the library's default (device 0)";
    return g_param_spec_int(name, nick, blurb.c_str(), -1, static_cast<int>(c.max), -1, flags);
  }
  if (c.type == "choice" && !c.choices.empty())
    return g_param_spec_enum(name, nick, blurb.c_str(), register_enum(c), choice_index(c.choices, c.default_value),
                             flags);
  if (c.type == "number") {
    const double lo = c.zero_off ? std::min(0.0, c.min) : c.min;
    const double def = std::clamp(g_ascii_strtod(c.default_value.c_str(), nullptr), lo, c.max);
    // A number that changes while playing may follow a GstController's curve, as videobalance's do.
    const auto ctl = c.live ? GST_PARAM_CONTROLLABLE : 0;
    return g_param_spec_double(name, nick, blurb.c_str(), lo, c.max, def, static_cast<GParamFlags>(flags | ctl));
  }
  if (c.type == "flag")
    return g_param_spec_boolean(name, nick, blurb.c_str(), flag_of_text(c.default_value), flags);
  return g_param_spec_string(name, nick, blurb.c_str(), c.default_value.c_str(), flags);
}

}  // namespace

const std::vector<Property>& install_properties(GObjectClass* klass) {
  static std::vector<Property> table;
  table.clear();
  for (const histeq::ControlInfo& c : histeq::controls()) {
    // Live controls change between frames while playing; the others (the backend, the device)
    // choose the equalizer, which is made when the stream starts.
    const auto mutability = c.live ? GST_PARAM_MUTABLE_PLAYING : GST_PARAM_MUTABLE_READY;
    GParamSpec* spec = spec_of(c, c.name, static_cast<GParamFlags>(G_PARAM_READWRITE | mutability));
    const std::string type = c.name == "device" ? "device" : spec->value_type == G_TYPE_STRING ? "string" : c.type;
    table.push_back(Property{c.name, type, c.choices, c.live, ""});
    g_object_class_install_property(klass, static_cast<guint>(table.size()), spec);
    for (const std::string& old : histeq::control_aliases(c.name)) {
      if (g_object_class_find_property(klass, old.c_str()) != nullptr) continue;  // a name taken by another control
      const auto deprecated = static_cast<GParamFlags>(G_PARAM_READWRITE | G_PARAM_DEPRECATED | mutability);
      table.push_back(Property{c.name, type, c.choices, c.live, old});
      g_object_class_install_property(klass, static_cast<guint>(table.size()), spec_of(c, old, deprecated));
    }
  }
  return table;
}

histeq::Status set_from_value(histeq::Settings& settings, const Property& p, const GValue* value) {
  if (G_VALUE_HOLDS_ENUM(value)) return settings.set(p.name, static_cast<double>(g_value_get_enum(value)));
  if (G_VALUE_HOLDS_DOUBLE(value)) return settings.set(p.name, g_value_get_double(value));
  if (G_VALUE_HOLDS_BOOLEAN(value)) return settings.set(p.name, g_value_get_boolean(value) != FALSE);
  if (G_VALUE_HOLDS_INT(value)) return settings.set(p.name, static_cast<double>(g_value_get_int(value)));
  const char* s = g_value_get_string(value);
  return settings.set(p.name, std::string(s ? s : ""));
}

bool is_auto_device(const Property& p, const GValue* value) {
  return p.type == "device" && G_VALUE_HOLDS_INT(value) && g_value_get_int(value) < 0;
}

void value_of_text(const Property& p, const std::string& text, GValue* value) {
  if (G_VALUE_HOLDS_ENUM(value))
    g_value_set_enum(value, choice_index(p.choices, text));
  else if (G_VALUE_HOLDS_DOUBLE(value))
    g_value_set_double(value, g_ascii_strtod(text.c_str(), nullptr));
  else if (G_VALUE_HOLDS_BOOLEAN(value))
    g_value_set_boolean(value, flag_of_text(text));
  else if (G_VALUE_HOLDS_INT(value))
    g_value_set_int(value, text.empty() ? -1 : static_cast<int>(g_ascii_strtoll(text.c_str(), nullptr, 10)));
  else
    g_value_set_string(value, text.c_str());
}

}  // namespace histeq_gst
