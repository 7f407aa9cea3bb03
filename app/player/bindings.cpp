#include "app/player/bindings.h"

#include <algorithm>
#include <cctype>
#include <fstream>
#include <sstream>

#include "app/player/hints.h"
#include "core/equalize/controls.h"

namespace histeq::app::player {
namespace {

// mpv's key names that histeq knows (mouse buttons and media keys too: bound, they never fire).
const char* const kNamed[] = {
    "SPACE", "ENTER", "TAB", "BS", "DEL", "INS", "HOME", "END", "PGUP", "PGDWN", "ESC", "PRINT", "LEFT", "RIGHT", "UP",
    "DOWN", "SHARP", "KP0", "KP1", "KP2", "KP3", "KP4", "KP5", "KP6", "KP7", "KP8", "KP9", "KP_DEC", "KP_ENTER", "KP_ADD",
    "KP_SUBTRACT", "KP_MULTIPLY", "KP_DIVIDE", "KP_DEL", "KP_INS", "PLAY", "PAUSE", "PLAYPAUSE", "PLAYONLY", "PAUSEONLY",
    "STOP", "FORWARD", "REWIND", "NEXT", "PREV", "VOLUME_UP", "VOLUME_DOWN", "MUTE", "MENU", "POWER", "CLOSE_WIN",
    "MBTN_LEFT", "MBTN_MID", "MBTN_RIGHT", "MBTN_LEFT_DBL", "MBTN_MID_DBL", "MBTN_RIGHT_DBL", "MBTN_BACK", "MBTN_FORWARD",
    "WHEEL_UP", "WHEEL_DOWN", "WHEEL_LEFT", "WHEEL_RIGHT", "ZOOMIN", "ZOOMOUT",
};

std::string upper(std::string s) {
  for (char& c : s) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return s;
}

bool starts_with_ci(const std::string& s, const std::string& prefix) {
  return s.size() >= prefix.size() && upper(s.substr(0, prefix.size())) == upper(prefix);
}

// The key without modifiers, canonical; "" when unknown.
std::string base_key(const std::string& k) {
  if (k == "#") return "SHARP";
  if (k == " ") return "SPACE";
  if (k.size() == 1) return static_cast<unsigned char>(k[0]) > 0x20 && k[0] != 0x7f ? k : "";
  // One UTF-8 character (a key of another keyboard layout).
  if (static_cast<unsigned char>(k[0]) >= 0xc0 && k.size() <= 4 &&
      std::all_of(k.begin() + 1, k.end(), [](char c) { return (static_cast<unsigned char>(c) & 0xc0) == 0x80; }))
    return k;
  const std::string u = upper(k);
  if (u == "COMMA") return ",";
  if (u.size() >= 2 && u[0] == 'F' && std::all_of(u.begin() + 1, u.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)); })) {
    const int n = std::stoi(u.substr(1));
    return n >= 1 && n <= 24 ? u : "";
  }
  for (const char* n : kNamed)
    if (u == n) return u;
  return "";
}

std::string trim(const std::string& s) {
  size_t a = 0, b = s.size();
  while (a < b && std::isspace(static_cast<unsigned char>(s[a]))) ++a;
  while (b > a && std::isspace(static_cast<unsigned char>(s[b - 1]))) --b;
  return s.substr(a, b - a);
}

// A quoted word from `text` at `i` (at the quote); appends it to `word`. False: no closing quote.
bool quoted(const std::string& text, size_t& i, std::string& word) {
  const char q = text[i++];
  while (i < text.size() && text[i] != q) {
    if (q == '"' && text[i] == '\\' && i + 1 < text.size()) {
      const char e = text[++i];
      word += e == 'n' ? '\n' : e == 't' ? '\t' : e;
    } else {
      word += text[i];
    }
    ++i;
  }
  if (i >= text.size()) return false;
  ++i;  // the closing quote
  return true;
}

// mpv's prefixes that change how a command runs: histeq keeps the OSD's.
bool prefix(const std::string& w, CommandLine& c) {
  if (w == "no-osd") {
    c.osd = false;
    return true;
  }
  static const char* const others[] = {"osd-auto", "osd-bar", "osd-msg", "osd-msg-bar", "raw", "expand-properties",
                                       "repeatable", "nonrepeatable", "async", "sync", "nonscalable"};
  for (const char* o : others)
    if (w == o) {
      if (w.rfind("osd-", 0) == 0) c.osd = true;
      return true;
    }
  return false;
}

