#include "app/player/player.h"

#include "core/gl/gl.h"  // epoxy first: it must precede any other GL header

#include <imgui.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <optional>
#include <thread>

#include <nlohmann/json.hpp>

#include "app/common/run_common.h"
#include "app/player/audio_out.h"
#include "app/player/controls.h"
#include "app/player/export_job.h"
#include "app/player/frame_upload.h"
#include "app/player/overlay.h"
#include "app/player/stats_view.h"
#include "core/gl/video_renderer.h"
#include "core/pipeline/pacer.h"
#include "core/pipeline/pipeline.h"
#include "core/video/file_source.h"

namespace histeq::app::player {
namespace {

using Clock = std::chrono::steady_clock;

int64_t now_ns() { return std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now().time_since_epoch()).count(); }

// Events per second, over windows of half a second.
class RateMeter {
 public:
  void tick(int64_t now) {
    if (start_ == 0) start_ = now;
    ++count_;
    if (now - start_ >= 500'000'000) {
      rate_ = static_cast<double>(count_) * 1e9 / static_cast<double>(now - start_);
      count_ = 0;
      start_ = now;
    }
  }
  double rate() const noexcept { return rate_; }

 private:
  int64_t start_ = 0, count_ = 0;
  double rate_ = 0;
};

float sample_aspect(const video::Frame& f) {
  return f.sample_aspect.valid() ? static_cast<float>(f.sample_aspect.value()) : 1.f;
}

std::string suggested_export(const std::string& input) {
  namespace fs = std::filesystem;
  const fs::path p(input);
  return (p.parent_path() / (p.stem().string() + "-histeq.mp4")).string();
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

// A source and the pipeline made for it, ready to replace the current ones.
struct Media {
  std::unique_ptr<video::Source> source;
  std::unique_ptr<pipeline::Pipeline> pipe;
};

class Player final : public pipeline::Sink {
 public:
  Player(const PlayOptions& o, std::unique_ptr<Window> w, std::vector<ScriptedKey> script, const std::atomic<bool>& stop)
      : o_(o), signal_stop_(stop), window_(std::move(w)), strength_(static_cast<float>(o.eq.strength)), quality_(o.eq.quality),
        overlay_visible_(!o.no_overlay), split_(o.split >= 0), split_pos_(o.split >= 0 ? static_cast<float>(std::min(o.split, 1.0)) : 0.5f),
        script_(std::move(script)) {
    tick_period_ns_ = static_cast<int64_t>(1e9 / std::max(24.0, window_->refresh_hz()));
    // The left side of the split: --compare's look, else the input (B's settings start as plain
    // equalization, the most telling comparison with the defaults).
    look_b_.quality = eq::plain_quality();
    if (auto l = compare_look(o.compare); l && l->has_value()) {
      look_b_ = **l;
      compare_look_ = true;
    }
  }

  int run(std::unique_ptr<video::Source> source, const std::vector<std::string>& argv);
  Status consume(pipeline::PipelineFrame f, pipeline::FrameRecord& rec) override;
  Status idle() override;

 private:
  enum class After { none, seek, open, quit };

  Result<Media> prepare(std::unique_ptr<video::Source> source, const std::string& kernel);
  void commit(Media m);
  void open_audio();
  void drop_audio(const std::string& why);
  Status consume_paced(pipeline::PipelineFrame& pf, pipeline::FrameRecord& rec, bool restart, bool stepping);
  Status consume_synced(pipeline::PipelineFrame& pf, pipeline::FrameRecord& rec);
  Status show(pipeline::PipelineFrame& pf, pipeline::FrameRecord& rec);
  double audio_now() const;  // the sound heard, in media time (Frame::time_s); NaN without
  Status draw_frame();
  Status ui_tick();
  void on_event(const SDL_Event& e);
  void run_command(Command c);
  void toggle_control(const std::string& name);  // a control table key (controls.h)
  void apply(const OverlayActions& a);
  OverlayState state();
  void request_kernel(const std::string& name);
  void set_quality(const eq::Quality& q);
  void set_compare(bool look, const pipeline::Look& b);
  void request_seek(double t);
  void request_open(const std::string& path);
  void request_quit();
  void say(const std::string& msg, bool error = false);
  Status screenshot(const std::string& path);
  void start_export(const std::string& output);
  const std::string& target_kernel() const { return kernel_requested_.empty() ? kernel_shown_ : kernel_requested_; }

  const PlayOptions& o_;
  const std::atomic<bool>& signal_stop_;
  std::unique_ptr<Window> window_;
  std::unique_ptr<gl::VideoRenderer> renderer_;
  std::unique_ptr<Overlay> overlay_;

  // What plays.
  std::unique_ptr<video::Source> source_;
  std::unique_ptr<pipeline::Pipeline> pipe_;
  std::unique_ptr<pipeline::RunStats> stats_;
  video::SourceInfo info_;
  pipeline::EqualizerInfo eq_;
  std::vector<KernelChoice> menu_;
  std::vector<std::string> usable_, sequence_;
  size_t sequence_pos_ = 0;
  std::string kernel_shown_, kernel_requested_;
  float strength_;
  eq::Quality quality_;                      // the output's settings (A), as last set
  std::optional<eq::Quality> before_plain_;  // what p goes back to
  bool compare_look_ = false;                // the split's left side: settings B, else the input
  pipeline::Look look_b_;
  std::string quality_shown_;                // eq::describe() of the frame on screen
  double interval_s_ = 1 / 60.0, budget_ms_ = 1000 / 60.0;

  // What is on screen.
  FrameUploader uploader_;
  video::FramePtr current_;
  LumaPlots luma_;
  StatsView view_;
  gl::Rect video_rect_;  // framebuffer pixels, bottom-left origin

  // Control.
  std::atomic<bool> run_stop_{false};
  After after_ = After::none;
  double seek_target_ = 0;
  std::optional<Media> pending_;
  bool quit_ = false, paused_ = false, step_ = false, ended_ = false;
  bool overlay_visible_, show_help_ = false, split_;
  float split_pos_;
  bool screenshot_pending_ = false;
  std::optional<pipeline::Pacer> pacer_;
  std::vector<ScriptedKey> script_;
  size_t script_next_ = 0;
  int64_t tick_ = 0;  // window frames drawn since the first one with video
  int64_t frames_presented_ = 0, render_done_ns_ = 0, tick_period_ns_ = 16'666'667;
  RateMeter display_rate_, video_rate_;
  std::string message_;
  bool message_error_ = false;
  int64_t message_until_ns_ = 0;
  int exit_code_ = 0;
  std::vector<StageRowView> rows_;
  int64_t rows_at_ns_ = 0;
  ExportJob export_;
  bool export_reported_ = true;  // the outcome of the last export was printed

  // Sound (AudioOut): the video follows its clock while it plays.
  std::unique_ptr<AudioOut> audio_;
  std::string audio_note_;         // why there is none
  bool need_audio_start_ = true;   // the next frame shown while playing starts the sound at its time
  double origin_s_ = 0;            // stream time of media time 0 (FileSource::time_origin_s)
  double volume_ = 1.0;
  bool muted_ = false;
  double av_offset_ms_ = NAN;      // of the last frame shown
  int64_t prev_present_ns_ = 0;    // when the previous frame was shown (hold counting)
  double present_s_ = 0.002;       // how long a frame takes from draw to the screen (median of the last draws)
  std::array<double, 15> draw_times_{};
  size_t draws_ = 0;
  std::vector<AudioOut::Callback> audio_log_;  // of the sounds closed so far (--stats-json)
  double audio_log_origin_ = 0;
};

Result<Media> Player::prepare(std::unique_ptr<video::Source> source, const std::string& kernel) {
  pipeline::PipelineOptions po;
  po.equalizer = o_.eq;
  po.equalizer.kernel = kernel;
  po.equalizer.strength = strength_;
  po.equalizer.quality = quality_;
  po.equalizer.download = false;        // the picture goes from the device to GL...
  po.equalizer.keep_on_device = true;   // ...through interop (GPU); ignored by the CPU equalizer
  // The split view's left side: the input, or settings B, all planes, for every frame (so that the
  // split shows at once, even paused).
  po.equalizer.compare = {true, compare_look_ ? std::optional<pipeline::Look>(look_b_) : std::nullopt};
  po.equalizer.keep_histogram = true;   // the luma plots
  po.max_seconds = o_.range.end_s;
  auto p = pipeline::Pipeline::create(po, source->info());
  if (!p) return p.status();
  Media m;
  m.source = std::move(source);
  m.pipe = std::move(p.value());
  return m;
}

void Player::commit(Media m) {
  source_ = std::move(m.source);
  pipe_ = std::move(m.pipe);
  info_ = source_->info();
  eq_ = pipe_->equalizer();
  menu_ = kernel_menu(eq_.backend, info_.format);
  usable_ = usable_kernels(menu_);
  kernel_shown_ = eq_.kernel;
  kernel_requested_.clear();
  const double fps = info_.frame_rate.valid() ? info_.frame_rate.value() : 30.0;
  interval_s_ = 1.0 / fps;
  budget_ms_ = 1000.0 / fps;
  stats_ = std::make_unique<pipeline::RunStats>(300, !o_.stats_json.empty());
  view_ = StatsView(300);
  luma_ = {};
  rows_.clear();
  ended_ = false;
  open_audio();
}

void Player::open_audio() {
  if (audio_ && !o_.stats_json.empty()) {
    for (auto c : audio_->callback_log()) {
      c.start_s -= origin_s_;
      audio_log_.push_back(c);
    }
  }
  audio_.reset();
  need_audio_start_ = true;
  av_offset_ms_ = NAN;
  const bool file = dynamic_cast<video::FileSource*>(source_.get()) != nullptr && !info_.live;
  if (o_.no_audio) audio_note_ = "off (--no-audio)";
  else if (!file) audio_note_ = "none (not a file)";
  else if (o_.max_speed) audio_note_ = "off (--max-speed plays as fast as it can)";
  if (o_.no_audio || !file || o_.max_speed) return;
  AudioOutOptions ao;
  ao.volume = volume_;
  ao.muted = muted_;
  ao.log_callbacks = !o_.stats_json.empty();
  auto a = AudioOut::open(info_.name, ao);
  if (!a) {
    if (a.status().code() == Code::not_found) {
      audio_note_ = "none (no audio track)";
    } else {
      audio_note_ = "none: " + a.status().message();
      std::fprintf(stderr, "histeq: note: %s; playing without sound\n", a.status().message().c_str());
    }
    return;
  }
  audio_ = std::move(a.value());
  audio_note_.clear();
  std::printf("histeq play: sound %s\n", audio_->description().c_str());
  std::fflush(stdout);
}

void Player::drop_audio(const std::string& why) {
  say(why + ": playing on without sound", true);
  std::fprintf(stderr, "histeq: %s; playing on without sound\n", why.c_str());
  audio_.reset();
  audio_note_ = "none: " + why;
  pacer_.reset();
}

double Player::audio_now() const { return audio_ ? audio_->clock_s() - origin_s_ : NAN; }

int Player::run(std::unique_ptr<video::Source> source, const std::vector<std::string>& argv) {
  auto r = gl::VideoRenderer::create();
  if (!r) return fail(r.status().to_string());
  renderer_ = std::move(r.value());
  overlay_ = std::make_unique<Overlay>(window_->mono_font());
  auto m = prepare(std::move(source), o_.eq.kernel);
  if (!m) return fail(m.status().to_string());
  commit(std::move(m.value()));
  if (!o_.kernel_sequence.empty()) {
    auto seq = parse_kernel_sequence(o_.kernel_sequence, usable_);
    if (!seq) return fail(seq.status().to_string(), 2);
    sequence_ = std::move(seq.value());
    if (sequence_.front() != eq_.kernel) request_kernel(sequence_.front());
  }
  std::printf("histeq play: %s\n  decoded by %s\n  -> %s; window %dx%d (%s)%s\n", info_.description.c_str(),
              info_.decoder.c_str(), describe_equalizer(eq_).c_str(),
              window_->fb_width(), window_->fb_height(), window_->gl_description().c_str(),
              window_->vsync() ? ", vsync" : "");
  std::fflush(stdout);

  // --start: the first frame is the one at (or just after) it.
  if (Status s = video::check_time_range(o_.range, info_.live ? 0 : info_.duration_s, info_.name); !s) return fail(s.to_string());
  if (o_.range.start_s > 0) {
    if (!source_->can_seek()) return fail(info_.name + ": --start needs a source that can seek");
    if (Status s = pipe_->seek(*source_, o_.range.start_s); !s) return fail(s.to_string());
  }

  const auto t0 = Clock::now();
  bool need_run = true;
  while (!quit_) {
    if (need_run) {
      run_stop_ = false;
      after_ = After::none;
      ended_ = false;
      pacer_.reset();
      if (audio_) audio_->halt();  // the sound starts again with the run's first frame
      need_audio_start_ = true;
      const Status s = pipe_->run(*source_, *this, run_stop_, stats_.get());
      if (!s && s.code() != Code::cancelled) {
        std::fprintf(stderr, "histeq: %s\n", s.to_string().c_str());
        say(s.to_string(), true);
        exit_code_ = 1;
        ended_ = true;
      } else if (s.is_ok()) {
        ended_ = true;
      }
      if (ended_ && o_.exit_at_end) {
        // As mpv: the sound plays to its end (or the end of the range) too.
        while (!quit_ && audio_ && audio_->started() && !audio_->drained())
          if (Status u = ui_tick(); !u) return fail(u.to_string());
        break;
      }
    }
    // The last frame stays on screen, with a live UI, until the user seeks, opens a file or quits.
    while (!quit_ && after_ == After::none) {
      if (Status u = ui_tick(); !u) {
        std::fprintf(stderr, "histeq: %s\n", u.to_string().c_str());
        return 1;
      }
    }
    if (quit_) break;
    need_run = true;
    if (after_ == After::seek) {
      if (Status s = pipe_->seek(*source_, seek_target_); !s) {
        say(s.to_string(), true);
        need_run = false;
      }
    } else if (after_ == After::open && pending_) {
      commit(std::move(*pending_));
      pending_.reset();
      std::printf("histeq play: %s\n  decoded by %s\n  -> %s\n", info_.description.c_str(), info_.decoder.c_str(),
                  describe_equalizer(eq_).c_str());
      std::fflush(stdout);
    }
    after_ = After::none;
  }
  if (export_.progress().running) {
    std::fprintf(stderr, "histeq: stopping the export in progress (its output is not written)\n");
    export_.cancel();
  }

  const double wall = std::chrono::duration<double>(Clock::now() - t0).count();
  const auto sc = source_->counters();
  const auto pc = pipe_->counters();
  std::printf("histeq play: window closed after %.2f s: %s\n%s", wall, counters_line(stats_->frames(), wall, *stats_, pc.dropped_source, sc).c_str(),
              format_stage_table(stats_->total(), pipe_->stages(), false).c_str());
  std::fflush(stdout);
  if (!o_.stats_json.empty()) {
    // The sound: every device callback (when, which samples, their media time), so that the sync
    // can be measured against what the device played (SDL's disk driver writes it to a file).
    auto audio_section = [&](nlohmann::json& j) {
      if (audio_) {
        for (auto c : audio_->callback_log()) {
          c.start_s -= origin_s_;
          audio_log_.push_back(c);
        }
      }
      nlohmann::json a = {{"playing", audio_ != nullptr}, {"note", audio_note_}, {"volume", volume_}, {"muted", muted_}};
      if (audio_) {
        a["track"] = audio_->description();
        a["driver"] = audio_->driver();
        a["rate"] = audio_->rate();
        a["channels"] = audio_->channels();
        a["sample_format"] = "f32";
        a["latency_s"] = audio_->latency_s();
        a["underruns"] = audio_->underruns();
        a["device_samples"] = audio_->device_samples();
      }
      nlohmann::json cbs = nlohmann::json::array();
      for (const auto& c : audio_log_) cbs.push_back({c.ns, c.first_sample, c.frames, c.timed, c.start_s});
      a["callbacks_columns"] = {"steady_ns", "first_sample", "frames", "timed_frames", "media_s"};
      a["callbacks"] = std::move(cbs);
      a["held_frames"] = view_.held_frames();
      j["audio"] = std::move(a);
    };
    Status js = write_stats_json(o_.stats_json, argv, info_, eq_, *stats_, pipe_->stages(), wall,
                                 {{"dropped_source", pc.dropped_source},
                                  {"corrupt_packets", sc.corrupt_packets},
                                  {"damaged_frames", sc.damaged_frames},
                                  {"repaired_timestamps", sc.repaired_timestamps}},
                                 audio_section);
    if (!js) return fail(js.to_string());
  }
  return exit_code_;
}

Status Player::consume(pipeline::PipelineFrame pf, pipeline::FrameRecord& rec) {
  if (run_stop_) return Status::ok();  // stopping: the frame is not shown
  // Paused: the frame on screen stays (and the UI lives) until play or step; this one waits.
  bool waited = false;
  while (!run_stop_ && paused_ && !step_) {
    HISTEQ_TRY(ui_tick());
    waited = true;
  }
  if (run_stop_) return Status::ok();
  const bool stepping = step_;
  step_ = false;
  if (audio_ && !o_.max_speed && !stepping) return consume_synced(pf, rec);
  if (stepping) need_audio_start_ = true;  // the sound resumes with the frame after the steps
  return consume_paced(pf, rec, waited, stepping);
}

// Without sound: the frames keep to the wall clock (Pacer) from the first one shown.
Status Player::consume_paced(pipeline::PipelineFrame& pf, pipeline::FrameRecord& rec, bool restart, bool stepping) {
  video::FramePtr& f = pf.frame;
  const bool realtime = !o_.max_speed && !stepping;
  if (restart || stepping || !pacer_) pacer_.emplace(interval_s_);  // the media clock restarts here
  const int64_t capture = f->timing.capture_ns;  // live sources: shown when they come, a backlog dropped
  pipeline::Pacer::Plan plan = capture > 0 ? pacer_->plan_live(capture, now_ns()) : pacer_->plan(f->time_s, now_ns());
  if (realtime) {
    if (plan.drop) {  // more than a frame interval behind: showing it would only add delay
      rec.dropped = true;
      view_.add(rec, budget_ms_);
      return Status::ok();
    }
    // The previous frame stays on screen, with a live UI, until this one is due.
    while (!run_stop_ && now_ns() + tick_period_ns_ < plan.due_ns) HISTEQ_TRY(ui_tick());
    if (run_stop_) return Status::ok();
    std::this_thread::sleep_until(Clock::time_point(std::chrono::nanoseconds(plan.due_ns)));
  }
  const int64_t t0 = now_ns();
  HISTEQ_TRY(show(pf, rec));
  if (realtime) rec.late = pacer_->late(plan.due_ns, t0);
  view_.add(rec, budget_ms_);
  return Status::ok();
}

// With sound: the frames follow the audio clock. The first frame of a run (or after steps) starts
// the sound at its own time; then a frame the sound has passed by more than a frame interval is
// dropped, and a frame ahead of it waits, the picture on screen held (a repeat) meanwhile.
Status Player::consume_synced(pipeline::PipelineFrame& pf, pipeline::FrameRecord& rec) {
  const double t = pf.frame->time_s;
  const int64_t arrived = now_ns();
  if (need_audio_start_) {
    // The sound starts with this frame: the track is sought to its time and the device filled,
    // the picture goes up (a first draw can be slow), then the device plays.
    need_audio_start_ = false;
    if (const auto* file = dynamic_cast<const video::FileSource*>(source_.get())) origin_s_ = file->time_origin_s();
    const double until = o_.range.end_s > 0 ? origin_s_ + o_.range.end_s : 0;
    if (Status s = audio_->start(origin_s_ + t, until, true); !s) {
      drop_audio(s.to_string());
      return consume_paced(pf, rec, true, false);
    }
    HISTEQ_TRY(show(pf, rec));
    audio_->set_paused(paused_);
    rec.av_offset_ms = 0;
    av_offset_ms_ = 0;
    prev_present_ns_ = rec.presented_ns;
    view_.add(rec, budget_ms_, true);
    return Status::ok();
  }
  // The device takes its first run within a period or two; one that never does is given up.
  while (std::isnan(audio_now())) {
    if (run_stop_) return Status::ok();
    if (now_ns() - arrived > 2'000'000'000 && !paused_) {
      drop_audio("the sound device does not play");
      return consume_paced(pf, rec, true, false);
    }
    HISTEQ_TRY(ui_tick());
  }
  // Dropped when it would reach the screen more than a frame interval after the sound.
  if (sync_action(t, audio_now() + present_s_, interval_s_, 0) == SyncAction::drop) {
    rec.dropped = true;
    view_.add(rec, budget_ms_, true);
    return Status::ok();
  }
  // Wait for the sound to reach the frame, less the time a draw takes to reach the screen, the UI
  // alive meanwhile (paused: the clock stands, so this waits).
  for (;;) {
    if (run_stop_) return Status::ok();
    const double lead = t - audio_now() - present_s_;
    if (!(lead > 0)) break;
    if (lead * 1e9 > static_cast<double>(tick_period_ns_) || paused_) {
      HISTEQ_TRY(ui_tick());
      continue;
    }
    std::this_thread::sleep_for(std::chrono::nanoseconds(static_cast<int64_t>(lead * 1e9)));
    break;
  }
  const int64_t drawn_from = now_ns();
  HISTEQ_TRY(show(pf, rec));
  // The draw time to aim ahead by: the median of the last draws (one slow draw does not move it).
  draw_times_[draws_++ % draw_times_.size()] = static_cast<double>(rec.presented_ns - drawn_from) * 1e-9;
  std::array<double, 15> sorted = draw_times_;
  const size_t n = std::min(draws_, sorted.size());
  std::nth_element(sorted.begin(), sorted.begin() + n / 2, sorted.begin() + n);
  present_s_ = sorted[n / 2];
  const double offset = audio_now() - t;  // at the swap
  rec.av_offset_ms = static_cast<float>(offset * 1e3);
  av_offset_ms_ = offset * 1e3;
  rec.late = offset > interval_s_ / 2;
  // A frame that was ready in time but waited for the sound past 1.5 intervals: the one before it
  // was held on screen.
  const int64_t interval_ns = static_cast<int64_t>(interval_s_ * 1e9);
  if (prev_present_ns_ > 0 && arrived < prev_present_ns_ + interval_ns && rec.presented_ns - prev_present_ns_ > interval_ns * 3 / 2)
    view_.held();
  prev_present_ns_ = rec.presented_ns;
  view_.add(rec, budget_ms_, true);
  return Status::ok();
}

// Draws the frame (and the UI) and completes its record's present stage.
Status Player::show(pipeline::PipelineFrame& pf, pipeline::FrameRecord& rec) {
  video::FramePtr& f = pf.frame;
  const int64_t t0 = now_ns();
  HISTEQ_TRY(uploader_.put(*f, pf.side.compare.get(), *renderer_));
  const std::string shown = eq::describe(pf.side.quality);
  if (shown != quality_shown_) {
    std::printf("histeq play: %s from frame %lld\n", shown.c_str(), static_cast<long long>(f->index));
    std::fflush(stdout);
    quality_shown_ = shown;
  }
  if (!pf.side.kernel.empty() && pf.side.kernel != kernel_shown_) {
    std::printf("histeq play: kernel %s from frame %lld\n", pf.side.kernel.c_str(), static_cast<long long>(f->index));
    std::fflush(stdout);
    kernel_shown_ = pf.side.kernel;
  }
  if (kernel_requested_ == kernel_shown_) kernel_requested_.clear();
  luma_ = luma_plots(pf.side.histogram, pf.side.lut);
  current_ = std::move(f);
  ++frames_presented_;
  video_rate_.tick(t0);
  HISTEQ_TRY(draw_frame());
  rec.presented_ns = now_ns();  // after the swap
  rec.timing.set(video::stage::present, (render_done_ns_ - t0) / 1e6);

  if (!sequence_.empty() && o_.switch_every > 0 && frames_presented_ % o_.switch_every == 0) {
    sequence_pos_ = (sequence_pos_ + 1) % sequence_.size();
    request_kernel(sequence_[sequence_pos_]);
  }
  return Status::ok();
}

Status Player::idle() {
  if (run_stop_) return Status::ok();
  return ui_tick();
}

Status Player::ui_tick() {
  const int64_t t0 = now_ns();
  HISTEQ_TRY(draw_frame());
  // Without vsync (or where the display ignores it) the swap returns at once: keep to the
  // display's rate rather than spin.
  const int64_t rest = tick_period_ns_ - (now_ns() - t0);
  if (rest > 0) std::this_thread::sleep_for(std::chrono::nanoseconds(rest));
  return Status::ok();
}

Status Player::draw_frame() {
  // Ticks (and so --keys and --frames) count from the first window frame that shows video, or
  // once the input has ended (or failed) without any.
  if (current_ || ended_) ++tick_;
  if (signal_stop_.load()) request_quit();
  window_->poll([this](const SDL_Event& e) { on_event(e); });
  while (tick_ > 0 && script_next_ < script_.size() && script_[script_next_].tick <= tick_) {
    const ScriptedKey& k = script_[script_next_++];
    if (k.command == Command::open_file) request_open(k.arg);
    else if (k.command == Command::export_file) start_export(k.arg);
    else if (k.command == Command::control) toggle_control(k.arg);
    else run_command(k.command);
  }

  const int fbw = window_->fb_width(), fbh = window_->fb_height();
  const float sar = current_ ? sample_aspect(*current_) : 1.f;
  video_rect_ = current_ ? gl::fit_rect(fbw, fbh, current_->format().width, current_->format().height, sar) : gl::Rect{};
  window_->new_frame();
  OverlayActions act;
  overlay_->draw(state(), act);
  apply(act);

  if (current_) {
    gl::DrawOptions d;
    d.color = FrameUploader::color(current_->color, current_->format().height);
    d.split = split_ ? split_pos_ : -1.f;
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
  display_rate_.tick(render_done_ns_);
  if (screenshot_pending_) {
    screenshot_pending_ = false;
    char name[64];
    std::snprintf(name, sizeof(name), "histeq-shot-%06lld.png", static_cast<long long>(tick_));
    const std::string path = (std::filesystem::path(o_.screenshot_dir) / name).string();
    if (Status s = screenshot(path); !s) say(s.to_string(), true);
    else say("screenshot: " + path);
  }
  // --frames: the end of a scripted run; an export it started is let finish first.
  if (o_.frames > 0 && tick_ >= o_.frames && !quit_ && !export_.progress().running) {
    if (!o_.screenshot.empty()) {
      if (Status s = screenshot(o_.screenshot); !s) {
        std::fprintf(stderr, "histeq: %s\n", s.to_string().c_str());
        exit_code_ = 1;
      }
    }
    request_quit();
  }
  window_->swap();
  return Status::ok();
}

Status Player::screenshot(const std::string& path) {
  auto img = window_->read_back();
  if (!img) return img.status();
  HISTEQ_TRY(write_png(path, *img));
  std::printf("histeq play: screenshot %s (%dx%d, frame %lld)\n", path.c_str(), img->width, img->height,
              static_cast<long long>(tick_));
  std::fflush(stdout);
  return Status::ok();
}

void Player::on_event(const SDL_Event& e) {
  switch (e.type) {
    case SDL_QUIT:
      request_quit();
      break;
    case SDL_WINDOWEVENT:
      if (e.window.event == SDL_WINDOWEVENT_CLOSE) request_quit();
      break;
    case SDL_DROPFILE: {
      const std::string path = e.drop.file != nullptr ? e.drop.file : "";
      SDL_free(e.drop.file);
      if (!path.empty()) request_open(path);
      break;
    }
    case SDL_KEYDOWN: {
      if (ImGui::GetIO().WantCaptureKeyboard) break;  // typing into a field
      const bool repeat = e.key.repeat != 0;
      const bool shift = (e.key.keysym.mod & KMOD_SHIFT) != 0;
      switch (e.key.keysym.sym) {
        case SDLK_SPACE: if (!repeat) run_command(Command::pause); break;
        case SDLK_PERIOD: run_command(Command::step); break;
        case SDLK_LEFT: run_command(Command::seek_back); break;
        case SDLK_RIGHT: run_command(Command::seek_forward); break;
        case SDLK_k: run_command(shift ? Command::prev_kernel : Command::next_kernel); break;
        case SDLK_o: if (!repeat) run_command(Command::overlay); break;
        case SDLK_b: if (!repeat) run_command(Command::split); break;
        case SDLK_p: if (!repeat) run_command(Command::plain); break;
        case SDLK_v: if (!repeat) run_command(Command::compare); break;
        case SDLK_w: if (!repeat) run_command(Command::swap); break;
        case SDLK_s: if (!repeat) run_command(Command::screenshot); break;
        case SDLK_f: if (!repeat) run_command(Command::fullscreen); break;
        case SDLK_m: if (!repeat) run_command(Command::mute); break;
        case SDLK_9:
        case SDLK_KP_9: run_command(Command::volume_down); break;
        case SDLK_0:
        case SDLK_KP_0: run_command(Command::volume_up); break;
        case SDLK_h:
        case SDLK_F1: if (!repeat) run_command(Command::help); break;
        case SDLK_q: run_command(Command::quit); break;
        case SDLK_ESCAPE:
          if (show_help_) show_help_ = false;
          else if (SDL_GetWindowFlags(window_->sdl()) & SDL_WINDOW_FULLSCREEN_DESKTOP) window_->toggle_fullscreen();
          break;
        default: {  // the control table's keys (g, l, t, ...)
          const SDL_Keycode sym = e.key.keysym.sym;
          const auto cmds = commands();
          const CommandInfo* c = sym > 0 && sym < 128 ? control_key(cmds, std::string(1, static_cast<char>(sym))) : nullptr;
          if (c != nullptr && !repeat) toggle_control(c->control);
          break;
        }
      }
      break;
    }
    default: break;
  }
}

void Player::toggle_control(const std::string& name) {
  set_quality(app::player::toggle_control(name, quality_, before_plain_.value_or(o_.eq.quality)));
}

void Player::run_command(Command c) {
  const double pos = after_ == After::seek ? seek_target_ : current_ ? current_->time_s : 0.0;
  switch (c) {
    case Command::pause:
      paused_ = !paused_;
      // After frame steps (or a seek while paused) the sound starts again with the next frame; so
      // too when a step is still pending (asked for, its frame not yet come: a busy machine), or
      // the sound would resume where it stopped while the picture moves on.
      if (audio_ && !need_audio_start_ && !step_) audio_->set_paused(paused_);
      break;
    case Command::step:
      paused_ = true;
      step_ = true;
      if (audio_) audio_->set_paused(true);
      break;
    case Command::mute:
      muted_ = !muted_;
      if (audio_) audio_->set_muted(muted_);
      say(audio_ ? (muted_ ? "sound muted" : "sound on") : "no sound: " + audio_note_);
      break;
    case Command::volume_down:
    case Command::volume_up: {
      const double step = c == Command::volume_up ? kVolumeStep : -kVolumeStep;
      volume_ = std::clamp(std::round((volume_ + step) * 100) / 100, 0.0, kMaxVolume);
      if (audio_) audio_->set_volume(volume_);
      char b[48];
      std::snprintf(b, sizeof(b), "volume %.0f%%%s", volume_ * 100, muted_ ? " (muted)" : "");
      say(audio_ ? b : "no sound: " + audio_note_);
      break;
    }
    case Command::seek_back: request_seek(pos - kSeekStepS); break;
    case Command::seek_forward: request_seek(pos + kSeekStepS); break;
    case Command::next_kernel: request_kernel(cycle(usable_, target_kernel(), 1)); break;
    case Command::prev_kernel: request_kernel(cycle(usable_, target_kernel(), -1)); break;
    case Command::overlay: overlay_visible_ = !overlay_visible_; break;
    case Command::split: split_ = !split_; break;
    case Command::control: break;  // with its control's name: toggle_control()
    case Command::plain:
      if (quality_.plain() && before_plain_) {
        set_quality(*before_plain_);
      } else if (!quality_.plain()) {
        const eq::Quality back = quality_;
        eq::Quality p = eq::plain_quality();  // the levels stay as they are
        p.range = back.range;
        p.textbook = back.textbook;
        set_quality(p);
        before_plain_ = back;
      }
      break;
    case Command::compare: set_compare(!compare_look_, look_b_); break;
    case Command::swap: {
      const pipeline::Look a{strength_, quality_};
      const pipeline::Look b = look_b_;
      if (Status st = pipe_->set_strength(b.strength); st) strength_ = static_cast<float>(b.strength);
      set_quality(b.quality);
      set_compare(true, a);
      break;
    }
    case Command::screenshot: screenshot_pending_ = true; break;
    case Command::fullscreen: window_->toggle_fullscreen(); break;
    case Command::help: show_help_ = !show_help_; break;
    case Command::quit: request_quit(); break;
    case Command::open_file:
    case Command::export_file: break;  // scripted only, with their path (draw_frame)
  }
}

void Player::apply(const OverlayActions& a) {
  if (a.kernel) request_kernel(*a.kernel);
  if (a.strength) {
    if (Status s = pipe_->set_strength(*a.strength); s) strength_ = *a.strength;
    else say(s.to_string(), true);
  }
  if (a.quality) set_quality(*a.quality);
  if (a.compare_look || a.look_b) set_compare(a.compare_look.value_or(compare_look_), a.look_b.value_or(look_b_));
  if (a.swap) run_command(Command::swap);
  if (a.split) split_ = *a.split;
  if (a.split_pos) split_pos_ = *a.split_pos;
  if (a.toggle_pause) run_command(Command::pause);
  if (a.step) run_command(Command::step);
  if (a.toggle_help) show_help_ = !show_help_;
  if (a.seek_to) request_seek(*a.seek_to);
  if (a.open) request_open(*a.open);
  if (a.export_to) start_export(*a.export_to);
  if (a.cancel_export) export_.cancel();
}

void Player::request_kernel(const std::string& name) {
  if (name.empty() || name == target_kernel()) return;
  if (Status s = pipe_->set_kernel(name); !s) {
    say(s.to_string(), true);
    return;
  }
  kernel_requested_ = name == kernel_shown_ ? "" : name;
}

void Player::set_quality(const eq::Quality& q) {
  if (Status s = pipe_->set_quality(q); !s) {
    say(s.to_string(), true);
    return;
  }
  if (!q.plain()) before_plain_.reset();
  quality_ = q;
  say("settings: " + eq::describe(q) + " (from the next frame)");
}

void Player::set_compare(bool look, const pipeline::Look& b) {
  if (Status s = pipe_->set_compare({true, look ? std::optional<pipeline::Look>(b) : std::nullopt}); !s) {
    say(s.to_string(), true);
    return;
  }
  compare_look_ = look;
  look_b_ = b;
  if (look && !split_) split_ = true;  // asking for settings B means wanting to see them
}

void Player::request_seek(double t) {
  if (!source_->can_seek()) {
    say(info_.name + ": this source cannot seek", true);
    return;
  }
  if (after_ == After::open || after_ == After::quit) return;
  // Seeking to the very end would show nothing: the last frame is as far as it goes.
  t = std::max(0.0, t);
  const double end = o_.range.end_s > 0 && (info_.duration_s <= 0 || o_.range.end_s < info_.duration_s) ? o_.range.end_s : info_.duration_s;
  seek_target_ = end > 0 ? std::min(t, std::max(0.0, end - interval_s_)) : t;
  after_ = After::seek;
  run_stop_ = true;
  if (paused_) step_ = true;  // show where the seek landed, and stay paused
}

void Player::request_open(const std::string& path) {
  if (after_ == After::quit) return;
  // Everything that can fail happens now, while the current video plays on.
  video::FileSourceOptions fo;
  fo.hwdec = hwdec_for(o_.hwdec, o_.eq);
  auto src = video::FileSource::open(path, fo);
  if (!src) {
    say(src.status().to_string(), true);
    return;
  }
  const std::string keep = target_kernel();
  const bool keep_ok = pipeline::Equalizer::check_kernel(keep, eq_.backend, (*src)->info().format).is_ok();
  auto m = prepare(std::move(src.value()), keep_ok ? keep : o_.eq.kernel);
  if (!m) {
    say(m.status().to_string(), true);
    return;
  }
  pending_ = std::move(m.value());
  after_ = After::open;
  run_stop_ = true;
  step_ = paused_;
  say("playing " + path);
}

void Player::request_quit() {
  quit_ = true;
  after_ = After::quit;
  run_stop_ = true;
}

void Player::say(const std::string& msg, bool error) {
  message_ = msg;
  message_error_ = error;
  message_until_ns_ = now_ns() + (error ? 12'000'000'000LL : 5'000'000'000LL);
}

void Player::start_export(const std::string& output) {
  pipeline::ExportOptions eo;
  eo.input = info_.name;
  eo.output = output;
  eo.pipeline.equalizer = o_.eq;
  eo.pipeline.equalizer.kernel = target_kernel();
  eo.pipeline.equalizer.strength = strength_;
  eo.pipeline.equalizer.quality = quality_;
  eo.hwdec = hwdec_for(o_.hwdec, o_.eq);
  if (Status s = export_.start(eo); !s) {
    say(s.to_string(), true);
  } else {
    say("exporting to " + output);
    export_reported_ = false;
  }
}

OverlayState Player::state() {
  OverlayState s;
  const int64_t now = now_ns();
  s.source = keep_numbers_with_units(info_.description + "; decoded by " + info_.decoder);
  s.format = keep_numbers_with_units(info_.format.describe() + ", " + color_name(FrameUploader::color(info_.color, info_.format.height)));
  s.equalizer = keep_numbers_with_units(describe_equalizer(eq_));
  // The renderer's short name ("llvmpipe", "NVIDIA H200"): its full description is the tooltip.
  std::string gpu = window_->gl_description();
  gpu = gpu.substr(0, std::min({gpu.find(" ("), gpu.find('/'), gpu.find(", OpenGL")}));
  s.display = (uploader_.path().empty() ? std::string("-") : uploader_.path()) + ", " + gpu;
  s.display_detail = window_->gl_description();
  s.kernels = menu_;
  s.kernel_shown = kernel_shown_;
  s.kernel_requested = kernel_requested_;
  s.strength = strength_;
  s.quality = quality_;
  s.quality_shown = quality_shown_;
  s.compare_look = compare_look_;
  s.look_b = look_b_;
  s.split = split_;
  s.split_pos = split_pos_;
  const float ppp = window_->pixels_per_point();
  s.video_x = video_rect_.x / ppp;
  s.video_y = (window_->fb_height() - video_rect_.y - video_rect_.h) / ppp;
  s.video_w = video_rect_.w / ppp;
  s.video_h = video_rect_.h / ppp;
  s.paused = paused_;
  s.ended = ended_;
  s.can_seek = source_->can_seek();
  s.position_s = current_ ? current_->time_s : 0;
  s.duration_s = info_.duration_s;
  s.budget_ms = budget_ms_;
  s.source_fps = 1.0 / interval_s_;
  s.frame_ms = view_.frame_times();
  if (now - rows_at_ns_ > 100'000'000) {  // the table changes ten times a second: readable, and cheap
    rows_at_ns_ = now;
    rows_.clear();
    const auto w = stats_->window();
    for (int r : pipeline::ordered_rows(w, pipe_->stages()))
      rows_.push_back({pipeline::row_name(r), w[r].last, w[r].avg, w[r].p99, w[r].max, {}, r});
  }
  s.stages = rows_;
  for (auto& r : s.stages) r.spark = view_.series(r.row);
  s.display_fps = display_rate_.rate();
  s.video_fps = video_rate_.rate();
  s.frames_shown = frames_presented_;
  for (int c = 0; c < kCauses; ++c) {
    s.dropped[static_cast<size_t>(c)] = view_.dropped(static_cast<Cause>(c));
    s.late[static_cast<size_t>(c)] = view_.late(static_cast<Cause>(c));
  }
  s.dropped_source = pipe_->counters().dropped_source;
  if (audio_) s.audio = keep_numbers_with_units(audio_->description());
  s.audio_note = audio_note_;
  s.volume = volume_;
  s.muted = muted_;
  s.av_offset_ms = av_offset_ms_;
  s.held = view_.held_frames();
  const auto sc = source_->counters();
  s.corrupt_packets = sc.corrupt_packets;
  s.damaged_frames = sc.damaged_frames;
  s.luma = luma_;

  const bool is_file = dynamic_cast<video::FileSource*>(source_.get()) != nullptr && !info_.live;
  s.exp.available = is_file;
  s.exp.why_not = is_file ? "" : "export works on files (open one, or drop it on the window)";
  s.exp.suggested_output = is_file ? suggested_export(info_.name) : "";
  s.browse_from = is_file ? info_.name : "";
  const ExportJob::Progress p = export_.progress();
  if (p.finished && !export_reported_) {
    std::printf("histeq play: export: %s\n", p.message.c_str());
    std::fflush(stdout);
    export_reported_ = true;
  }
  s.exp.running = p.running;
  s.exp.fraction = p.fraction;
  char line[160];
  std::snprintf(line, sizeof(line), "frame %lld%s   %.1f fps   ETA %s", static_cast<long long>(p.frames),
                p.frames_expected > 0 ? ("/" + std::to_string(p.frames_expected)).c_str() : "", p.fps,
                p.eta_s >= 0 ? clock_string(p.eta_s).c_str() : "?");
  s.exp.line = line;
  s.exp.result = p.finished ? p.message : "";
  s.exp.failed = p.failed;

  if (now < message_until_ns_) {
    s.message = message_;
    s.message_is_error = message_error_;
  }
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
  Player p(o, std::move(window), std::move(script.value()), stop);
  return p.run(std::move(source), argv);
}

}  // namespace histeq::app::player
