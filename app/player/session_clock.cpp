// The session's run loop and clock: pipeline runs between seeks and opened files, the frames paced
// to the wall clock or following the sound, and the window frames drawn while none is due.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <thread>

#include "app/common/run_common.h"
#include "app/player/audio_clock.h"
#include "app/player/session.h"
#include "core/video/file_source.h"

namespace histeq::app::player {
namespace {

using Clock = std::chrono::steady_clock;

int64_t now_ns() { return std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now().time_since_epoch()).count(); }

}  // namespace

int Session::run(std::unique_ptr<video::Source> source, Frontend& frontend, const std::vector<std::string>& argv) {
  frontend_ = &frontend;
  if (const int rc = start(std::move(source)); rc != 0) return rc;
  const auto t0 = Clock::now();
  bool need_run = true;
  while (!quit_) {
    if (need_run) {
      if (Status s = play_run(); !s) return fail(s.to_string());
      if (ended_ && o_.exit_at_end) break;
    }
    // The last frame stays on screen, with a live UI, until the user seeks, opens a file or quits.
    while (!quit_ && after_ == After::none) {
      if (Status u = ui_tick(); !u) {
        std::fprintf(stderr, "histeq: %s\n", u.to_string().c_str());
        return 1;
      }
    }
    if (quit_) break;
    need_run = after_run();
  }
  poll_export();  // an export that ended in the last window frame
  if (export_.progress().running) {
    std::fprintf(stderr, "histeq: stopping the export in progress (its output is not written)\n");
    export_.cancel();
  }
  return finish(std::chrono::duration<double>(Clock::now() - t0).count(), argv);
}

// One pipeline run, to the end of the input or until a command stops it. An error of the run ends
// the input (the exit code says so); an error of the window is returned.
Status Session::play_run() {
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
  if (ended_) {
    event("end-file");
    step_ = false;  // no frame comes to a step asked for at the end (a screenshot would wait for it)
  }
  if (ended_ && o_.exit_at_end) {
    // As mpv: the sound plays to its end (or the end of the range) too.
    while (!quit_ && audio_ && audio_->started() && !audio_->drained()) HISTEQ_TRY(ui_tick());
  }
  return Status::ok();
}

// What stopped the run: a seek (the source moves), or another file (it replaces this one). False
// when the next run cannot start (a failed seek: the last frame stays).
bool Session::after_run() {
  bool again = true;
  if (after_ == After::seek || after_ == After::refresh) {
    if (Status s = pipe_->seek(*source_, seek_target_); !s) {
      say(s.to_string(), true);
      again = false;
      step_ = false;
      showing_.reset();
    }
  } else if (after_ == After::open && pending_) {
    commit(std::move(*pending_));
    pending_.reset();
    std::printf("histeq play: %s\n  decoded by %s\n  -> %s\n", info_.description.c_str(), info_.decoder.c_str(),
                describe_equalizer(eq_).c_str());
    std::fflush(stdout);
  }
  after_ = After::none;
  return again;
}

Status Session::consume(pipeline::PipelineFrame pf, pipeline::FrameRecord& rec) {
  if (run_stop_) return Status::ok();  // stopping: the frame is not shown
  const Status s = consume_frame(pf, rec);
  // Latency leaves out the time playback stood paused within the frame's life, but not the work
  // done on it meanwhile (a frame made again for a paused change was decoded while paused).
  const int64_t now = now_ns();
  double work_ms = 0;
  for (video::StageId id = 0; id < video::kMaxStages; ++id)
    if (rec.timing.has(id) && id != video::stage::glass) work_ms += rec.timing.get(id);
  const int64_t idle_ns = std::max<int64_t>(0, now - rec.timing.start_ns - static_cast<int64_t>(work_ms * 1e6));
  rec.paused_ns = std::min(pause_log_.overlap(rec.timing.start_ns, now), idle_ns);
  return s;
}

Status Session::consume_frame(pipeline::PipelineFrame& pf, pipeline::FrameRecord& rec) {
  // Paused: the frame on screen stays (and the UI lives) until play or step; this one waits.
  bool waited = false;
  while (!run_stop_ && paused_ && !step_) {
    HISTEQ_TRY(ui_tick());
    waited = true;
  }
  if (run_stop_) return Status::ok();
  if (stale(pf)) return Status::ok();  // made before a paused change (live): the next one shows
  stale_before_ns_ = 0;
  const bool stepping = step_;
  step_ = false;
  if (audio_follows() && !stepping) return consume_synced(pf, rec);
  if (stepping) need_audio_start_ = true;  // the sound resumes with the frame after the steps
  return consume_paced(pf, rec, waited, stepping);
}