const char* const kDefaultKeys = R"(# histeq play's keys, in mpv's input.conf syntax: KEY command args  # what it does
SPACE cycle pause            # pause / play
p cycle pause                # pause / play
. frame-step                 # one frame forward (pauses)
, frame-back-step            # one frame back (pauses)
RIGHT seek 5                 # seek 5 s forward
LEFT seek -5                 # seek 5 s back
UP seek 60                   # seek 60 s forward
DOWN seek -60                # seek 60 s back
[ multiply speed 1/1.1       # slower (the sound keeps its pitch)
] multiply speed 1.1         # faster
{ multiply speed 0.5         # half the speed
} multiply speed 2.0         # double the speed
BS set speed 1.0             # normal speed
i cycle stats                # the statistics (timing panel) on / off
I cycle stats                # the statistics (timing panel) on / off
SHARP cycle audio            # next audio track (or none)
j cycle sub                  # next subtitle track (histeq shows none)
J cycle sub down             # previous subtitle track
m cycle mute                 # mute / unmute the sound
9 add volume -5              # volume down (5%)
0 add volume 5               # volume up (5%, up to 130%)
/ add volume -5              # volume down (5%)
* add volume 5               # volume up (5%)
f cycle fullscreen           # fullscreen on / off
ESC set fullscreen no        # leave fullscreen (closes the keys panel first)
s screenshot                 # screenshot of the video as shown (PNG, --screenshot-dir)
S screenshot video           # screenshot of the video as shown
Ctrl+s screenshot window     # screenshot of the window, overlay and OSD included
o show-progress              # the position on the OSD
q quit                       # quit
Q quit                       # quit
# histeq's own, on keys mpv leaves free
k cycle kernel               # next histogram kernel
K cycle kernel down          # previous histogram kernel
b cycle split                # split view: the input (or settings B) left, the output right
B cycle compare              # the split's left side: the input / settings B
X swap                       # swap the settings of the two sides (A <-> B)
a cycle plain                # plain equalization / back
TAB cycle overlay            # the overlay on / off
DEL cycle overlay            # the overlay on / off
)";

}  // namespace

Result<std::string> canonical_key(const std::string& name) {
  auto bad = [&](const std::string& why) { return HISTEQ_ERROR(Code::invalid_argument, "key '" + name + "': " + why); };
  if (name.empty()) return bad("no key");
  bool shift = false, ctrl = false, alt = false, meta = false;
  std::string k = name;
  for (bool more = true; more && k.size() > 1;) {
    more = false;
    for (auto [p, flag] : {std::pair<const char*, bool*>{"shift+", &shift}, {"ctrl+", &ctrl}, {"alt+", &alt}, {"meta+", &meta}})
      if (starts_with_ci(k, p) && k.size() > std::string(p).size()) {
        *flag = true;
        k = k.substr(std::string(p).size());
        more = true;
      }
  }
  if (k.size() > 1 && k.find('-') != std::string::npos && base_key(k).empty()) return bad("key sequences (\"g-p\") are not supported");
  std::string base = base_key(k);
  if (base.empty()) return bad("no such key (mpv's names: a character, SPACE, ENTER, TAB, BS, ESC, DEL, LEFT, UP, F1, SHARP, ...)");
  if (shift && base.size() == 1 && std::isalpha(static_cast<unsigned char>(base[0]))) {
    base = std::string(1, static_cast<char>(std::toupper(static_cast<unsigned char>(base[0]))));
    shift = false;
  }
  return std::string(shift ? "Shift+" : "") + (ctrl ? "Ctrl+" : "") + (alt ? "Alt+" : "") + (meta ? "Meta+" : "") + base;
}

Result<std::vector<CommandLine>> parse_command_line(const std::string& text, std::string* comment) {
  std::vector<CommandLine> out(1);
  size_t i = 0;
  while (i < text.size()) {
    const char c = text[i];
    if (std::isspace(static_cast<unsigned char>(c))) {
      ++i;
    } else if (c == '#') {
      if (comment != nullptr) *comment = trim(text.substr(i + 1));
      break;
    } else if (c == ';') {
      out.emplace_back();
      ++i;
    } else {
      std::string word;
      while (i < text.size() && !std::isspace(static_cast<unsigned char>(text[i])) && text[i] != ';') {
        if (text[i] == '"' || text[i] == '\'') {
          if (!quoted(text, i, word)) return HISTEQ_ERROR(Code::invalid_argument, "unterminated quote in '" + text + "'");
        } else {
          word += text[i++];
        }
      }
      CommandLine& cl = out.back();
      if (!(cl.args.empty() && prefix(word, cl))) cl.args.push_back(word);
    }
  }
  out.erase(std::remove_if(out.begin(), out.end(), [](const CommandLine& c) { return c.args.empty(); }), out.end());
  return out;
}

