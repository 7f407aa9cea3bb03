// The session's media and commands; the clock is in session_clock.cpp, the sound and the summary
// in session_audio.cpp.
#include "app/player/session.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>

#include "app/common/run_common.h"
#include "app/common/source_request.h"
#include "core/pipeline/source_factory.h"
#include "core/video/file_source.h"

namespace histeq::app::player {
namespace {

int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

std::string suggested_export(const std::string& input) {
  namespace fs = std::filesystem;
  const fs::path p(input);
  return (p.parent_path() / (p.stem().string() + "-histeq.mp4")).string();
}

// The one place the player opens a file the user gives it while playing (drop, Open..., open=).
// A file or URL the player's Open names, through the source factory with the command line's
// decode and live options.
Result<std::unique_ptr<video::Source>> open_file(const PlayOptions& o, const std::string& path) {
  auto src = pipeline::open_source(open_request(o, path));
  if (!src) return src.status();
  return std::move(src->source);
}

}  // namespace

void Session::RateMeter::tick(int64_t now) {
  if (start == 0) start = now;
  ++count;
  if (now - start >= 500'000'000) {
    rate = static_cast<double>(count) * 1e9 / static_cast<double>(now - start);
    count = 0;
    start = now;
  }
}

Session::Session(const PlayOptions& o, const std::atomic<bool>& stop, AudioOpener open_audio)
    : o_(o), signal_stop_(stop), audio_opener_(std::move(open_audio)), strength_(static_cast<float>(o.eq.strength)),
      quality_(o.eq.quality), split_(o.split >= 0), split_pos_(o.split >= 0 ? static_cast<float>(std::min(o.split, 1.0)) : 0.5f) {
  // The left side of the split: --compare's look, else the input (B's settings start as plain
  // equalization, the most telling comparison with the defaults).
  look_b_.quality = eq::plain_quality();
  if (auto l = player::compare_look(o.compare); l && l->has_value()) {
    look_b_ = **l;
    compare_look_ = true;
  }
}

Session::~Session() = default;

Result<Session::Media> Session::prepare(std::unique_ptr<video::Source> source, const std::string& kernel) {
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

void Session::commit(Media m) {
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
  audio_choice_ = -1;  // another file: its default track
  audio_tracks_ = 0;
  open_audio();
}

// The first media: the pipeline, the kernel sequence, what plays (printed), --start.
int Session::start(std::unique_ptr<video::Source> source) {
  auto m = prepare(std::move(source), o_.eq.kernel);
  if (!m) return fail(m.status().to_string());
  commit(std::move(m.value()));
  if (!o_.kernel_sequence.empty()) {
    auto seq = parse_kernel_sequence(o_.kernel_sequence, usable_);
    if (!seq) return fail(seq.status().to_string(), 2);
    sequence_ = std::move(seq.value());
    if (sequence_.front() != eq_.kernel) set_kernel(sequence_.front());
  }
  std::printf("histeq play: %s\n  decoded by %s\n  -> %s; %s\n", info_.description.c_str(), info_.decoder.c_str(),
              describe_equalizer(eq_).c_str(), frontend_->describe().c_str());
  std::fflush(stdout);

  // --start: the first frame is the one at (or just after) it.
  if (Status s = video::check_time_range(o_.range, info_.live ? 0 : info_.duration_s, info_.name); !s) return fail(s.to_string());
  if (o_.range.start_s > 0) {
    if (!source_->can_seek()) return fail(info_.name + ": --start needs a source that can seek");
    if (Status s = pipe_->seek(*source_, o_.range.start_s); !s) return fail(s.to_string());
  }
  return 0;
}

// A file on seekable storage: its sound and its export open it again (standard input cannot be).
bool Session::is_file() const {
  return dynamic_cast<video::FileSource*>(source_.get()) != nullptr && !info_.live && source_->can_seek();
}

void Session::command(Command c) {
  if (sound_command(c) || quality_command(c)) return;
  const double pos = after_ == After::seek ? seek_target_ : current_ ? current_->time_s : 0.0;
  switch (c) {
    case Command::pause: set_paused(!paused_); break;
    case Command::step:
      set_paused(true);
      step_ = !ended_;  // past the last frame there is none to step to
      if (audio_) audio_->set_paused(true);
      break;
    case Command::step_back: step_back(); break;
    case Command::seek_back: seek(pos - kSeekStepS); break;
    case Command::seek_forward: seek(pos + kSeekStepS); break;
    case Command::next_kernel: set_kernel(cycle(usable_, target_kernel(), 1)); break;
    case Command::prev_kernel: set_kernel(cycle(usable_, target_kernel(), -1)); break;
    case Command::split: split_ = !split_; break;  // both sides are made for every frame: nothing to remake
    case Command::compare: set_compare(!compare_look_, look_b_); break;
    case Command::swap: swap_looks(); break;
    case Command::quit: quit(); break;
    default: break;
  }
}

bool Session::sound_command(Command c) {
  if (c == Command::mute) {
    set_muted(!muted_);
    return true;
  }
  if (c != Command::volume_down && c != Command::volume_up) return false;
  set_volume(volume_ + (c == Command::volume_up ? kVolumeStep : -kVolumeStep));
  return true;
}

void Session::set_muted(bool m) {
  muted_ = m;
  if (audio_) audio_->set_muted(muted_);
  say(audio_ ? (muted_ ? "sound muted" : "sound on") : "no sound: " + audio_note_);
}

void Session::set_volume(double v) {
  volume_ = std::clamp(std::round(v * 100) / 100, 0.0, kMaxVolume);
  if (audio_) audio_->set_volume(volume_);
  char b[48];
  std::snprintf(b, sizeof(b), "volume %.0f%%%s", volume_ * 100, muted_ ? " (muted)" : "");
  say(audio_ ? b : "no sound: " + audio_note_);
}

// Plain and back; the control table's keys go to toggle_control().
bool Session::quality_command(Command c) {
  if (c != Command::plain) return false;
  toggle_plain();
  return true;
}

void Session::set_paused(bool paused) {
  if (paused == paused_) return;
  paused_ = paused;
  const int64_t now = now_ns();
  if (paused_) pause_log_.pause(now);
  else pause_log_.play(now);
  event(paused_ ? "pause" : "unpause");
  // After frame steps (or a seek while paused) the sound starts again with the next frame; so
  // too when a step is still pending (asked for, its frame not yet come: a busy machine), or
  // the sound would resume where it stopped while the picture moves on.
  if (audio_ && !need_audio_start_ && !step_) audio_->set_paused(paused_);
}

void Session::step_back() {
  if (!current_) return;
  if (!source_->can_seek()) {
    say(info_.name + ": this source cannot seek (no step back)", true);
    return;
  }
  set_paused(true);
  if (audio_) audio_->set_paused(true);
  // The frame before: the first at or after 1.5 intervals back (a constant rate's previous frame,
  // whatever the rounding of its time).
  const double from = showing_.value_or(current_->time_s);
  seek_exact(std::max(0.0, from - 1.5 * interval_s_), false);
  event("seek");
}

Status Session::set_speed(double speed) {
  if (!(speed >= kMinSpeed && speed <= kMaxSpeed))
    return HISTEQ_ERROR(Code::invalid_argument, "speed must be " + eq::control_number(kMinSpeed) + ".." + eq::control_number(kMaxSpeed));
  if (speed == speed_) return Status::ok();
  speed_ = speed;
  pacer_.reset();  // the wall clock restarts at the next frame, at the new pace
  // The sound starts again at the next frame, stretched to the new speed (or without, muted).
  if (audio_) {
    audio_->halt();
    need_audio_start_ = true;
  }
  return Status::ok();
}

bool Session::audio_follows() const { return audio_ && !o_.max_speed && (speed_ == 1.0 || audio_->can_stretch()); }

// While the picture stands, a change is shown at once (see the header): the frame on screen is
// made again from its source, or (live) the next one made after the change shows.
void Session::changed() {
  if (!current_ || !(paused_ || ended_) || after_ == After::open || after_ == After::quit) return;
  if (after_ == After::seek || after_ == After::refresh) return;  // the frame on its way is made with the new settings
  if (!source_->can_seek()) {
    stale_before_ns_ = now_ns();
    step_ = true;
    return;
  }
  seek_exact(showing_.value_or(current_->time_s), true);
}

void Session::seek_exact(double t, bool refresh) {
  seek_target_ = t;
  showing_ = t;
  after_ = refresh ? After::refresh : After::seek;
  run_stop_ = true;
  step_ = true;  // shows the frame there; paused, it stays
}

void Session::toggle_control(const std::string& name) {
  set_quality(app::player::toggle_control(name, quality_, before_plain_.value_or(o_.eq.quality)));
}

void Session::toggle_plain() {
  if (quality_.plain() && before_plain_) {
    set_quality(*before_plain_);
  } else if (!quality_.plain()) {
    const eq::Quality back = quality_;
    eq::Quality p = back;
    eq::make_plain(p);  // the specs' plain values; the levels stay as they are
    set_quality(p);
    before_plain_ = back;
  }
}

void Session::swap_looks() {
  const pipeline::Look a{strength_, quality_};
  const pipeline::Look b = look_b_;
  if (Status st = pipe_->set_strength(b.strength); st) strength_ = static_cast<float>(b.strength);
  set_quality(b.quality);
  set_compare(true, a);
}

void Session::set_kernel(const std::string& name) {
  if (name.empty() || name == target_kernel()) return;
  if (Status s = pipe_->set_kernel(name); !s) {
    say(s.to_string(), true);
    return;
  }
  kernel_requested_ = name == kernel_shown_ ? "" : name;
  changed();
}

void Session::set_strength(float strength) {
  if (strength == strength_) return;
  if (Status s = pipe_->set_strength(strength); !s) {
    say(s.to_string(), true);
    return;
  }
  strength_ = strength;
  changed();
}

void Session::set_quality(const eq::Quality& q) {
  if (q == quality_) return;
  if (Status s = pipe_->set_quality(q); !s) {
    say(s.to_string(), true);
    return;
  }
  if (!q.plain()) before_plain_.reset();
  quality_ = q;
  say("settings: " + eq::describe(q) + (paused_ || ended_ ? "" : " (from the next frame)"));
  changed();
}

void Session::set_compare(bool look, const pipeline::Look& b) {
  if (look == compare_look_ && (!look || b == look_b_)) return;
  if (Status s = pipe_->set_compare({true, look ? std::optional<pipeline::Look>(b) : std::nullopt}); !s) {
    say(s.to_string(), true);
    return;
  }
  compare_look_ = look;
  look_b_ = b;
  if (look && !split_) split_ = true;  // asking for settings B means wanting to see them
  changed();
}

void Session::seek(double t) {
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
  showing_ = seek_target_;
  stale_before_ns_ = 0;
  if (paused_ || ended_) step_ = true;  // show where the seek landed, and stay paused
  event("seek");
}

void Session::open(const std::string& path) {
  if (after_ == After::quit) return;
  // Everything that can fail happens now, while the current video plays on.
  auto src = open_file(o_, path);
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

void Session::quit() {
  if (!quit_) event("shutdown");
  quit_ = true;
  after_ = After::quit;
  run_stop_ = true;
}

void Session::say(const std::string& msg, bool error) {
  message_ = msg;
  message_error_ = error;
  message_until_ns_ = now_ns() + (error ? 12'000'000'000LL : 5'000'000'000LL);
  if (error) osd(msg, 4.0, true);
}

void Session::osd(const std::string& text, double seconds, bool error) {
  osd_ = text;
  osd_error_ = error;
  osd_until_ns_ = now_ns() + static_cast<int64_t>(seconds * 1e9);
}

std::vector<std::string> Session::take_events() {
  std::vector<std::string> out;
  out.swap(events_);
  return out;
}

void Session::PauseLog::pause(int64_t now) {
  if (since < 0) since = now;
}

void Session::PauseLog::play(int64_t now) {
  if (since < 0) return;
  spans[count++ % spans.size()] = {since, now};
  since = -1;
}

int64_t Session::PauseLog::overlap(int64_t from, int64_t to) const {
  auto part = [&](int64_t a, int64_t b) { return std::max<int64_t>(0, std::min(b, to) - std::max(a, from)); };
  int64_t sum = since >= 0 ? part(since, to) : 0;
  for (size_t i = 0; i < std::min(count, spans.size()); ++i) sum += part(spans[i].first, spans[i].second);
  return sum;
}

void Session::start_export(const std::string& output) {
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

// The export's outcome goes to the terminal once, when the window next draws after it ended.
void Session::poll_export() {
  if (export_reported_) return;
  const ExportJob::Progress p = export_.progress();
  if (!p.finished) return;
  std::printf("histeq play: export: %s\n", p.message.c_str());
  std::fflush(stdout);
  export_reported_ = true;
}

SessionState Session::state() {
  SessionState s;
  const int64_t now = now_ns();
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
  s.paused = paused_;
  s.ended = ended_;
  s.can_seek = source_->can_seek();
  s.speed = speed_;
  s.refreshing = !picture_current();
  s.position_s = current_ ? current_->time_s : 0;
  s.duration_s = info_.duration_s;
  fill_timing(s, now);
  if (audio_) s.audio = audio_->description();
  s.audio_note = audio_note_;
  s.volume = volume_;
  s.muted = muted_;
  s.av_offset_ms = av_offset_ms_;
  s.held = view_.held_frames();
  const auto sc = source_->counters();
  s.corrupt_packets = sc.corrupt_packets;
  s.damaged_frames = sc.damaged_frames;
  s.luma = luma_;
  fill_export(s);
  if (now < message_until_ns_) {
    s.message = message_;
    s.message_is_error = message_error_;
  }
  if (now < osd_until_ns_) {
    s.osd = osd_;
    s.osd_is_error = osd_error_;
  }
  return s;
}

void Session::fill_timing(SessionState& s, int64_t now) {
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
  s.display_fps = display_rate_.rate;
  s.video_fps = video_rate_.rate;
  s.frames_shown = frames_presented_;
  for (int c = 0; c < kCauses; ++c) {
    s.dropped[static_cast<size_t>(c)] = view_.dropped(static_cast<Cause>(c));
    s.late[static_cast<size_t>(c)] = view_.late(static_cast<Cause>(c));
  }
  s.dropped_source = pipe_->counters().dropped_source;
}

void Session::fill_export(SessionState& s) {
  const bool file = is_file();
  s.exp.available = file;
  s.exp.why_not = file ? "" : "export works on files (open one, or drop it on the window)";
  s.exp.suggested_output = file ? suggested_export(info_.name) : "";
  s.browse_from = file ? info_.name : "";
  const ExportJob::Progress p = export_.progress();
  s.exp.running = p.running;
  s.exp.fraction = p.fraction;
  char line[160];
  std::snprintf(line, sizeof(line), "frame %lld%s   %.1f fps   ETA %s", static_cast<long long>(p.frames),
                p.frames_expected > 0 ? ("/" + std::to_string(p.frames_expected)).c_str() : "", p.fps,
                p.eta_s >= 0 ? clock_string(p.eta_s).c_str() : "?");
  s.exp.line = line;
  s.exp.result = p.finished ? p.message : "";
  s.exp.failed = p.failed;
}

}  // namespace histeq::app::player
