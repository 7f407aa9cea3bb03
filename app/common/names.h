// File names in what histeq prints: the terminal, --list, JSON. A name is any bytes but '/' and NUL
// (not necessarily UTF-8, possibly with newlines, tabs or terminal escape sequences); what is
// printed must stay one line, must not drive the terminal, and must be valid JSON.
//
// The escaping (escape_name): every byte of a valid UTF-8 character that is printable passes
// through; a backslash becomes "\\"; every other byte (C0 controls, DEL, the C1 controls
// U+0080..U+009F, bytes that are not valid UTF-8) becomes "\xNN" (two lower-case hex digits). It is
// reversible (unescape_name): "\\" -> '\', "\xNN" -> that byte. Pure functions, any thread.
#pragma once

#include <nlohmann/json_fwd.hpp>

#include <string>

namespace histeq::app {

// Whether `s` is valid UTF-8 (shortest forms, no surrogates, at most U+10FFFF).
bool valid_utf8(const std::string& s);

// The reversible escaping above.
std::string escape_name(const std::string& s);
// Its inverse; a malformed escape is kept as it is.
std::string unescape_name(const std::string& s);

// For a message on the terminal: control bytes and invalid UTF-8 as "\xNN", a backslash left as it
// is (a message is read, not parsed; names inside it were escaped with escape_name where the app
// formatted them, and core's messages get this last line of defence).
std::string terminal_safe(const std::string& s);

// j[key] = name; when the name is not valid UTF-8, j[key] holds it with U+FFFD for the bad bytes
// (the dump's replacement) and j[key + "_escaped"] the name's exact bytes by escape_name.
void put_name(nlohmann::json& j, const std::string& key, const std::string& name);

// j.dump(indent) that never throws on bytes that are not UTF-8: they become U+FFFD.
std::string dump_json(const nlohmann::json& j, int indent = -1);

}  // namespace histeq::app
