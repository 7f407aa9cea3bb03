// The player's keys, in mpv's input.conf syntax: one binding a line, `KEY command args  # help`,
// several commands separated by ';', arguments in "double" (with \ escapes) or 'single' quotes,
// the prefixes no-osd / osd-* (whether the OSD shows the change) and mpv's key names (SPACE, LEFT,
// Ctrl+s, SHARP for '#', F1, ...; a printable character is itself, case mattering: "K" is Shift+k).
//
// The defaults (default_input_conf()) are mpv's keys where mpv binds them (space/p pause, ./,
// steps, arrows seek, [/] speed, i statistics, #/j tracks, q quit, Esc, f, m, 9/0, s) and histeq's
// own actions on keys mpv leaves free (k kernel, b split, B the split's left side, X swap, a plain,
// TAB the overlay, the player's hints' key for each control (hints.h), h/F1/? the keys panel). An
// --input-conf file binds more keys or rebinds these (`KEY ignore` unbinds one), for the commands
// of app/player/controller.h.
//
// No SDL here: the window names its key presses (sdl_key_name() in player.cpp). Thread: any
// (values only).
#pragma once

#include <string>
#include <vector>

#include "core/cuda/status.h"

namespace histeq::app::player {

// A key name in its canonical form: modifiers as Shift+, Ctrl+, Alt+, Meta+ in that order; a shifted
// letter as the capital ("Shift+k" -> "K"); named keys in capitals ("space" -> "SPACE", "esc" ->
// "ESC", "#" -> "SHARP"); "comma" stands for ',' (a --keys list is comma-separated). Errors: an
// unknown name, a key sequence (mpv's "g-p": not supported).
Result<std::string> canonical_key(const std::string& name);

// One command: its words (the first is the command's name), and whether the OSD shows its effect.
struct CommandLine {
  std::vector<std::string> args;
  bool osd = true;  // no-osd: false
};
// A command line of input.conf ("seek 5; show-text 'x'"): its commands, and the text after an
// unquoted '#' (the help) in `comment`. Errors: an unterminated quote.
Result<std::vector<CommandLine>> parse_command_line(const std::string& text, std::string* comment = nullptr);

struct Binding {
  std::string key;                    // canonical
  std::vector<CommandLine> commands;  // empty: `ignore` (unbound)
  std::string text;                   // the commands as written
  std::string help;                   // the line's comment (the keys panel's words)
  std::string origin;                 // "default", or "FILE:LINE"
};

// histeq's default bindings as an input.conf text (the control table's keys included).
std::string default_input_conf();

class Bindings {
 public:
  static Bindings defaults();
  // Binds what `text` binds (lines as above), replacing earlier bindings of the same keys; errors
  // name the origin's line ("FILE:3: ..."). Lines with mpv's {section}s, mouse buttons and wheels are
  // taken and never fire.
  Status parse(const std::string& text, const std::string& origin);
  // --input-conf FILE: parse(the file's text, FILE). Errors name the file.
  Status load(const std::string& path);

  const Binding* find(const std::string& canonical) const;  // nullptr: unbound (or ignored)
  // The bound keys, in the order they were first bound (the keys panel's order).
  std::vector<const Binding*> list() const;
  // "SPACE p . , LEFT ..." for messages.
  std::string names() const;

 private:
  std::vector<Binding> list_;
};

// A canonical key as the keys panel shows it: "SPACE" -> "space", "LEFT" -> an arrow (UTF-8 when
// `unicode`, else "left"), "SHARP" -> "#", "ESC" -> "Esc"; others as they are.
std::string describe_key(const std::string& canonical, bool unicode = true);
// The keys as a text table (`histeq play --help`'s footer, so the man page has it): "  KEY  help".
std::string keys_help_text(const Bindings& b);

}  // namespace histeq::app::player