std::string default_input_conf() {
  std::string text = kDefaultKeys;
  // The controls' keys (the player's hints, hints.h), after histeq's own.
  for (const auto& c : eq::controls()) {
    const ControlHints h = hints_of(c);
    if (c.live && !h.key.empty()) text += h.key + " cycle " + c.name + "  # " + h.key_help + "\n";
  }
  text += "h cycle help                 # this panel (the keys)\n";
  text += "F1 cycle help                # this panel (the keys)\n";
  text += "? cycle help                 # this panel (the keys)\n";
  return text;
}

Bindings Bindings::defaults() {
  Bindings b;
  const Status s = b.parse(default_input_conf(), "default");
  (void)s;  // the defaults parse (tests/unit/test_player_model.cpp)
  return b;
}

Status Bindings::parse(const std::string& text, const std::string& origin) {
  std::istringstream in(text);
  std::string line;
  for (int n = 1; std::getline(in, line); ++n) {
    const std::string t = trim(line);
    if (t.empty() || t[0] == '#') continue;
    const std::string where = origin == "default" ? "default bindings, line " + std::to_string(n) : origin + ":" + std::to_string(n);
    size_t end = 0;
    while (end < t.size() && !std::isspace(static_cast<unsigned char>(t[end]))) ++end;
    auto key = canonical_key(t.substr(0, end));
    if (!key) return HISTEQ_ERROR(Code::invalid_argument, where + ": " + key.status().message());
    const std::string rest = trim(t.substr(end));
    if (!rest.empty() && rest[0] == '{') continue;  // mpv's input sections: histeq has none
    Binding b;
    b.key = *key;
    b.origin = where;
    auto cmds = parse_command_line(rest, &b.help);
    if (!cmds) return HISTEQ_ERROR(Code::invalid_argument, where + ": " + cmds.status().message());
    if (cmds->empty()) return HISTEQ_ERROR(Code::invalid_argument, where + ": '" + b.key + "' has no command (to unbind it: " + b.key + " ignore)");
    const size_t hash = rest.find(" #");
    b.text = trim(b.help.empty() ? rest : rest.substr(0, hash == std::string::npos ? rest.size() : hash));
    if (cmds->size() == 1 && cmds->front().args == std::vector<std::string>{"ignore"}) cmds->clear();
    b.commands = std::move(cmds.value());
    auto it = std::find_if(list_.begin(), list_.end(), [&](const Binding& x) { return x.key == b.key; });
    if (it != list_.end()) *it = std::move(b);
    else list_.push_back(std::move(b));
  }
  return Status::ok();
}

Status Bindings::load(const std::string& path) {
  std::ifstream f(path);
  if (!f) return HISTEQ_ERROR(Code::not_found, "--input-conf " + path + ": cannot read it");
  std::stringstream ss;
  ss << f.rdbuf();
  return parse(ss.str(), path);
}

const Binding* Bindings::find(const std::string& canonical) const {
  for (const auto& b : list_)
    if (b.key == canonical) return b.commands.empty() ? nullptr : &b;
  return nullptr;
}

std::vector<const Binding*> Bindings::list() const {
  std::vector<const Binding*> out;
  for (const auto& b : list_)
    if (!b.commands.empty()) out.push_back(&b);
  return out;
}

std::string Bindings::names() const {
  std::string s;
  for (const Binding* b : list()) s += (s.empty() ? "" : " ") + b->key;
  return s;
}

std::string describe_key(const std::string& k, bool unicode) {
  const size_t plus = k.size() > 1 ? k.rfind('+', k.size() - 2) : std::string::npos;
  const std::string mods = plus == std::string::npos ? "" : k.substr(0, plus + 1), base = k.substr(mods.size());
  static const std::pair<const char*, const char*> names[] = {
      {"SPACE", "space"}, {"SHARP", "#"}, {"ESC", "Esc"}, {"BS", "Backspace"}, {"DEL", "Del"}, {"TAB", "Tab"}, {"ENTER", "Enter"}};
  static const std::pair<const char*, const char*> arrows[] = {
      {"LEFT", "\xe2\x86\x90"}, {"RIGHT", "\xe2\x86\x92"}, {"UP", "\xe2\x86\x91"}, {"DOWN", "\xe2\x86\x93"}};
  for (auto [from, to] : names)
    if (base == from) return mods + to;
  for (auto [from, to] : arrows)
    if (base == from) {
      std::string word = from;
      for (size_t i = 1; i < word.size(); ++i) word[i] = static_cast<char>(std::tolower(static_cast<unsigned char>(word[i])));
      return mods + (unicode ? std::string(to) : word);
    }
  return k;
}

std::string keys_help_text(const Bindings& b) {
  std::string out;
  for (const Binding* k : b.list()) {
    std::string key = describe_key(k->key, false);
    if (key.size() < 10) key += std::string(10 - key.size(), ' ');
    out += "  " + key + " " + (k->help.empty() ? k->text : k->help) + "\n";
  }
  return out;
}

}  // namespace histeq::app::player
