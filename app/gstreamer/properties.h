// The histeq element's GObject properties, derived from histeq::controls() (the project's control
// table): a choice becomes an enum property (its values' nicks the control's spellings, their
// names what each means), a number a double with its range, a flag a boolean, a grid (and any
// other type) a string; each with the control's help as its blurb and its default. The numbers
// that change while playing are controllable (GstController: gst_object_sync_values drives them
// from the stream time). The device is an int, -1 = auto (the CUDA memory's device, else the
// library's default), as nvcodec's elements have it. Values travel to and from histeq::Settings in
// the controls' text form, so the element never interprets a control itself.
//
// Threads: install() runs once, from the element's class_init; the rest are pure functions.
#pragma once

#include <glib-object.h>
#include <histeq/histeq.hpp>

#include <string>
#include <vector>

namespace histeq_gst {

struct Property {
  std::string name;    // the control's name ("clip-limit"), also the property's name
  std::string type;    // the control's type: "choice", "number", "flag", "grid", ...; "device"
  std::vector<std::string> choices;
  bool live = true;    // changeable while playing (else only in NULL or READY)
  std::string old_name;  // set for a renamed control's old name: a deprecated property that sets `name`
};

// Installs one property per control on `klass`, with ids 1, 2, ... in the order of the returned
// table (the table lives for the process); and one per old name of a renamed control
// (histeq::control_aliases), flagged deprecated, which sets the control and warns.
const std::vector<Property>& install_properties(GObjectClass* klass);

// Sets the property `p` in `settings` from `value` through the typed setter of its type (an enum's
// index, a double, a boolean, the device's int; text only for string properties): no text
// round-trip, so no locale or precision in between. The device's -1 (auto) is the caller's.
histeq::Status set_from_value(histeq::Settings& settings, const Property& p, const GValue* value);
// Whether `value` is the device's -1 (auto).
bool is_auto_device(const Property& p, const GValue* value);

// Stores the text form `text` (histeq::Settings::get) into `value`, a value of the property `p`.
void value_of_text(const Property& p, const std::string& text, GValue* value);

}  // namespace histeq_gst
