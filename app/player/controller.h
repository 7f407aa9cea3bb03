// The player's commands and properties, mpv's: what the keys (app/player/bindings.h), --keys,
// --input-conf and the JSON IPC (app/player/ipc.h) run. One interpreter for all of them, so a
// script does what a key does.
//
// Commands (mpv's names and arguments): get_property NAME, get_property_string NAME,
// set_property NAME VALUE, set NAME VALUE, add NAME [VALUE], multiply NAME FACTOR, cycle NAME
// [up|down], cycle-values NAME V1 V2 ..., observe_property ID NAME, unobserve_property ID (the IPC's),
// seek TARGET [relative|absolute|absolute-percent|relative-percent (+exact|keyframes)], frame-step,
// frame-back-step, screenshot [video|window], screenshot-to-file FILE [video|window], show-text TEXT
// [MS], show-progress, keypress KEY, loadfile FILE, quit [CODE], ignore, script-binding
// stats/display-stats[-toggle] (mpv's statistics key: the timing panel); histeq's: swap,
// histeq-export FILE.
//
// Properties: pause, time-pos, duration, percent-pos, speed, eof-reached, path, volume, mute, aid
// (audio), sid (sub), kernel, strength, split, split-pos, compare, plain, every control of the
// control table by its name (mode, tiles, clip-limit, temporal, denoise, ...) with the values the
// command line takes, histeq-kernels (read-only), histeq-timings (read-only: the overlay's last, avg,
// p99 and peak per stage, the drops and the rates), estimated-frame-number (mpv's: the frame on
// screen's number, from its time; read-only); the window's fullscreen, overlay, stats, help and histeq-layout (read-only: the
// overlay's panels).
//
// Errors are mpv's strings: "property not found", "property unavailable", "invalid parameter",
// "error running command"; a failed command changes nothing. A command run with the OSD (keys,
// input.conf; not set_property) shows its effect on the OSD line ("Kernel: cub", "Speed: 1.5x").
//
// Thread: the session's (draw()).
#pragma once

#include <nlohmann/json.hpp>

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "app/player/bindings.h"
#include "app/player/session.h"

namespace histeq::app::player {

class IpcServer;

// What only a window has; the headless player has none of it (then nullptr).
class WindowControl {
 public:
  enum class Flag { fullscreen, overlay, stats, help };
  virtual ~WindowControl() = default;
  virtual bool flag(Flag f) const = 0;
  virtual void set_flag(Flag f, bool on) = 0;
  // Takes a PNG of the video as shown (the split view included, at the video's size: `window`
  // false) or of the whole window (overlay and OSD), at the first window frame that shows the
  // settings and position as set (Session::picture_current()); then `done` with "" or why not.
  virtual void screenshot(const std::string& path, bool window, std::function<void(const std::string& error)> done) = 0;
  // The overlay's panels as drawn last: [{"name", "x", "y", "w", "h"}] in window pixels, and the
  // window's size.
  virtual nlohmann::json layout() const = 0;
};

// The outcome of a command, as mpv's IPC answers it.
struct Reply {
  std::string error = "success";
  nlohmann::json data;  // null: none
  std::string detail;   // histeq's words on an error (the IPC sends them as "detail")
  static Reply fail(const char* error, std::string detail = "") { return {error, nullptr, std::move(detail)}; }
};

class Controller {
 public:
  // `window` may be null (headless). `screenshot_dir`: where `screenshot` writes.
  Controller(Session& session, WindowControl* window, const PlayOptions& options);
  ~Controller();

  // --input-conf (after the defaults), then --input-ipc-server; errors say which.
  Status start(const std::string& input_conf, const std::string& ipc_path);
  const Bindings& bindings() const noexcept { return bindings_; }

  // Runs one command (its words as JSON values: strings, numbers, booleans); `done` gets the reply,
  // at once or (screenshots) once taken. `osd`: show the effect on the OSD line.
  void run(const std::vector<nlohmann::json>& args, bool osd, const std::function<void(const Reply&)>& done);
  Reply run_now(const std::vector<std::string>& args, bool osd = true);  // the reply at once (screenshots: "success" when queued)
  // A key press by name (canonical_key's forms): its binding's commands. False when unbound.
  // `repeat`: an auto-repeat of a held key (only seeks, steps, add and multiply repeat, as mpv's).
  bool key(const std::string& name, bool repeat = false);

  // Each window frame: the IPC's clients (new ones, their requests), the session's events, the
  // observed properties that changed.
  void poll();
  // A property's value (nullptr and an error when there is none).
  Reply get(const std::string& name) const;

  // The property table (properties.cpp).
  struct Property {
    std::string name;
    std::function<Reply()> get;
    std::function<Reply(const nlohmann::json&)> set;  // null: read-only
    std::function<Reply(int)> cycle;                  // +1 / -1; null: flags flip, others cannot
    std::function<std::string()> osd;                 // the OSD line after a change
  };

 private:
  void build_properties();
  void add_sound_properties();
  void add_picture_properties();
  void add_control_properties();
  void add_window_properties();
  Reply clamp_to_range(const Property& p, double wanted);
  const Property* find(const std::string& name) const;
  Reply set(const std::string& name, const nlohmann::json& value, bool osd);
  Reply cycle(const std::string& name, int dir, bool osd);
  Reply add(const std::string& name, double by, bool multiply, bool osd);
  Reply seek(const std::vector<nlohmann::json>& args, bool osd);
  using Args = std::vector<nlohmann::json>;
  Reply command(const Args& args, bool osd, const std::function<void(const Reply&)>& done);
  // The commands, one each (controller.cpp's table).
  Reply cmd_get(const Args& a, bool osd);
  Reply cmd_set(const Args& a, bool osd);
  Reply cmd_cycle(const Args& a, bool osd);
  Reply cmd_add(const Args& a, bool osd);
  Reply cmd_cycle_values(const Args& a, bool osd);
  Reply cmd_step(const Args& a, bool osd);
  Reply cmd_show_text(const Args& a, bool osd);
  Reply cmd_show_progress(const Args& a, bool osd);
  Reply cmd_keypress(const Args& a, bool osd);
  Reply cmd_quit(const Args& a, bool osd);
  Reply cmd_loadfile(const Args& a, bool osd);
  Reply cmd_export(const Args& a, bool osd);
  Reply cmd_swap(const Args& a, bool osd);
  Reply cmd_script_binding(const Args& a, bool osd);
  Reply cmd_ignore(const Args& a, bool osd);
  void on_line(int client, const std::string& line);  // one line of an IPC client
  Reply observe(int client, const std::vector<nlohmann::json>& args, bool add);
  void send_observed();
  Reply screenshot(const std::vector<nlohmann::json>& args, bool to_file, const std::function<void(const Reply&)>& done);
  void show(const std::string& property);  // the OSD line of a property
  nlohmann::json timings() const;

  Session& s_;
  WindowControl* window_;
  const PlayOptions& o_;
  Bindings bindings_;
  std::vector<Property> props_;
  std::unique_ptr<IpcServer> ipc_;
  int64_t screenshots_ = 0;
};

// --keys (PlayOptions::keys) checked against the bindings: the defaults and --input-conf's.
Result<std::vector<ScriptedKey>> parse_scripted_keys(const PlayOptions& o);
// `histeq play --help`'s footer: the default keys (the man page is made from the help).
std::string keys_footer();

}  // namespace histeq::app::player