bool Session::stale(const pipeline::PipelineFrame& pf) const {
  return stale_before_ns_ > 0 && pf.frame->timing.start_ns > 0 && pf.frame->timing.start_ns < stale_before_ns_;
}

// ffplay's rule: a late frame goes only when a newer one is ready to take its place; otherwise it
// is shown late (a slow machine shows a slower picture, not a still one).
bool Session::drop_late() { return pipe_->ready() > 0; }

// Without sound: the frames keep to the wall clock (Pacer) from the first one shown.
Status Session::consume_paced(pipeline::PipelineFrame& pf, pipeline::FrameRecord& rec, bool restart, bool stepping) {
  video::FramePtr& f = pf.frame;
  const bool realtime = !o_.max_speed && !stepping;
  // The media clock restarts here; at a speed other than 1x it runs that much faster.
  const int64_t capture = f->timing.capture_ns;  // live sources: shown when they come, a backlog dropped
  if (restart || stepping || !pacer_) pacer_.emplace(interval_s_ / speed_);
  pipeline::Pacer::Plan plan = capture > 0 ? pacer_->plan_live(capture, now_ns()) : pacer_->plan(f->time_s / speed_, now_ns());
  if (realtime) {
    if (plan.drop && drop_late()) {  // more than a frame interval behind, and a newer frame is ready
      rec.dropped = true;
      behind_ = true;
      view_.add(rec, budget_ms_);
      return Status::ok();
    }
    // The previous frame stays on screen, with a live UI, until this one is due.
    while (!run_stop_ && now_ns() + frontend_->tick_period_ns() < plan.due_ns) HISTEQ_TRY(ui_tick());
    if (run_stop_) return Status::ok();
    std::this_thread::sleep_until(Clock::time_point(std::chrono::nanoseconds(plan.due_ns)));
  }
  const int64_t t0 = now_ns();
  HISTEQ_TRY(show(pf, rec));
  if (realtime) rec.late = pacer_->late(plan.due_ns, t0);
  behind_ = rec.late;
  view_.add(rec, budget_ms_);
  return Status::ok();
}

