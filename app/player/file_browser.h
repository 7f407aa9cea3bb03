// A small file browser panel in Dear ImGui (no third-party dialog library): folders first, then
// files, video files highlighted (or only them), a path field to type or paste into, double click
// to enter a folder or open a file.
// Thread: the window's, between Window::new_frame() and Window::render_ui().
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace histeq::app::player {

class FileBrowser {
 public:
  void open(const std::string& start);  // a folder, or a file whose folder to show
  bool is_open() const noexcept { return open_; }
  // Draws the panel while open; returns the chosen file once, closing the panel.
  std::optional<std::string> draw();

  static bool looks_like_video(const std::string& name);

 private:
  struct Entry {
    std::string name;
    bool dir = false, video = false;
    unsigned long long bytes = 0;
  };
  void list(const std::string& dir);
  // The folder's table; gives the path of the entry double-clicked.
  std::optional<std::string> draw_entries();
  // The Open and Cancel row; gives the selected entry's path when Open is pressed.
  std::optional<std::string> draw_buttons();

  bool open_ = false, only_video_ = false;
  std::string dir_, error_;
  std::vector<Entry> entries_;
  int selected_ = -1;
  char path_[1024] = {0};
};

}  // namespace histeq::app::player
