// The player's overlay (Dear ImGui): it draws a plain OverlayState, which the window fills from the
// session's state (app/player/session.h) each frame, and reports what the user did in
// OverlayActions, which the window sends to the session as commands. It holds only widget state
// (text being typed, the file browser's folder); it never touches the pipeline.
//
// Panels: "histeq" (source, kernel selector, strength, the picture-quality controls, the split
// view and its left side's settings, transport, open, export) at the top left; "Timing" (frame-time graph with the budget line, per-stage rows with sparklines,
// dropped and late frames by cause) at the top right; "Luma" (input and output histograms with
// their CDFs) at the bottom left; the keyboard help in the middle when asked for.
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
  void look_controls(const OverlayState& s, OverlayActions& out, float wrap);
  void split_controls(const OverlayState& s, OverlayActions& out);
  void transport(const OverlayState& s, OverlayActions& out);
  void file_buttons(const OverlayState& s, OverlayActions& out);
  void timing_panel(const OverlayState& s);  // overlay_timing.cpp
  void luma_panel(const OverlayState& s);    // overlay_timing.cpp
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
  float main_bottom_ = 0, luma_height_ = 200;  // layout of the previous frame
};

}  // namespace histeq::app::player
