#include "app/player/window.h"

#include "core/gl/gl.h"  // epoxy first: it must precede any other GL header

#include <imgui.h>
#include <imgui_impl_opengl3.h>
#include <imgui_impl_sdl.h>
#include <stb_image_write.h>
#include <sys/stat.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>

namespace histeq::app::player {
namespace {

bool file_exists(const char* p) {
  struct stat st {};
  return ::stat(p, &st) == 0 && S_ISREG(st.st_mode);
}

// The first of Debian's usual font files that exists (fonts-dejavu-core, scripts/setup.sh), else
// nullptr: ImGui's built-in bitmap font is then used, scaled up.
const char* find_font(std::initializer_list<const char*> candidates) {
  for (const char* c : candidates)
    if (file_exists(c)) return c;
  return nullptr;
}

void apply_style() {
  ImGui::StyleColorsDark();
  ImGuiStyle& s = ImGui::GetStyle();
  s.WindowPadding = ImVec2(12, 10);
  s.FramePadding = ImVec2(7, 4);
  s.ItemSpacing = ImVec2(8, 6);
  s.ItemInnerSpacing = ImVec2(6, 4);
  s.CellPadding = ImVec2(5, 2);
  s.WindowRounding = 7;
  s.FrameRounding = 4;
  s.GrabRounding = 4;
  s.PopupRounding = 5;
  s.WindowBorderSize = 1;
  s.FrameBorderSize = 0;
  s.ScrollbarSize = 12;
  ImVec4* c = s.Colors;
  c[ImGuiCol_WindowBg] = ImVec4(0.07f, 0.08f, 0.10f, 0.86f);
  c[ImGuiCol_PopupBg] = ImVec4(0.08f, 0.09f, 0.11f, 0.97f);
  c[ImGuiCol_Border] = ImVec4(1.f, 1.f, 1.f, 0.10f);
  c[ImGuiCol_TitleBg] = ImVec4(0.10f, 0.12f, 0.16f, 0.92f);
  c[ImGuiCol_TitleBgActive] = ImVec4(0.12f, 0.17f, 0.24f, 0.95f);
  c[ImGuiCol_FrameBg] = ImVec4(0.21f, 0.24f, 0.30f, 0.95f);
  c[ImGuiCol_FrameBgHovered] = ImVec4(0.26f, 0.30f, 0.37f, 0.95f);
  c[ImGuiCol_FrameBgActive] = ImVec4(0.30f, 0.36f, 0.45f, 0.95f);
  c[ImGuiCol_Button] = ImVec4(0.18f, 0.30f, 0.44f, 0.90f);
  c[ImGuiCol_ButtonHovered] = ImVec4(0.24f, 0.40f, 0.58f, 1.f);
  c[ImGuiCol_ButtonActive] = ImVec4(0.28f, 0.47f, 0.68f, 1.f);
  c[ImGuiCol_Header] = ImVec4(0.20f, 0.33f, 0.48f, 0.80f);
  c[ImGuiCol_HeaderHovered] = ImVec4(0.24f, 0.40f, 0.58f, 0.90f);
  c[ImGuiCol_HeaderActive] = ImVec4(0.28f, 0.47f, 0.68f, 1.f);
  c[ImGuiCol_SliderGrab] = ImVec4(0.40f, 0.66f, 0.92f, 1.f);
  c[ImGuiCol_SliderGrabActive] = ImVec4(0.52f, 0.76f, 1.f, 1.f);
  c[ImGuiCol_CheckMark] = ImVec4(0.52f, 0.76f, 1.f, 1.f);
  c[ImGuiCol_PlotHistogram] = ImVec4(0.40f, 0.66f, 0.92f, 1.f);
  c[ImGuiCol_Separator] = ImVec4(1.f, 1.f, 1.f, 0.12f);
  c[ImGuiCol_TableHeaderBg] = ImVec4(0.12f, 0.15f, 0.20f, 0.9f);
  c[ImGuiCol_TableRowBgAlt] = ImVec4(1.f, 1.f, 1.f, 0.03f);
}

bool have_display() {
  const char* x11 = std::getenv("DISPLAY");
  const char* wl = std::getenv("WAYLAND_DISPLAY");
  return (x11 != nullptr && *x11 != 0) || (wl != nullptr && *wl != 0);
}

// The window's size when --window does not give it: the video's aspect, as large as 80% of the screen
// (`mode`, null when unknown) allows, never smaller than 960x540.
void fit_to_screen(const WindowOptions& o, const SDL_DisplayMode* mode, int& width, int& height) {
  const double aspect = o.video_height > 0 ? static_cast<double>(o.video_width) / o.video_height : 16.0 / 9.0;
  const int max_w = mode != nullptr ? mode->w * 8 / 10 : 1280, max_h = mode != nullptr ? mode->h * 8 / 10 : 720;
  width = std::min(o.video_width, max_w);
  height = static_cast<int>(width / aspect);
  if (height > max_h) {
    height = max_h;
    width = static_cast<int>(height * aspect);
  }
  width = std::max(width, std::min(960, mode != nullptr ? mode->w : 960));
  height = std::max(height, std::min(540, mode != nullptr ? mode->h : 540));
}

// The text font (DejaVu Sans, or the built-in one scaled) into ImGui's atlas; gives the monospace
// font for the tables (the text font when none is installed).
ImFont* load_fonts(ImGuiIO& io) {
  const char* sans = find_font({"/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf", "/usr/share/fonts/TTF/DejaVuSans.ttf",
                                "/usr/share/fonts/truetype/liberation2/LiberationSans-Regular.ttf"});
  const char* mono = find_font({"/usr/share/fonts/truetype/dejavu/DejaVuSansMono.ttf", "/usr/share/fonts/TTF/DejaVuSansMono.ttf",
                                "/usr/share/fonts/truetype/liberation2/LiberationMono-Regular.ttf"});
  ImFontConfig cfg;
  cfg.OversampleH = 2;
  cfg.OversampleV = 2;
  // Latin-1, σ, dashes to the ellipsis (• included), arrows, minus, ≤ ≥, ▶.
  static const ImWchar ranges[] = {0x0020, 0x00FF, 0x03C3, 0x03C3, 0x2013, 0x2026, 0x2190, 0x2193, 0x2212, 0x2212,
                                   0x2264, 0x2265, 0x25B6, 0x25B6, 0};
  if (sans == nullptr || io.Fonts->AddFontFromFileTTF(sans, 15.f, &cfg, ranges) == nullptr) {
    ImFontConfig def;
    def.SizePixels = 15.f;  // the built-in 13 px bitmap font, scaled: readable, if not pretty
    io.Fonts->AddFontDefault(&def);
  }
  ImFont* mono_font = mono != nullptr ? io.Fonts->AddFontFromFileTTF(mono, 14.f, &cfg, ranges) : nullptr;
  return mono_font != nullptr ? mono_font : io.Fonts->Fonts[0];
}

}  // namespace

Result<std::unique_ptr<Window>> Window::open(const WindowOptions& o) {
  if (!have_display())
    return HISTEQ_ERROR(Code::unsupported, "no display: DISPLAY and WAYLAND_DISPLAY are not set");
  if (SDL_Init(SDL_INIT_VIDEO | SDL_INIT_TIMER) != 0)
    return HISTEQ_ERROR(Code::unsupported, std::string("no display: SDL cannot start its video: ") + SDL_GetError());
  std::unique_ptr<Window> w(new Window());  // from here on, the destructor undoes what was done

  SDL_GL_SetAttribute(SDL_GL_CONTEXT_FLAGS, 0);
  SDL_GL_SetAttribute(SDL_GL_CONTEXT_PROFILE_MASK, SDL_GL_CONTEXT_PROFILE_CORE);
  SDL_GL_SetAttribute(SDL_GL_CONTEXT_MAJOR_VERSION, 3);
  SDL_GL_SetAttribute(SDL_GL_CONTEXT_MINOR_VERSION, 3);
  SDL_GL_SetAttribute(SDL_GL_DOUBLEBUFFER, 1);
  SDL_GL_SetAttribute(SDL_GL_DEPTH_SIZE, 0);
  SDL_GL_SetAttribute(SDL_GL_STENCIL_SIZE, 0);

  int width = o.width, height = o.height;
  SDL_DisplayMode mode{};
  const bool have_mode = SDL_GetDesktopDisplayMode(0, &mode) == 0 && mode.w > 0 && mode.h > 0;
  if (width <= 0 || height <= 0) fit_to_screen(o, have_mode ? &mode : nullptr, width, height);
  if (have_mode && mode.refresh_rate > 0) w->refresh_hz_ = mode.refresh_rate;
  const Uint32 flags = SDL_WINDOW_OPENGL | SDL_WINDOW_RESIZABLE | SDL_WINDOW_ALLOW_HIGHDPI |
                       (o.fullscreen ? SDL_WINDOW_FULLSCREEN_DESKTOP : 0);
  w->win_ = SDL_CreateWindow(o.title.c_str(), SDL_WINDOWPOS_CENTERED, SDL_WINDOWPOS_CENTERED, width, height, flags);
  if (w->win_ == nullptr) return HISTEQ_ERROR(Code::unsupported, std::string("no window: ") + SDL_GetError());
  SDL_SetWindowMinimumSize(w->win_, 320, 180);
  w->ctx_ = SDL_GL_CreateContext(w->win_);
  if (w->ctx_ == nullptr) return HISTEQ_ERROR(Code::unsupported, std::string("no OpenGL 3.3 core context: ") + SDL_GetError());
  SDL_GL_MakeCurrent(w->win_, w->ctx_);
  w->vsync_ = o.vsync && SDL_GL_SetSwapInterval(1) == 0;
  if (!o.vsync) SDL_GL_SetSwapInterval(0);
  const char* ver = reinterpret_cast<const char*>(glGetString(GL_VERSION));
  const char* ren = reinterpret_cast<const char*>(glGetString(GL_RENDERER));
  w->gl_desc_ = std::string(ren ? ren : "?") + ", OpenGL " + (ver ? ver : "?");

  IMGUI_CHECKVERSION();
  ImGui::CreateContext();
  w->imgui_ = true;
  ImGuiIO& io = ImGui::GetIO();
  io.IniFilename = nullptr;  // the layout is the program's; nothing is written next to the user's files
  io.LogFilename = nullptr;
  apply_style();
  w->sdl_backend_ = ImGui_ImplSDL2_InitForOpenGL(w->win_, w->ctx_);
  w->gl_backend_ = ImGui_ImplOpenGL3_Init("#version 330 core");
  if (!w->sdl_backend_ || !w->gl_backend_) return HISTEQ_ERROR(Code::unsupported, "Dear ImGui's SDL2/OpenGL3 backends did not start");

  w->mono_ = load_fonts(io);
  return w;
}

Window::~Window() {
  if (gl_backend_) ImGui_ImplOpenGL3_Shutdown();
  if (sdl_backend_) ImGui_ImplSDL2_Shutdown();
  if (imgui_) ImGui::DestroyContext();
  if (ctx_ != nullptr) SDL_GL_DeleteContext(ctx_);
  if (win_ != nullptr) SDL_DestroyWindow(win_);
  SDL_Quit();
}

void Window::poll(const std::function<void(const SDL_Event&)>& handle) {
  SDL_Event e;
  while (SDL_PollEvent(&e)) {
    ImGui_ImplSDL2_ProcessEvent(&e);
    handle(e);
  }
}

void Window::new_frame() {
  ImGui_ImplOpenGL3_NewFrame();
  ImGui_ImplSDL2_NewFrame();
  ImGui::NewFrame();
}

void Window::render_ui() {
  ImGui::Render();
  glViewport(0, 0, fb_width(), fb_height());
  ImGui_ImplOpenGL3_RenderDrawData(ImGui::GetDrawData());
}

void Window::swap() { SDL_GL_SwapWindow(win_); }

int Window::fb_width() const {
  int w = 0, h = 0;
  SDL_GL_GetDrawableSize(win_, &w, &h);
  return w;
}
int Window::fb_height() const {
  int w = 0, h = 0;
  SDL_GL_GetDrawableSize(win_, &w, &h);
  return h;
}
float Window::pixels_per_point() const {
  int ww = 0, wh = 0;
  SDL_GetWindowSize(win_, &ww, &wh);
  return ww > 0 ? static_cast<float>(fb_width()) / ww : 1.f;
}

void Window::toggle_fullscreen() {
  const bool full = (SDL_GetWindowFlags(win_) & SDL_WINDOW_FULLSCREEN_DESKTOP) != 0;
  SDL_SetWindowFullscreen(win_, full ? 0 : SDL_WINDOW_FULLSCREEN_DESKTOP);
}

Result<Image> Window::read_back() const {
  Image img;
  img.width = fb_width();
  img.height = fb_height();
  if (img.width <= 0 || img.height <= 0) return HISTEQ_ERROR(Code::internal, "the window has no pixels");
  const size_t row = static_cast<size_t>(img.width) * 3;
  std::vector<uint8_t> bottom_up(row * img.height);
  glReadBuffer(GL_BACK);
  glPixelStorei(GL_PACK_ALIGNMENT, 1);
  glReadPixels(0, 0, img.width, img.height, GL_RGB, GL_UNSIGNED_BYTE, bottom_up.data());
  if (const GLenum e = glGetError(); e != GL_NO_ERROR)
    return HISTEQ_ERROR(Code::internal, "glReadPixels failed (GL error " + std::to_string(e) + ")");
  img.rgb.resize(bottom_up.size());
  for (int y = 0; y < img.height; ++y)  // GL rows run bottom-up; images top-down
    std::copy_n(bottom_up.data() + static_cast<size_t>(img.height - 1 - y) * row, row, img.rgb.data() + static_cast<size_t>(y) * row);
  return img;
}

bool Window::fullscreen() const { return (SDL_GetWindowFlags(win_) & SDL_WINDOW_FULLSCREEN_DESKTOP) != 0; }

Result<Image> Window::render_offscreen(int w, int h, const std::function<Status()>& draw) const {
  if (w <= 0 || h <= 0 || w > 16384 || h > 16384) return HISTEQ_ERROR(Code::invalid_argument, "no picture to capture");
  GLuint fbo = 0, rb = 0;
  glGenFramebuffers(1, &fbo);
  glGenRenderbuffers(1, &rb);
  glBindRenderbuffer(GL_RENDERBUFFER, rb);
  glRenderbufferStorage(GL_RENDERBUFFER, GL_RGBA8, w, h);
  glBindFramebuffer(GL_FRAMEBUFFER, fbo);
  glFramebufferRenderbuffer(GL_FRAMEBUFFER, GL_COLOR_ATTACHMENT0, GL_RENDERBUFFER, rb);
  Result<Image> out = HISTEQ_ERROR(Code::internal, "the offscreen framebuffer is incomplete");
  if (glCheckFramebufferStatus(GL_FRAMEBUFFER) == GL_FRAMEBUFFER_COMPLETE) {
    Status s = draw();
    if (!s) {
      out = s;
    } else {
      Image img;
      img.width = w;
      img.height = h;
      const size_t row = static_cast<size_t>(w) * 3;
      std::vector<uint8_t> bottom_up(row * h);
      glReadBuffer(GL_COLOR_ATTACHMENT0);
      glPixelStorei(GL_PACK_ALIGNMENT, 1);
      glReadPixels(0, 0, w, h, GL_RGB, GL_UNSIGNED_BYTE, bottom_up.data());
      img.rgb.resize(bottom_up.size());
      for (int y = 0; y < h; ++y)
        std::copy_n(bottom_up.data() + static_cast<size_t>(h - 1 - y) * row, row, img.rgb.data() + static_cast<size_t>(y) * row);
      out = std::move(img);
    }
  }
  glBindFramebuffer(GL_FRAMEBUFFER, 0);
  glDeleteRenderbuffers(1, &rb);
  glDeleteFramebuffers(1, &fbo);
  glReadBuffer(GL_BACK);
  return out;
}

Status write_png(const std::string& path, const Image& img) {
  const std::string part = path + ".part";
  if (stbi_write_png(part.c_str(), img.width, img.height, 3, img.rgb.data(), img.width * 3) == 0 ||
      std::rename(part.c_str(), path.c_str()) != 0) {
    std::remove(part.c_str());
    return HISTEQ_ERROR(Code::io_error, path + ": cannot write the PNG");
  }
  return Status::ok();
}

}  // namespace histeq::app::player
