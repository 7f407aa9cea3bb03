// The player's overlay (Dear ImGui): it draws a plain OverlayState, which the player fills from the
// pipeline's figures each frame, and reports what the user did in OverlayActions, which the player
// carries out. It holds only widget state (text being typed, the file browser's folder); it never
// touches the pipeline.
//
// Panels: "histeq" (source, kernel selector, strength, the picture-quality controls, the split
// view and its left side's settings, transport, open, export) at the top left; "Timing" (frame-time graph with the budget line, per-stage rows with sparklines,
// dropped and late frames by cause) at the top right; "Luma" (input and output histograms with
// their CDFs) at the bottom left; the keyboard help in the middle when asked for.
//
// Thread: the window's, between Window::new_frame() and Window::render_ui().
#pragma once

#include <array>
#include <cmath>
#include <optional>
#include <string>
#include <vector>

#include "app/player/controls.h"
#include "app/player/file_browser.h"
#include "app/player/stats_view.h"

struct ImFont;

namespace histeq::app::player {

struct StageRowView {
  std::string name;
  double last = 0, avg = 0, p99 = 0, peak = 0;  // ms, over the stats window
  std::vector<float> spark;                     // the last frames, oldest first (NaN: did not run)
  int row = -1;                                 // the stats row (pipeline::RunStats) it shows
};

struct ExportView {
  bool available = false;        // the source is a file
  std::string why_not;           // when not available
  std::string suggested_output;  // default path in the dialog
  bool running = false;
  double fraction = -1;          // 0..1, < 0 unknown
  std::string line;              // "frame 120/600  95 fps  ETA 0:05"
  std::string result;            // the last export's outcome
  bool failed = false;
};

struct OverlayState {
  // What is playing.
  std::string source, format, equalizer, display;
  std::string display_detail;         // tooltip: the full GL renderer and version
  std::vector<KernelChoice> kernels;  // the selector
  std::string kernel_shown;           // the kernel that equalized the frame on screen
  std::string kernel_requested;       // a switch not on screen yet ("" = none)
  float strength = 1.f;
  eq::Quality quality;                // the controls as set (on screen from the next frame)
  std::string quality_shown;          // eq::describe() of the frame on screen

  // The picture.
  bool split = false;
  bool compare_look = false;          // the split's left side: settings B (else the input)
  pipeline::Look look_b;              // settings B
  float split_pos = 0.5f;
  float video_x = 0, video_y = 0, video_w = 0, video_h = 0;  // where the video is, in window coordinates

  // Sound: "" when none (audio_note says why), else the track and the device.
  std::string audio, audio_note;
  double volume = 1.0;
  bool muted = false;
  double av_offset_ms = NAN;  // the sound heard minus the frame shown, at its presentation
  int64_t held = 0;           // frames held on screen while the video waited for the sound

  // Transport.
  bool paused = false, ended = false, can_seek = false;
  double position_s = 0, duration_s = 0;

  // Timing.
  double budget_ms = 16.7, source_fps = 60;
  std::vector<float> frame_ms;        // StatsView::frame_times()
  std::vector<StageRowView> stages;   // the stages that ran, then latency
  double display_fps = 0, video_fps = 0;
  int64_t frames_shown = 0;
  std::array<int64_t, kCauses> dropped{}, late{};
  int64_t dropped_source = 0, corrupt_packets = 0, damaged_frames = 0;

  LumaPlots luma;
  ExportView exp;
  std::string browse_from;  // where "Open..." starts: the current file's folder
  std::string message;  // shown under the transport; errors in red
  bool message_is_error = false;
  bool overlay_visible = true;
  bool show_help = false;
};

struct OverlayActions {
  std::optional<std::string> kernel;    // switch to this kernel
  std::optional<float> strength;
  std::optional<eq::Quality> quality;   // the picture-quality controls of the output (A)
  std::optional<bool> compare_look;     // the split's left side: settings B / the input
  std::optional<pipeline::Look> look_b; // settings B
  bool swap = false;                    // A <-> B
  std::optional<bool> split;
  std::optional<float> split_pos;
  bool toggle_pause = false, step = false, toggle_help = false;
  std::optional<double> seek_to;        // seconds
  std::optional<std::string> open;      // a file to play
  std::optional<std::string> export_to; // start exporting the current file to this path
  bool cancel_export = false;
};

class Overlay {
 public:
  explicit Overlay(ImFont* mono) : mono_(mono) {}
  void draw(const OverlayState& s, OverlayActions& out);

 private:
  void main_panel(const OverlayState& s, OverlayActions& out);
  // The main panel's parts, top to bottom; `wrap`: the panel's text width.
  void info_rows(const OverlayState& s);
  void kernel_selector(const OverlayState& s, OverlayActions& out, float wrap);
  void look_controls(const OverlayState& s, OverlayActions& out, float wrap);  // strength, controls, split view
  void transport(const OverlayState& s, OverlayActions& out);
  void export_status(const OverlayState& s, OverlayActions& out, float wrap);
  void timing_panel(const OverlayState& s);
  void stage_table(const OverlayState& s);  // the timing panel's per-stage rows
  void drops_table(const OverlayState& s);  // its dropped and late frames by cause
  void luma_panel(const OverlayState& s);
  void help_panel(const OverlayState& s, OverlayActions& out);
  void split_handle(const OverlayState& s, OverlayActions& out);
  // The controls of one set of quality settings, one generic widget per control of the table
  // (overlay_controls()); true when one changed (then `q` holds the change).
  bool quality_controls(const char* id, eq::Quality& q);
  void export_dialog(const OverlayState& s, OverlayActions& out);

  ImFont* mono_;
  FileBrowser browser_;
  bool export_dialog_ = false;
  char export_path_[1024] = {0};
  bool seeking_ = false;
  float seek_value_ = 0;
  bool dragging_split_ = false;
  float main_bottom_ = 0, luma_height_ = 200;  // layout of the previous frame
};

}  // namespace histeq::app::player
