// The player window: the session's front end. Each window frame reads the session's state, draws
// the picture and the overlay, and sends what the user did (keys, the overlay's widgets, dropped
// files, --keys) to the session as commands, as Dear ImGui's example_sdl2_opengl3 main loop does.
#include "app/player/player.h"

#include "core/gl/gl.h"  // epoxy first: it must precede any other GL header

#include <imgui.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>

#include "app/common/run_common.h"
#include "app/player/audio_out.h"
#include "app/player/controller.h"
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

// The name of a key that types no text (arrows, Esc, F1, ...) or comes with Ctrl, Alt or the
// Super key, as input.conf names it; "" for a key whose text (SDL_TEXTINPUT) names it.
std::string sdl_key_name(const SDL_Keysym& k) {
  static const std::pair<SDL_Keycode, const char*> named[] = {
      {SDLK_SPACE, "SPACE"},       {SDLK_RETURN, "ENTER"},     {SDLK_TAB, "TAB"},         {SDLK_BACKSPACE, "BS"},
      {SDLK_DELETE, "DEL"},        {SDLK_INSERT, "INS"},       {SDLK_HOME, "HOME"},       {SDLK_END, "END"},
      {SDLK_PAGEUP, "PGUP"},       {SDLK_PAGEDOWN, "PGDWN"},   {SDLK_ESCAPE, "ESC"},      {SDLK_PRINTSCREEN, "PRINT"},
      {SDLK_LEFT, "LEFT"},         {SDLK_RIGHT, "RIGHT"},      {SDLK_UP, "UP"},           {SDLK_DOWN, "DOWN"},
      {SDLK_KP_ENTER, "KP_ENTER"}, {SDLK_AUDIOPLAY, "PLAYPAUSE"}, {SDLK_AUDIOSTOP, "STOP"}, {SDLK_AUDIONEXT, "NEXT"},
      {SDLK_AUDIOPREV, "PREV"},    {SDLK_AUDIOMUTE, "MUTE"},   {SDLK_VOLUMEUP, "VOLUME_UP"}, {SDLK_VOLUMEDOWN, "VOLUME_DOWN"},
  };
  std::string base;
  for (auto [code, name] : named)
    if (k.sym == code) base = name;
  if (k.sym >= SDLK_F1 && k.sym <= SDLK_F12) base = "F" + std::to_string(k.sym - SDLK_F1 + 1);
  const bool ctrl = (k.mod & KMOD_CTRL) != 0, alt = (k.mod & KMOD_ALT) != 0, meta = (k.mod & KMOD_GUI) != 0;
  const bool shift = (k.mod & KMOD_SHIFT) != 0;
  if (base.empty()) {
    // A printable key: its text names it (SDL_TEXTINPUT), unless a modifier keeps it from typing.
    if (!(ctrl || alt || meta) || k.sym <= 0x20 || k.sym >= 0x7f) return "";
    base = std::string(1, static_cast<char>(k.sym));
  }
  return std::string(shift ? "Shift+" : "") + (ctrl ? "Ctrl+" : "") + (alt ? "Alt+" : "") + (meta ? "Meta+" : "") + base;
}

struct PendingShot {
  std::string path;  // "" = histeq-shot-NNNNNN.png in --screenshot-dir
  bool window = false;
  std::function<void(const std::string&)> done;
};

class PlayerWindow final : public Frontend, public WindowControl {
 public:
  PlayerWindow(const PlayOptions& o, std::unique_ptr<Window> w, std::vector<ScriptedKey> script, const std::atomic<bool>& stop)
      : o_(o), window_(std::move(w)), session_(o, stop, open_audio_out), controller_(session_, this, o), overlay_visible_(!o.no_overlay),
        script_(std::move(script)) {
    tick_period_ns_ = static_cast<int64_t>(1e9 / std::max(24.0, window_->refresh_hz()));
  }

