// What `histeq play` was asked for: the command line's options, read by the headless player
// (app/commands/play.cpp) and by the player window (app/player/).
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include "core/equalize/quality.h"
#include "core/pipeline/equalizer.h"
#include "core/video/media_time.h"

namespace CLI {
class App;
class Option;
}

namespace histeq::app {

// The picture-quality options of play, export and quality, one per control of the table
// (core/equalize/controls.h: --mode, --tiles, --clip-limit, ..., --denoise, and the options of any
// other operation), plus --plain; as typed; resolve() checks them and gives the settings. Defaults:
// eq::default_quality().
struct QualityArgs {
  QualityArgs();
  std::map<std::string, std::string> text;  // choice and grid controls, by name ("mode" -> "clahe")
  std::map<std::string, double> number;     // number controls ("clip-limit" -> 1.1)
  std::map<std::string, bool> flag;         // flag controls ("textbook")
  bool plain = false;  // plain equalization: the controls marked plain at plain_quality()'s values
  // The old names given (a renamed control's hidden option, e.g. --limit): name -> its option.
  std::map<std::string, CLI::Option*> old_names;
  Result<eq::Quality> resolve() const;
  // What to say about the old names given (eq::alias_warning), one line each; empty when none.
  std::vector<std::string> warnings() const;
};

// The picture-quality options (QualityArgs) on a command (play, export, quality), from the control
// table; --plain excludes the options of the controls it sets. quality_options.cpp.
void add_quality_options(CLI::App* cmd, QualityArgs& q);
// `histeq quality`'s configurations: plain, textbook, default, clahe, clip, temporal, chroma, or
// NAME:key=value:... (the defaults with the controls of those configuration keys changed).
// An old key (an alias) is taken, its warning added to `warnings` when given.
Result<eq::Quality> quality_config(const std::string& spec, std::vector<std::string>* warnings = nullptr);
std::string quality_configs_help();  // --configs' help: the presets and the keys
// The control table as Markdown (docs/controls.md; `histeq controls --markdown`).
std::string controls_markdown();

struct PlayOptions {
  std::string input;                 // empty: synthetic (or --webcam)
  bool headless = false;
  std::string webcam;                // with --webcam: the device ("" = /dev/video0)
  CLI::Option* webcam_opt = nullptr; // to tell "--webcam" from its absence
  std::string size = "1920x1080";
  double fps = 60.0;
  int bit_depth = 8;
  std::string start, duration, end;  // --start, --duration, --end as given (seconds or [HH:]MM:SS[.mmm])
  video::TimeRange range;            // what plays, parsed from them by run_play (end_s 0: to the end)
  bool endless = false;              // --duration 0: the synthetic source never ends
  double synthetic_s = 10;           // the synthetic source's length (its end, or 10 s)
  bool no_audio = false;             // --no-audio: the player window plays no sound
  bool max_speed = false;
  pipeline::EqualizerOptions eq;      // eq.quality comes from `quality` (resolve())
  QualityArgs quality;
  std::string hwdec = "auto";        // --hwdec auto|nvdec|none (none with --cpu unless named)
  std::string synthetic_on = "auto"; // --synthetic-on auto|gpu|cpu: where the built-in source is drawn
  double live_timeout = 5.0;         // live inputs: the stream has stopped after this long without data
  bool live = false;                 // --live: standard input or a file read as a live stream (URLs are live anyway)
  std::string stats_json;
  bool quiet = false, verbose = false;
  std::string kernel_sequence;       // switch kernels live: "all" or K1,K2,...
  int switch_every = 60;             // frames between the switches
  // The player window (app/player/):
  std::string window;                // WxH; "" = the video fitted to the screen
  bool no_vsync = false, fullscreen = false, no_overlay = false, exit_at_end = false;
  int64_t frames = 0;                // exit after drawing this many window frames (0: no limit)
  std::string screenshot;            // with frames: a PNG of the last frame
  std::string screenshot_dir = ".";  // where the s key writes
  std::string keys;                  // scripted key presses (app/player/controls.h)
  std::string input_conf;            // --input-conf: key bindings in mpv's input.conf syntax (app/player/bindings.h)
  std::string input_ipc_server;      // --input-ipc-server: mpv's JSON IPC on this Unix socket (app/player/ipc.h)
  double split = -1;                 // start with the split view at this position (0..1)
  std::string compare = "input";     // the split view's left side: "input" or a look ("plain", "clahe", ...)
};

}  // namespace histeq::app
