// The player's window: SDL2 with an OpenGL 3.3 core context, and Dear ImGui on top of it (Debian's
// imgui 1.86 with its SDL2 and OpenGL3 backends, third_party/imgui). It owns the SDL, GL and ImGui
// lifecycles, the fonts and the style, and reads the framebuffer back for screenshots. Nothing of
// the pipeline lives here.
//
// Thread: the thread that opened it (the GL context is current there).
#pragma once

#include <SDL.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "core/cuda/status.h"

struct ImFont;

namespace histeq::app::player {

struct WindowOptions {
  std::string title = "histeq";
  int width = 0, height = 0;         // 0: the video's size fitted to 80% of the screen (at least 960x540)
  int video_width = 1920, video_height = 1080;
  bool vsync = true;
  bool fullscreen = false;
};

// An RGB image, top row first, tightly packed.
struct Image {
  int width = 0, height = 0;
  std::vector<uint8_t> rgb;
};

class Window {
 public:
  // Fails, saying why, when no window can be shown: no DISPLAY or WAYLAND_DISPLAY, SDL's video
  // cannot start, or no OpenGL 3.3 core context.
  static Result<std::unique_ptr<Window>> open(const WindowOptions& opts);
  ~Window();
  Window(const Window&) = delete;
  Window& operator=(const Window&) = delete;

  // Polls SDL's events; ImGui sees every one, then `handle` does (it checks io.WantCaptureKeyboard
  // and io.WantCaptureMouse itself).
  void poll(const std::function<void(const SDL_Event&)>& handle);
  void new_frame();   // ImGui: a new UI frame (after poll)
  void render_ui();   // ImGui: draws the UI built since new_frame() into the back buffer
  void swap();
  Result<Image> read_back() const;  // the back buffer as it is now (call before swap)
  // What `draw` draws into a framebuffer of its own, w x h pixels (not the window's), read back.
  Result<Image> render_offscreen(int w, int h, const std::function<Status()>& draw) const;
  bool fullscreen() const;

  int fb_width() const;   // drawable size in pixels
  int fb_height() const;
  float pixels_per_point() const;  // drawable pixels per window coordinate (HiDPI)
  void toggle_fullscreen();
  bool vsync() const noexcept { return vsync_; }  // swap interval 1 was accepted
  double refresh_hz() const noexcept { return refresh_hz_; }
  ImFont* mono_font() const noexcept { return mono_; }
  const std::string& gl_description() const noexcept { return gl_desc_; }
  SDL_Window* sdl() const noexcept { return win_; }

 private:
  Window() = default;
  SDL_Window* win_ = nullptr;
  SDL_GLContext ctx_ = nullptr;
  bool imgui_ = false, sdl_backend_ = false, gl_backend_ = false;
  bool vsync_ = false;
  double refresh_hz_ = 60;
  ImFont* mono_ = nullptr;
  std::string gl_desc_;
};

// Writes an image as PNG (stb_image_write), through a temporary file renamed when complete. Errors
// name the file.
Status write_png(const std::string& path, const Image& img);

}  // namespace histeq::app::player
