// The player window: the session's front end. Each window frame reads the session's state, draws
// the picture and the overlay, and sends what the user did (keys, the overlay's widgets, dropped
// files, --keys) to the session as commands, as Dear ImGui's example_sdl2_opengl3 main loop does.
#include "app/player/player.h"

#include "core/gl/gl.h"  // epoxy first: it must precede any other GL header

#include <imgui.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>

#include "app/common/run_common.h"
#include "app/player/audio_out.h"
#include "app/player/controls.h"
#include "app/player/frame_upload.h"
#include "app/player/overlay.h"
#include "app/player/session.h"
#include "core/gl/video_renderer.h"

namespace histeq::app::player {
namespace {

int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

float sample_aspect(const video::Frame& f) {
  return f.sample_aspect.valid() ? static_cast<float>(f.sample_aspect.value()) : 1.f;
}

// A space after a digit becomes a no-break space, so that wrapped text keeps "6.0 s" and "30 fps"
// on one line (ImGui breaks lines at plain spaces only).
std::string keep_numbers_with_units(std::string s) {
  std::string out;
  out.reserve(s.size() + 8);
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == ' ' && i > 0 && s[i - 1] >= '0' && s[i - 1] <= '9') out += "\xc2\xa0";
    else out += s[i];
  }
  return out;
}

std::string color_name(const gl::ColorInfo& c) {
  return std::string(c.bt709 ? "BT.709" : "BT.601") + (c.full_range ? ", full range" : ", limited range");
}

// The keys of controls.h's commands. `repeat`: a held key repeats the command.
struct KeyBinding {
  SDL_Keycode key;
  Command command, shifted;
  bool repeat;
};
constexpr KeyBinding kKeys[] = {
    {SDLK_SPACE, Command::pause, Command::pause, false},
    {SDLK_PERIOD, Command::step, Command::step, true},
    {SDLK_LEFT, Command::seek_back, Command::seek_back, true},
    {SDLK_RIGHT, Command::seek_forward, Command::seek_forward, true},
    {SDLK_k, Command::next_kernel, Command::prev_kernel, true},
    {SDLK_o, Command::overlay, Command::overlay, false},
    {SDLK_b, Command::split, Command::split, false},
    {SDLK_p, Command::plain, Command::plain, false},
    {SDLK_v, Command::compare, Command::compare, false},
    {SDLK_w, Command::swap, Command::swap, false},
    {SDLK_s, Command::screenshot, Command::screenshot, false},
    {SDLK_f, Command::fullscreen, Command::fullscreen, false},
    {SDLK_m, Command::mute, Command::mute, false},
    {SDLK_9, Command::volume_down, Command::volume_down, true},
    {SDLK_KP_9, Command::volume_down, Command::volume_down, true},
    {SDLK_0, Command::volume_up, Command::volume_up, true},
    {SDLK_KP_0, Command::volume_up, Command::volume_up, true},
    {SDLK_h, Command::help, Command::help, false},
    {SDLK_F1, Command::help, Command::help, false},
    {SDLK_q, Command::quit, Command::quit, true},
};

class PlayerWindow final : public Frontend {
 public:
  PlayerWindow(const PlayOptions& o, std::unique_ptr<Window> w, std::vector<ScriptedKey> script, const std::atomic<bool>& stop)
      : o_(o), window_(std::move(w)), session_(o, stop, open_audio_out), overlay_visible_(!o.no_overlay),
        script_(std::move(script)) {
    tick_period_ns_ = static_cast<int64_t>(1e9 / std::max(24.0, window_->refresh_hz()));
  }

  int run(std::unique_ptr<video::Source> source, const std::vector<std::string>& argv) {
    auto r = gl::VideoRenderer::create();
    if (!r) return fail(r.status().to_string());
    renderer_ = std::move(r.value());
    overlay_ = std::make_unique<Overlay>(window_->mono_font());
    return session_.run(std::move(source), *this, argv);
  }

  std::string describe() const override {
    char b[64];
    std::snprintf(b, sizeof(b), "window %dx%d (", window_->fb_width(), window_->fb_height());
    return b + window_->gl_description() + ")" + (window_->vsync() ? ", vsync" : "");
  }
  int64_t tick_period_ns() const override { return tick_period_ns_; }
  Status upload(const pipeline::PipelineFrame& pf) override { return uploader_.put(*pf.frame, pf.side.compare.get(), *renderer_); }
  Status draw() override;
  int64_t rendered_ns() const override { return render_done_ns_; }

 private:
  static Result<std::unique_ptr<AudioDevice>> open_audio_out(const std::string& path, const AudioOutOptions& opts) {
    auto a = AudioOut::open(path, opts);
    if (!a) return a.status();
    return std::unique_ptr<AudioDevice>(std::move(a.value()));
  }
  void run_script();
  Status render();
  void after_render();
  void on_event(const SDL_Event& e);
  void on_key(const SDL_KeyboardEvent& k);
  void run_command(Command c);
  void toggle_control(const std::string& name);  // a control table key (controls.h)
  void apply(const OverlayActions& a);
  OverlayState state();
  Status screenshot(const std::string& path);

