// The controller's commands, the keys and the IPC's traffic; the properties are in properties.cpp.
#include "app/player/controller.h"

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <set>

#include "app/common/run_common.h"
#include "app/player/controller_values.h"
#include "app/player/ipc.h"

namespace histeq::app::player {
namespace {

// mpv repeats a held key's command only for these (and histeq's kernel cycling).
bool repeatable(const CommandLine& c) {
  const std::string& n = c.args.front();
  return n == "seek" || n == "frame-step" || n == "frame-back-step" || n == "add" || n == "multiply" ||
         (n == "cycle" && c.args.size() > 1 && c.args[1] == "kernel");
}

std::vector<nlohmann::json> as_json(const std::vector<std::string>& words) { return {words.begin(), words.end()}; }

}  // namespace

Controller::Controller(Session& session, WindowControl* window, const PlayOptions& options)
    : s_(session), window_(window), o_(options), bindings_(Bindings::defaults()) {
  build_properties();
}

Controller::~Controller() = default;

Status Controller::start(const std::string& input_conf, const std::string& ipc_path) {
  if (!input_conf.empty()) HISTEQ_TRY(bindings_.load(input_conf));
  if (!ipc_path.empty()) {
    auto s = IpcServer::open(ipc_path);
    if (!s) return s.status();
    ipc_ = std::move(s.value());
  }
  return Status::ok();
}

bool Controller::key(const std::string& name, bool repeat) {
  auto k = canonical_key(name);
  if (!k) return false;
  // Esc closes the keys panel before it does what it is bound to (mpv's: leave fullscreen).
  if (*k == "ESC" && window_ != nullptr && window_->flag(WindowControl::Flag::help)) {
    window_->set_flag(WindowControl::Flag::help, false);
    return true;
  }
  const Binding* b = bindings_.find(*k);
  if (b == nullptr) return false;
  for (const CommandLine& c : b->commands) {
    if (repeat && !repeatable(c)) continue;
    run(as_json(c.args), c.osd, [this](const Reply& r) {
      if (r.error != "success") s_.osd(r.detail.empty() ? r.error : r.detail, 3.0, true);
    });
  }
  return true;
}

Reply Controller::run_now(const std::vector<std::string>& args, bool osd) {
  Reply out;
  bool answered = false;
  run(as_json(args), osd, [&](const Reply& r) {
    if (!answered) out = r;
    answered = true;
  });
  return out;  // a screenshot still to be taken: "success" (it is queued)
}

void Controller::run(const std::vector<nlohmann::json>& args, bool osd, const std::function<void(const Reply&)>& done) {
  if (args.empty() || !args.front().is_string()) {
    done(Reply::fail("invalid parameter", "a command is a list whose first item is its name"));
    return;
  }
  const std::string& name = args.front().get_ref<const std::string&>();
  if (name == "screenshot" || name == "screenshot-to-file") {
    if (Reply r = screenshot(args, name == "screenshot-to-file", done); r.error != "pending") done(r);
    return;
  }
  done(command(args, osd, done));
}

namespace {

std::string word(const std::vector<nlohmann::json>& a, size_t i) { return i < a.size() ? text_value(a[i]) : std::string(); }

}  // namespace

// Everything but the screenshots: the command table.
Reply Controller::command(const std::vector<nlohmann::json>& a, bool osd, const std::function<void(const Reply&)>&) {
  using Handler = Reply (Controller::*)(const Args&, bool);
  static const std::pair<const char*, Handler> table[] = {
      {"get_property", &Controller::cmd_get},         {"get_property_string", &Controller::cmd_get},
      {"set_property", &Controller::cmd_set},         {"set_property_string", &Controller::cmd_set},
      {"set", &Controller::cmd_set},                  {"cycle", &Controller::cmd_cycle},
      {"add", &Controller::cmd_add},                  {"multiply", &Controller::cmd_add},
      {"cycle-values", &Controller::cmd_cycle_values}, {"seek", &Controller::seek},
      {"frame-step", &Controller::cmd_step},          {"frame-back-step", &Controller::cmd_step},
      {"show-text", &Controller::cmd_show_text},      {"show-progress", &Controller::cmd_show_progress},
      {"keypress", &Controller::cmd_keypress},        {"quit", &Controller::cmd_quit},
      {"quit-watch-later", &Controller::cmd_quit},    {"stop", &Controller::cmd_quit},
      {"loadfile", &Controller::cmd_loadfile},        {"histeq-export", &Controller::cmd_export},
      {"swap", &Controller::cmd_swap},                {"script-binding", &Controller::cmd_script_binding},
      {"ignore", &Controller::cmd_ignore},
  };
  const std::string& name = a.front().get_ref<const std::string&>();
  for (const auto& [n, handler] : table)
    if (name == n) return (this->*handler)(a, osd);
  if (name == "observe_property" || name == "unobserve_property") return Reply::fail("invalid parameter", name + " is the IPC's");
  return Reply::fail("invalid parameter", "no such command: " + name);
}

Reply Controller::cmd_get(const Args& a, bool) {
  if (a.size() != 2) return Reply::fail("invalid parameter", word(a, 0) + " NAME");
  Reply r = get(word(a, 1));
  if (word(a, 0) == "get_property_string" && r.error == "success") r.data = string_value(r.data);
  return r;
}

// set_property changes nothing on the OSD (mpv's); `set` shows its effect.
Reply Controller::cmd_set(const Args& a, bool osd) {
  if (a.size() != 3) return Reply::fail("invalid parameter", word(a, 0) + " NAME VALUE");
  return set(word(a, 1), a[2], osd && word(a, 0) == "set");
}

Reply Controller::cmd_cycle(const Args& a, bool osd) {
  const std::string dir = word(a, 2);
  if (a.size() < 2 || a.size() > 3 || (a.size() == 3 && dir != "up" && dir != "down")) return Reply::fail("invalid parameter", "cycle NAME [up|down]");
  return cycle(word(a, 1), dir == "down" ? -1 : 1, osd);
}

Reply Controller::cmd_add(const Args& a, bool osd) {
  const bool multiply = word(a, 0) == "multiply";
  const auto by = a.size() == 3 ? number_value(a[2]) : std::optional<double>(1.0);
  if (a.size() < 2 || a.size() > 3 || (multiply && a.size() != 3) || !by)
    return Reply::fail("invalid parameter", word(a, 0) + " NAME " + (multiply ? "FACTOR" : "[VALUE]"));
  return add(word(a, 1), *by, multiply, osd);
}

// cycle-values NAME V1 V2 ...: the value after the one set now (the first when it is none of them).
Reply Controller::cmd_cycle_values(const Args& a, bool osd) {
  if (a.size() < 4) return Reply::fail("invalid parameter", "cycle-values NAME VALUE1 VALUE2 ...");
  const Reply now = get(word(a, 1));
  const std::string cur = now.error == "success" ? string_value(now.data) : "";
  size_t next = 2;
  for (size_t i = 2; i < a.size(); ++i)
    if (word(a, i) == cur) next = i + 1 < a.size() ? i + 1 : 2;
  return set(word(a, 1), a[next], osd);
}

Reply Controller::cmd_step(const Args& a, bool osd) {
  const bool forward = word(a, 0) == "frame-step";
  if (osd) s_.osd(forward ? "Step: one frame forward" : "Step: one frame back");  // an error says more, after
  if (forward) s_.command(Command::step);
  else s_.step_back();
  return {};
}

Reply Controller::cmd_show_text(const Args& a, bool) {
  if (a.size() < 2) return Reply::fail("invalid parameter", "show-text TEXT [MS]");
  const auto ms = a.size() > 2 ? number_value(a[2]) : std::optional<double>(kOsdSeconds * 1000);
  s_.osd(word(a, 1), ms && *ms >= 0 ? *ms / 1000 : kOsdSeconds);
  return {};
}

Reply Controller::cmd_show_progress(const Args&, bool) {
  show("time-pos");
  return {};
}

Reply Controller::cmd_keypress(const Args& a, bool) {
  if (a.size() != 2) return Reply::fail("invalid parameter", "keypress KEY");
  if (auto k = canonical_key(word(a, 1)); !k) return Reply::fail("invalid parameter", k.status().message());
  key(word(a, 1));
  return {};
}

Reply Controller::cmd_quit(const Args& a, bool) {
  const auto code = a.size() > 1 ? number_value(a[1]) : std::optional<double>(0);
  if (!code || *code < 0 || *code > 255 || *code != std::floor(*code)) return Reply::fail("invalid parameter", "quit [CODE 0..255]");
  if (*code != 0) s_.set_exit_code(static_cast<int>(*code));
  s_.quit();
  return {};
}

Reply Controller::cmd_loadfile(const Args& a, bool) {
  if (a.size() < 2 || a.size() > 3) return Reply::fail("invalid parameter", "loadfile FILE [replace]");
  s_.open(word(a, 1));
  return {};
}

Reply Controller::cmd_export(const Args& a, bool) {
  if (a.size() != 2) return Reply::fail("invalid parameter", "histeq-export FILE");
  s_.start_export(word(a, 1));
  return {};
}

Reply Controller::cmd_swap(const Args&, bool osd) {
  s_.command(Command::swap);
  if (osd) s_.osd("Swapped: A \xe2\x86\x94 B");
  return {};
}

// mpv's statistics keys (i, I): histeq's statistics panel.
Reply Controller::cmd_script_binding(const Args& a, bool osd) {
  if (word(a, 1) == "stats/display-stats" || word(a, 1) == "stats/display-stats-toggle") return cycle("stats", 1, osd);
  return Reply::fail("invalid parameter", "histeq runs no scripts (script-binding " + word(a, 1) + ")");
}

Reply Controller::cmd_ignore(const Args&, bool) { return {}; }

// seek TARGET [FLAGS]: relative (the default), absolute, absolute-percent, relative-percent,
// joined by '+' with exact or keyframes (histeq's seeks are always exact).
namespace {

// seek's flags ("absolute+exact"): false on an unknown one.
bool seek_flags(const std::string& flags, bool& absolute, bool& percent) {
  static const std::set<std::string> known = {"absolute", "relative", "absolute-percent", "relative-percent", "exact", "keyframes"};
  for (size_t start = 0; start <= flags.size();) {
    const size_t plus = flags.find('+', start);
    const std::string f = flags.substr(start, plus == std::string::npos ? std::string::npos : plus - start);
    if (known.count(f) == 0) return false;
    absolute |= f.rfind("absolute", 0) == 0;
    percent |= f.size() > 8 && f.compare(f.size() - 8, 8, "-percent") == 0;
    if (plus == std::string::npos) break;
    start = plus + 1;
  }
  return true;
}

}  // namespace

Reply Controller::seek(const std::vector<nlohmann::json>& a, bool osd) {
  const auto target = a.size() >= 2 ? number_value(a[1]) : std::nullopt;
  bool absolute = false, percent = false;
  if (!target || a.size() > 3 || (a.size() == 3 && !seek_flags(text_value(a[2]), absolute, percent)))
    return Reply::fail("invalid parameter", "seek TARGET [relative|absolute|absolute-percent|relative-percent][+exact|+keyframes]");
  const double duration = s_.info().duration_s;
  if (percent && !(duration > 0)) return Reply::fail("property unavailable", "seek by percent: the input's length is unknown");
  if (!s_.state().can_seek) return Reply::fail("error running command", s_.info().name + ": this source cannot seek");
  const double by = percent ? *target / 100 * duration : *target;
  s_.seek(absolute ? by : s_.seek_base() + by);
  if (osd) show("time-pos");
  return {};
}

Reply Controller::screenshot(const std::vector<nlohmann::json>& a, bool to_file, const std::function<void(const Reply&)>& done) {
  const size_t first_flag = to_file ? 2 : 1;
  if ((to_file && a.size() < 2) || a.size() > first_flag + 1)
    return Reply::fail("invalid parameter", to_file ? "screenshot-to-file FILE [video|window]" : "screenshot [video|window]");
  const std::string flag = a.size() > first_flag ? text_value(a[first_flag]) : "video";
  // mpv's "subtitles" (the default) is the video here: histeq draws no subtitles.
  if (flag != "video" && flag != "window" && flag != "subtitles")
    return Reply::fail("invalid parameter", "screenshot: video, window or subtitles, not '" + flag + "'");
  if (window_ == nullptr) return Reply::fail("error running command", "headless play draws no picture: screenshots need the window");
  std::string path = to_file ? text_value(a[1]) : "";
  if (path.empty() && to_file) return Reply::fail("invalid parameter", "screenshot-to-file: no file name");
  Session& s = s_;
  window_->screenshot(path, flag == "window", [done, &s, to_file](const std::string& error) {
    if (!error.empty()) done(Reply::fail("error running command", error));
    else done({});
    if (!to_file && error.empty()) s.osd("Screenshot taken");
  });
  return Reply::fail("pending");
}

Result<std::vector<ScriptedKey>> parse_scripted_keys(const PlayOptions& o) {
  Bindings b = Bindings::defaults();
  if (!o.input_conf.empty()) HISTEQ_TRY(b.load(o.input_conf));
  auto known = [&b](const std::string& name) {
    auto k = canonical_key(name);
    return k.is_ok() && b.find(*k) != nullptr;
  };
  return parse_key_script(o.keys, known, b.names());
}

std::string keys_footer() {
  return "Keys (the window; mpv's, in its input.conf syntax; --input-conf FILE rebinds them):\n" + keys_help_text(Bindings::defaults()) +
         "Scripts: --input-ipc-server PATH takes mpv's JSON IPC (see the README's Player section).";
}

// --- the IPC --------------------------------------------------------------------------------

void Controller::poll() {
  if (ipc_) {
    ipc_->poll([this](int client, const std::string& line) { on_line(client, line); });
    send_observed();
  }
  for (const std::string& e : s_.take_events()) {
    if (!ipc_ || e == "shutdown") continue;  // the server says "shutdown" itself, on closing
    nlohmann::json m = {{"event", e}};
    if (e == "end-file") m["reason"] = "eof";
    ipc_->broadcast(m);
  }
}

void Controller::on_line(int client, const std::string& line) {
  if (line.find_first_not_of(" \t") == std::string::npos) return;
  if (line.front() != '{') {  // an input.conf command line, unanswered (mpv's text protocol)
    auto cmds = parse_command_line(line);
    if (cmds)
      for (const CommandLine& c : *cmds) run(as_json(c.args), c.osd, [](const Reply&) {});
    return;
  }
  nlohmann::json req = nlohmann::json::parse(line, nullptr, false);
  nlohmann::json id = 0;
  if (req.is_object() && req.contains("request_id")) id = req["request_id"];
  IpcServer* ipc = ipc_.get();
  auto answer = [ipc, client, id](const Reply& r) {
    nlohmann::json m = {{"error", r.error}, {"data", r.data}, {"request_id", id}};
    if (!r.detail.empty()) m["detail"] = r.detail;
    ipc->send(client, m);
  };
  if (!req.is_object() || !req.contains("command") || !req["command"].is_array() || req["command"].empty()) {
    answer(Reply::fail("invalid parameter", "a request is {\"command\": [NAME, ARGS...], \"request_id\": N}"));
    return;
  }
  std::vector<nlohmann::json> args = req["command"].get<std::vector<nlohmann::json>>();
  for (const auto& v : args)
    if (!v.is_string() && !v.is_number() && !v.is_boolean()) {
      answer(Reply::fail("invalid parameter", "command arguments are strings, numbers or booleans"));
      return;
    }
  const std::string name = args.front().is_string() ? args.front().get<std::string>() : "";
  if (name == "observe_property" || name == "unobserve_property") {
    answer(observe(client, args, name == "observe_property"));
    return;
  }
  // set_property and get_property change nothing on the OSD (mpv's); other commands show their effect.
  const bool osd = name != "set_property" && name != "set_property_string";
  run(args, osd, answer);
}

Reply Controller::observe(int client, const std::vector<nlohmann::json>& a, bool add) {
  std::vector<IpcServer::Observer>* obs = ipc_->observers(client);
  const auto id = a.size() >= 2 ? number_value(a[1]) : std::nullopt;
  if (obs == nullptr || !id || a.size() != (add ? 3u : 2u))
    return Reply::fail("invalid parameter", add ? "observe_property ID NAME" : "unobserve_property ID");
  if (!add) {
    obs->erase(std::remove_if(obs->begin(), obs->end(), [&](const IpcServer::Observer& o) { return o.id == static_cast<int64_t>(*id); }),
               obs->end());
    return {};
  }
  const std::string name = text_value(a[2]);
  if (find(name) == nullptr) return Reply::fail("property not found", name);
  obs->push_back({static_cast<int64_t>(*id), name, nullptr, false});
  return {};
}

// A property-change event for each observed property whose value moved (the first one at once, as
// mpv sends it on observe_property).
void Controller::send_observed() {
  for (int client : ipc_->clients()) {
    std::vector<IpcServer::Observer>* obs = ipc_->observers(client);
    if (obs == nullptr) continue;
    for (IpcServer::Observer& o : *obs) {
      const Reply r = get(o.name);
      const nlohmann::json value = r.error == "success" ? r.data : nlohmann::json();
      if (o.sent && value == o.last) continue;
      nlohmann::json m = {{"event", "property-change"}, {"id", o.id}, {"name", o.name}};
      if (r.error == "success") m["data"] = value;
      ipc_->send(client, m);
      o.last = value;
      o.sent = true;
    }
  }
}

}  // namespace histeq::app::player