// With sound: the frames follow the audio clock. The first frame of a run (or after steps) starts
// the sound at its own time; then a frame the sound has passed by more than a frame interval is
// dropped, and a frame ahead of it waits, the picture on screen held (a repeat) meanwhile.
Status Session::consume_synced(pipeline::PipelineFrame& pf, pipeline::FrameRecord& rec) {
  const double t = pf.frame->time_s;
  const int64_t arrived = now_ns();
  if (need_audio_start_) {
    bool dropped_audio = false;
    HISTEQ_TRY(start_audio_with(pf, rec, dropped_audio));
    return dropped_audio ? consume_paced(pf, rec, true, false) : Status::ok();
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
  // Dropped when it would reach the screen more than a frame interval after the sound, and a
  // newer frame is ready to take its place.
  if (sync_action(t, audio_now() + present_s_, interval_s_, 0, drop_late()) == SyncAction::drop) {
    rec.dropped = true;
    behind_ = true;
    view_.add(rec, budget_ms_, true);
    return Status::ok();
  }
  bool stopped = false;
  HISTEQ_TRY(wait_for_audio(t, stopped));
  if (stopped) return Status::ok();
  const int64_t drawn_from = now_ns();
  HISTEQ_TRY(show(pf, rec));
  note_presented(rec, t, arrived, drawn_from);
  return Status::ok();
}

// The sound starts with this frame: the track is sought to its time and the device filled, the
// picture goes up (a first draw can be slow), then the device plays. `dropped_audio`: the sound
// would not start; the frame is still to be shown, without it.
Status Session::start_audio_with(pipeline::PipelineFrame& pf, pipeline::FrameRecord& rec, bool& dropped_audio) {
  need_audio_start_ = false;
  if (const auto* file = dynamic_cast<const video::FileSource*>(source_.get())) origin_s_ = file->time_origin_s();
  const double until = o_.range.end_s > 0 ? origin_s_ + o_.range.end_s : 0;
  if (Status s = audio_->start(origin_s_ + pf.frame->time_s, until, true, speed_); !s) {
    drop_audio(s.to_string());
    dropped_audio = true;
    return Status::ok();
  }
  HISTEQ_TRY(show(pf, rec));
  audio_->set_paused(paused_);
  rec.av_offset_ms = 0;
  av_offset_ms_ = 0;
  prev_present_ns_ = rec.presented_ns;
  view_.add(rec, budget_ms_, true);
  return Status::ok();
}

// Waits for the sound to reach the frame at `t`, less the time a draw takes to reach the screen,
// the UI alive meanwhile (paused: the clock stands, so this waits). `stopped`: the run is stopping.
Status Session::wait_for_audio(double t, bool& stopped) {
  for (;;) {
    if (run_stop_) {
      stopped = true;
      return Status::ok();
    }
    const double lead = t - audio_now() - present_s_;
    if (!(lead > 0)) return Status::ok();
    if (lead * 1e9 > static_cast<double>(frontend_->tick_period_ns()) || paused_) {
      HISTEQ_TRY(ui_tick());
      continue;
    }
    std::this_thread::sleep_for(std::chrono::nanoseconds(static_cast<int64_t>(lead * 1e9)));
    return Status::ok();
  }
}

// A frame shown with sound: the draw time to aim ahead by, the A/V offset at the swap, lateness and
// holds.
void Session::note_presented(pipeline::FrameRecord& rec, double t, int64_t arrived, int64_t drawn_from) {
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
  behind_ = rec.late;
  // A frame that was ready in time but waited for the sound past 1.5 intervals: the one before it
  // was held on screen.
  const int64_t interval_ns = static_cast<int64_t>(interval_s_ * 1e9);
  if (prev_present_ns_ > 0 && arrived < prev_present_ns_ + interval_ns && rec.presented_ns - prev_present_ns_ > interval_ns * 3 / 2)
    view_.held();
  prev_present_ns_ = rec.presented_ns;
  view_.add(rec, budget_ms_, true);
}

// Shows the frame (with the UI) and completes its record's present stage.
Status Session::show(pipeline::PipelineFrame& pf, pipeline::FrameRecord& rec) {
  video::FramePtr& f = pf.frame;
  const int64_t t0 = now_ns();
  HISTEQ_TRY(frontend_->upload(pf));
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
  if (showing_ && after_ == After::none) {  // the frame a seek (or a paused change) asked for
    event("playback-restart");
    showing_.reset();
  }
  current_ = std::move(f);
  ++frames_presented_;
  video_rate_.tick(t0);
  HISTEQ_TRY(draw());
  rec.presented_ns = now_ns();  // after the swap
  rec.timing.set(video::stage::present, (frontend_->rendered_ns() - t0) / 1e6);

  if (!sequence_.empty() && o_.switch_every > 0 && frames_presented_ % o_.switch_every == 0) {
    sequence_pos_ = (sequence_pos_ + 1) % sequence_.size();
    set_kernel(sequence_[sequence_pos_]);
  }
  return Status::ok();
}

// The pipeline is starved: the window keeps drawing, at the display's rate, or (the video behind
// its clock: a machine that cannot keep up) at ten frames a second, so that redraws do not take the
// time the frames need.
Status Session::idle() {
  if (run_stop_) return Status::ok();
  if (behind_ && now_ns() - frontend_->rendered_ns() < 100'000'000) {
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
    return Status::ok();
  }
  return ui_tick();
}

// A window frame without a new picture, then a wait to the display's next one.
Status Session::ui_tick() {
  const int64_t t0 = now_ns();
  HISTEQ_TRY(draw());
  // Without vsync (or where the display ignores it) the swap returns at once: keep to the
  // display's rate rather than spin.
  const int64_t rest = frontend_->tick_period_ns() - (now_ns() - t0);
  if (rest > 0) std::this_thread::sleep_for(std::chrono::nanoseconds(rest));
  return Status::ok();
}

Status Session::draw() {
  if (signal_stop_.load() && !quit_) {
    signalled_ = true;
    quit();
  }
  poll_export();
  HISTEQ_TRY(frontend_->draw());
  display_rate_.tick(frontend_->rendered_ns());
  return Status::ok();
}

}  // namespace histeq::app::player