  const PlayOptions& o_;
  std::unique_ptr<Window> window_;
  Session session_;
  std::unique_ptr<gl::VideoRenderer> renderer_;
  std::unique_ptr<Overlay> overlay_;
  FrameUploader uploader_;
  gl::Rect video_rect_;  // framebuffer pixels, bottom-left origin
  bool overlay_visible_, show_help_ = false, screenshot_pending_ = false;
  std::vector<ScriptedKey> script_;
  size_t script_next_ = 0;
  int64_t tick_ = 0;  // window frames drawn since the first one with video
  int64_t render_done_ns_ = 0, tick_period_ns_ = 16'666'667;
};

Status PlayerWindow::draw() {
  // Ticks (and so --keys and --frames) count from the first window frame that shows video, or
  // once the input has ended (or failed) without any.
  if (session_.frame() != nullptr || session_.ended()) ++tick_;
  window_->poll([this](const SDL_Event& e) { on_event(e); });
  run_script();
  HISTEQ_TRY(render());
  after_render();
  window_->swap();
  return Status::ok();
}

void PlayerWindow::run_script() {
  while (tick_ > 0 && script_next_ < script_.size() && script_[script_next_].tick <= tick_) {
    const ScriptedKey& k = script_[script_next_++];
    if (k.command == Command::open_file) session_.open(k.arg);
    else if (k.command == Command::export_file) session_.start_export(k.arg);
    else if (k.command == Command::control) session_.toggle_control(k.arg);
    else run_command(k.command);
  }
}

// The overlay (its actions sent to the session), then the picture under it, into the back buffer.
Status PlayerWindow::render() {
  const video::Frame* f = session_.frame();
  const int fbw = window_->fb_width(), fbh = window_->fb_height();
  const float sar = f ? sample_aspect(*f) : 1.f;
  video_rect_ = f ? gl::fit_rect(fbw, fbh, f->format().width, f->format().height, sar) : gl::Rect{};
  window_->new_frame();
  OverlayActions act;
  overlay_->draw(state(), act);
  apply(act);

  if (f) {
    gl::DrawOptions d;
    d.color = FrameUploader::color(f->color, f->format().height);
    d.split = session_.split_at();
    d.sample_aspect = sar;
    auto r = renderer_->draw(fbw, fbh, d);
    if (!r) return r.status();
  } else {
    glViewport(0, 0, fbw, fbh);
    glClearColor(0.04f, 0.045f, 0.05f, 1.f);
    glClear(GL_COLOR_BUFFER_BIT);
  }
  window_->render_ui();
  render_done_ns_ = now_ns();
  return Status::ok();
}

// The s key's screenshot, and the end of a scripted run (--frames, --screenshot).
void PlayerWindow::after_render() {
  if (screenshot_pending_) {
    screenshot_pending_ = false;
    char name[64];
    std::snprintf(name, sizeof(name), "histeq-shot-%06lld.png", static_cast<long long>(tick_));
    const std::string path = (std::filesystem::path(o_.screenshot_dir) / name).string();
    if (Status s = screenshot(path); !s) session_.say(s.to_string(), true);
    else session_.say("screenshot: " + path);
  }
  // --frames: the end of a scripted run; an export it started is let finish first.
  if (o_.frames > 0 && tick_ >= o_.frames && !session_.quitting() && !session_.export_running()) {
    if (!o_.screenshot.empty()) {
      if (Status s = screenshot(o_.screenshot); !s) {
        std::fprintf(stderr, "histeq: %s\n", s.to_string().c_str());
        session_.set_failed();
      }
    }
    session_.quit();
  }
}

Status PlayerWindow::screenshot(const std::string& path) {
  auto img = window_->read_back();
  if (!img) return img.status();
  HISTEQ_TRY(write_png(path, *img));
  std::printf("histeq play: screenshot %s (%dx%d, frame %lld)\n", path.c_str(), img->width, img->height,
              static_cast<long long>(tick_));
  std::fflush(stdout);
  return Status::ok();
}

void PlayerWindow::on_event(const SDL_Event& e) {
  switch (e.type) {
    case SDL_QUIT:
      session_.quit();
      break;
    case SDL_WINDOWEVENT:
      if (e.window.event == SDL_WINDOWEVENT_CLOSE) session_.quit();
      break;
    case SDL_DROPFILE: {
      const std::string path = e.drop.file != nullptr ? e.drop.file : "";
      SDL_free(e.drop.file);
      if (!path.empty()) session_.open(path);
      break;
    }
    case SDL_KEYDOWN:
      if (!ImGui::GetIO().WantCaptureKeyboard) on_key(e.key);  // else: typing into a field
      break;
    default: break;
  }
}

