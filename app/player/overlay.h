// The player's overlay (Dear ImGui): it draws a plain OverlayState, which the window fills from the
// session's state (app/player/session.h) each frame, and reports what the user did in
// OverlayActions, which the window sends to the session as commands. It holds only widget state
// (text being typed, the file browser's folder); it never touches the pipeline.
//
// Panels: "histeq" (the kernel selector, strength, the picture-quality controls, the split view
// and its left side's settings, transport, open, export, and a small frame-time graph against the
// budget) at the top left; "Luma" (input and output histograms with their CDFs) below it, or at
// the bottom right where the window is too short for both; "Statistics" (i: what plays, the
// frame-time graph with the budget line, per-stage rows with sparklines, dropped and late frames by
// cause) at the top right; the keys panel in the middle when asked for. The default layout covers
// under a third of a 1280x720 window. The OSD line (mpv's: "Kernel: cub") is drawn at the top left
// of the picture, also with the overlay hidden.
//
// Thread: the window's, between Window::new_frame() and Window::render_ui().
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "app/player/controls.h"
#include "app/player/file_browser.h"
#include "app/player/session.h"

struct ImFont;

namespace histeq::app::player {

// What the overlay draws: the session's state, and what the window adds.
struct OverlayState : SessionState {
  // What is playing, one line each (numbers kept with their units).
  std::string source, format, equalizer, display;
  std::string display_detail;         // tooltip: the full GL renderer and version
  float video_x = 0, video_y = 0, video_w = 0, video_h = 0;  // where the video is, in window coordinates
  bool overlay_visible = true;
  bool stats_visible = false;         // the statistics panel (i)
  bool show_help = false;
  std::vector<std::pair<std::string, std::string>> keys;  // the keys panel: key, what it does
};

// A panel as drawn in the last frame, in window coordinates (ImGui's points).
struct PanelRect {
  std::string name;
  float x = 0, y = 0, w = 0, h = 0;
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
  bool toggle_pause = false, step = false, toggle_help = false, toggle_stats = false;
  std::optional<double> seek_to;        // seconds
  std::optional<std::string> open;      // a file to play
  std::optional<std::string> export_to; // start exporting the current file to this path
  bool cancel_export = false;
};

class Overlay {
 public:
  explicit Overlay(ImFont* mono) : mono_(mono) {}
  void draw(const OverlayState& s, OverlayActions& out);
  const std::vector<PanelRect>& panels() const noexcept { return panels_; }

 private:
  void main_panel(const OverlayState& s, OverlayActions& out);
  void look_controls(const OverlayState& s, OverlayActions& out, float wrap);
  void split_controls(const OverlayState& s, OverlayActions& out);
  void transport(const OverlayState& s, OverlayActions& out);
  void file_buttons(const OverlayState& s, OverlayActions& out);
  void timing_panel(const OverlayState& s);  // overlay_timing.cpp: the statistics
  void luma_panel(const OverlayState& s);    // overlay_timing.cpp
  void mini_timing(const OverlayState& s);   // overlay_timing.cpp: the main panel's frame-time graph
  void osd(const OverlayState& s);           // overlay_timing.cpp
  void keep_rect(const char* name);          // the current ImGui window's rect into panels_
  void help_panel(const OverlayState& s, OverlayActions& out);
  void split_handle(const OverlayState& s, OverlayActions& out);
  // The controls of one set of quality settings; true when one changed (then `q` holds the change).
  bool quality_controls(const char* id, eq::Quality& q);
  void export_dialog(const OverlayState& s, OverlayActions& out);

  ImFont* mono_;
  FileBrowser browser_;
  bool export_dialog_ = false;
  char export_path_[1024] = {0};
  bool seeking_ = false;
  float seek_value_ = 0;
  bool dragging_split_ = false;
  float main_bottom_ = 0, main_right_ = 0, luma_height_ = 200;  // layout of the previous frame
  std::vector<PanelRect> panels_;
};

}  // namespace histeq::app::player