  int run(std::unique_ptr<video::Source> source, const std::vector<std::string>& argv) {
    if (Status s = controller_.start(o_.input_conf, o_.input_ipc_server); !s) return fail(s.to_string(), 2);
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

  // WindowControl
  bool flag(Flag f) const override {
    switch (f) {
      case Flag::fullscreen: return window_->fullscreen();
      case Flag::overlay: return overlay_visible_;
      case Flag::stats: return stats_visible_;
      case Flag::help: return show_help_;
    }
    return false;
  }
  void set_flag(Flag f, bool on) override {
    switch (f) {
      case Flag::fullscreen:
        if (on != window_->fullscreen()) window_->toggle_fullscreen();
        break;
      case Flag::overlay: overlay_visible_ = on; break;
      case Flag::stats: stats_visible_ = on; break;
      case Flag::help: show_help_ = on; break;
    }
  }
  void screenshot(const std::string& path, bool window, std::function<void(const std::string&)> done) override {
    shots_.push_back({path, window, std::move(done)});
  }
  nlohmann::json layout() const override;

 private:
  static Result<std::unique_ptr<AudioDevice>> open_audio_out(const std::string& path, const AudioOutOptions& opts) {
    auto a = AudioOut::open(path, opts);
    if (!a) return a.status();
    return std::unique_ptr<AudioDevice>(std::move(a.value()));
  }
  void run_script();
  Status render();
  Status draw_video(int fbw, int fbh);
  void after_render();
  void take_shots();
  Status capture(const PendingShot& shot, std::string& path);
  void on_event(const SDL_Event& e);
  void on_key(const std::string& name, bool repeat);
  void apply(const OverlayActions& a);
  OverlayState state();
  Status screenshot_window(const std::string& path);

  const PlayOptions& o_;
  std::unique_ptr<Window> window_;
  Session session_;
  Controller controller_;
  std::unique_ptr<gl::VideoRenderer> renderer_;
  std::unique_ptr<Overlay> overlay_;
  FrameUploader uploader_;
  gl::Rect video_rect_;  // framebuffer pixels, bottom-left origin
  bool overlay_visible_, stats_visible_ = false, show_help_ = false;
  bool text_repeat_ = false;  // the key behind the next SDL_TEXTINPUT was an auto-repeat
  std::vector<PendingShot> shots_;
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
  controller_.poll();
  HISTEQ_TRY(render());
  after_render();
  window_->swap();
  return Status::ok();
}

void PlayerWindow::run_script() {
  while (tick_ > 0 && script_next_ < script_.size() && script_[script_next_].tick <= tick_) {
    const ScriptedKey& k = script_[script_next_++];
    if (k.action == ScriptedKey::Action::open) session_.open(k.arg);
    else if (k.action == ScriptedKey::Action::export_file) session_.start_export(k.arg);
    else on_key(k.key, false);
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
  HISTEQ_TRY(draw_video(fbw, fbh));
  take_shots();  // the video alone: before the UI goes on top
  window_->render_ui();
  render_done_ns_ = now_ns();
  return Status::ok();
}

Status PlayerWindow::draw_video(int fbw, int fbh) {
  const video::Frame* f = session_.frame();
  if (f == nullptr) {
    glViewport(0, 0, fbw, fbh);
    glClearColor(0.04f, 0.045f, 0.05f, 1.f);
    glClear(GL_COLOR_BUFFER_BIT);
    return Status::ok();
  }
  gl::DrawOptions d;
  d.color = FrameUploader::color(f->color, f->format().height);
  d.split = session_.split_at();
  d.sample_aspect = sample_aspect(*f);
  auto r = renderer_->draw(fbw, fbh, d);
  return r ? Status::ok() : r.status();
}

// Screenshots of the video, asked for by a key or a command, once the picture shows what was set
// (a paused change or a seek on its way is waited for). Window shots wait for after_render().
void PlayerWindow::take_shots() {
  if (!session_.picture_current()) return;
  for (auto it = shots_.begin(); it != shots_.end();) {
    if (it->window) {
      ++it;
      continue;
    }
    std::string path;
    const Status s = capture(*it, path);
    it->done(s ? "" : s.to_string());
    if (s) session_.say("screenshot: " + path);
    it = shots_.erase(it);
  }
}

Status PlayerWindow::capture(const PendingShot& shot, std::string& path) {
  path = shot.path;
  if (path.empty()) {
    char name[64];
    std::snprintf(name, sizeof(name), "histeq-shot-%06lld.png", static_cast<long long>(tick_));
    path = (std::filesystem::path(o_.screenshot_dir) / name).string();
  }
  if (shot.window) return screenshot_window(path);
  const video::Frame* f = session_.frame();
  if (f == nullptr) return HISTEQ_ERROR(Code::unsupported, "no picture yet");
  // The video as drawn (the split view too), at the video's own size (its pixel aspect applied).
  const float sar = sample_aspect(*f);
  const int w = static_cast<int>(std::lround(f->format().width * std::max(sar, 1.f)));
  const int h = static_cast<int>(std::lround(f->format().height / std::min(sar, 1.f)));
  auto img = window_->render_offscreen(w, h, [&] { return draw_video(w, h); });
  if (!img) return img.status();
  HISTEQ_TRY(write_png(path, *img));
  std::printf("histeq play: screenshot %s (%dx%d, video, frame %lld)\n", path.c_str(), img->width, img->height,
              static_cast<long long>(session_.frame_index()));
  std::fflush(stdout);
  return Status::ok();
}

// Window screenshots (overlay and OSD), and the end of a scripted run (--frames, --screenshot).
void PlayerWindow::after_render() {
  if (session_.picture_current()) {
    for (auto it = shots_.begin(); it != shots_.end();) {
      std::string path;
      const Status s = capture(*it, path);
      it->done(s ? "" : s.to_string());
      if (s) session_.say("screenshot: " + path);
      it = shots_.erase(it);
    }
  }
  // --frames: the end of a scripted run; an export it started is let finish first.
  if (o_.frames > 0 && tick_ >= o_.frames && !session_.quitting() && !session_.export_running()) {
    if (!o_.screenshot.empty()) {
      if (Status s = screenshot_window(o_.screenshot); !s) {
        std::fprintf(stderr, "histeq: %s\n", s.to_string().c_str());
        session_.set_failed();
      }
    }
    session_.quit();
  }
}

Status PlayerWindow::screenshot_window(const std::string& path) {
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
    case SDL_KEYDOWN: {
      if (ImGui::GetIO().WantCaptureKeyboard) break;  // typing into a field
      const std::string name = sdl_key_name(e.key.keysym);
      if (!name.empty()) on_key(name, e.key.repeat != 0);
      else text_repeat_ = e.key.repeat != 0;  // its text follows
      break;
    }
    case SDL_TEXTINPUT:
      // A printable key, as typed ("K", "{", "#"); space is SDL_KEYDOWN's.
      if (!ImGui::GetIO().WantCaptureKeyboard && std::strcmp(e.text.text, " ") != 0) on_key(e.text.text, text_repeat_);
      break;
    default: break;
  }
}

// A key press (the keyboard's or --keys'): the bindings' (app/player/bindings.h; Esc closes the
// keys panel first).
void PlayerWindow::on_key(const std::string& name, bool repeat) { controller_.key(name, repeat); }

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
  if (a.toggle_stats) stats_visible_ = !stats_visible_;
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
  // What made the frame on screen: its kernel and settings (not those the equalizer started with).
  pipeline::EqualizerInfo shown = session_.equalizer();
  if (!s.kernel_shown.empty()) shown.kernel = s.kernel_shown;
  s.equalizer = keep_numbers_with_units(describe_equalizer(shown, s.quality_shown));
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
  s.stats_visible = stats_visible_;
  s.show_help = show_help_;
  if (show_help_)
    for (const Binding* b : controller_.bindings().list()) s.keys.emplace_back(describe_key(b->key, false), b->help.empty() ? b->text : b->help);
  return s;
}

nlohmann::json PlayerWindow::layout() const {
  const float ppp = window_->pixels_per_point();
  nlohmann::json panels = nlohmann::json::array();
  for (const PanelRect& p : overlay_->panels())
    panels.push_back({{"name", p.name}, {"x", p.x * ppp}, {"y", p.y * ppp}, {"w", p.w * ppp}, {"h", p.h * ppp}});
  return {{"width", window_->fb_width()}, {"height", window_->fb_height()}, {"panels", panels}};
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
  auto script = parse_scripted_keys(o);
  if (!script) return fail(script.status().to_string(), 2);
  PlayerWindow p(o, std::move(window), std::move(script.value()), stop);
  return p.run(std::move(source), argv);
}

}  // namespace histeq::app::player