void PlayerWindow::on_key(const SDL_KeyboardEvent& k) {
  if (k.keysym.sym == SDLK_ESCAPE) {
    if (show_help_) show_help_ = false;
    else if (SDL_GetWindowFlags(window_->sdl()) & SDL_WINDOW_FULLSCREEN_DESKTOP) window_->toggle_fullscreen();
    return;
  }
  const bool repeat = k.repeat != 0;
  const bool shift = (k.keysym.mod & KMOD_SHIFT) != 0;
  for (const KeyBinding& b : kKeys) {
    if (b.key != k.keysym.sym) continue;
    if (!repeat || b.repeat) run_command(shift ? b.shifted : b.command);
    return;
  }
  // The control table's keys (g, l, t, ...).
  const SDL_Keycode sym = k.keysym.sym;
  const auto cmds = commands();
  const CommandInfo* c = sym > 0 && sym < 128 ? control_key(cmds, std::string(1, static_cast<char>(sym))) : nullptr;
  if (c != nullptr && !repeat) session_.toggle_control(c->control);
}

// The window's own commands; the rest go to the session.
void PlayerWindow::run_command(Command c) {
  switch (c) {
    case Command::overlay: overlay_visible_ = !overlay_visible_; break;
    case Command::screenshot: screenshot_pending_ = true; break;
    case Command::fullscreen: window_->toggle_fullscreen(); break;
    case Command::help: show_help_ = !show_help_; break;
    default: session_.command(c); break;
  }
}

void PlayerWindow::apply(const OverlayActions& a) {
  if (a.kernel) session_.set_kernel(*a.kernel);
  if (a.strength) session_.set_strength(*a.strength);
  if (a.quality) session_.set_quality(*a.quality);
  if (a.compare_look || a.look_b)
    session_.set_compare(a.compare_look.value_or(session_.compare_look()), a.look_b.value_or(session_.look_b()));
  if (a.swap) session_.command(Command::swap);
  if (a.split) session_.set_split(*a.split);
  if (a.split_pos) session_.set_split_pos(*a.split_pos);
  if (a.toggle_pause) session_.command(Command::pause);
  if (a.step) session_.command(Command::step);
  if (a.toggle_help) show_help_ = !show_help_;
  if (a.seek_to) session_.seek(*a.seek_to);
  if (a.open) session_.open(*a.open);
  if (a.export_to) session_.start_export(*a.export_to);
  if (a.cancel_export) session_.cancel_export();
}

OverlayState PlayerWindow::state() {
  OverlayState s;
  static_cast<SessionState&>(s) = session_.state();
  const video::SourceInfo& info = session_.info();
  s.source = keep_numbers_with_units(info.description + "; decoded by " + info.decoder);
  s.format = keep_numbers_with_units(info.format.describe() + ", " + color_name(FrameUploader::color(info.color, info.format.height)));
  s.equalizer = keep_numbers_with_units(describe_equalizer(session_.equalizer()));
  s.audio = keep_numbers_with_units(s.audio);
  // The renderer's short name ("llvmpipe", "NVIDIA H200"): its full description is the tooltip.
  std::string gpu = window_->gl_description();
  gpu = gpu.substr(0, std::min({gpu.find(" ("), gpu.find('/'), gpu.find(", OpenGL")}));
  s.display = (uploader_.path().empty() ? std::string("-") : uploader_.path()) + ", " + gpu;
  s.display_detail = window_->gl_description();
  const float ppp = window_->pixels_per_point();
  s.video_x = video_rect_.x / ppp;
  s.video_y = (window_->fb_height() - video_rect_.y - video_rect_.h) / ppp;
  s.video_w = video_rect_.w / ppp;
  s.video_h = video_rect_.h / ppp;
  s.overlay_visible = overlay_visible_;
  s.show_help = show_help_;
  return s;
}

}  // namespace

Result<std::unique_ptr<Window>> open_window(const PlayOptions& o, const video::SourceInfo& source) {
  WindowOptions wo;
  wo.title = "histeq - " + source.name;
  if (!o.window.empty()) HISTEQ_TRY(parse_size(o.window, wo.width, wo.height));
  wo.video_width = source.format.width;
  wo.video_height = source.format.height;
  wo.vsync = !o.no_vsync && !o.max_speed;
  wo.fullscreen = o.fullscreen;
  return Window::open(wo);
}

int run_window(const PlayOptions& o, const std::vector<std::string>& argv, std::unique_ptr<video::Source> source,
               std::unique_ptr<Window> window, const std::atomic<bool>& stop) {
  auto script = parse_key_script(o.keys);
  if (!script) return fail(script.status().to_string(), 2);
  PlayerWindow p(o, std::move(window), std::move(script.value()), stop);
  return p.run(std::move(source), argv);
}

}  // namespace histeq::app::player
