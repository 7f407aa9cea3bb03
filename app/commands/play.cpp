// histeq play: the video pipeline with a presentation sink. With a display (and a build with
// HISTEQ_GUI), the player window of app/player/ shows the frames; otherwise, or with --headless,
// frames are "presented" headless: paced at the source's rate (or as fast as possible with
// --max-speed), counted as late or dropped, with a stage table every second and a summary at the end.
#include <CLI/CLI.hpp>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <unistd.h>

#include "app/commands/commands.h"
#include "app/common/equalizer_options.h"
#include "app/common/run_common.h"
#include "app/common/source_request.h"
#include "app/player/controller.h"
#include "app/player/session.h"
#include "app/player/controls.h"
#if HISTEQ_HAVE_GUI
#include "app/player/player.h"
#endif
#include "core/cuda/device.h"
#include "core/pipeline/pipeline.h"
#include "core/pipeline/sink_factory.h"
#include "core/pipeline/source_factory.h"

namespace histeq::app {
namespace {

using Clock = std::chrono::steady_clock;

// The headless presenter, from the sink factory: paced as a display would be, nothing drawn.
Result<std::unique_ptr<pipeline::OutputSink>> open_presenter(pipeline::OpenedSource& source, bool realtime, double fps,
                                                             const std::function<void()>& tick) {
  pipeline::OutputRequest present;
  present.present = true;
  present.realtime = realtime;
  present.interval_s = 1.0 / fps;
  present.on_frame = [tick](int64_t, double) { tick(); };
  std::vector<std::string> notes;
  return pipeline::open_output(present, source, notes);
}

}  // namespace

void add_play_command(CLI::App& app, PlayOptions& o) {
  CLI::App* p = app.add_subcommand("play", "equalize a video, a webcam or the built-in synthetic source and show it in a window "
                                           "with a timing overlay (headless without a display: paced, timed, a stage table each second)");
  p->add_option("input", o.input, "video file, network URL (udp://, rtp://, rtsp://, srt://, http(s):// HLS, ...) or - for "
                                  "standard input, read to its end (default: the built-in synthetic source)");
  p->add_flag("--headless", o.headless, "no window: present frames on schedule without drawing them");
  o.webcam_opt = p->add_option("--webcam", o.webcam, "capture from a V4L2 webcam (default /dev/video0)")->expected(0, 1);
  p->add_option("--size", o.size, "synthetic source size: WxH, 720p, 1080p, 4k")->capture_default_str();
  p->add_option("--fps", o.fps, "synthetic source frame rate")->capture_default_str();
  p->add_option("--bit-depth", o.bit_depth, "synthetic source bit depth: 8 or 10")->capture_default_str();
  p->add_option("--start", o.start, "begin at this time: seconds or [HH:]MM:SS[.mmm] (as ffmpeg's -ss)");
  p->add_option("--duration", o.duration, "play this long (as ffmpeg's -t; the synthetic source: 10 s unless given; 0 = no limit)");
  p->add_option("--end", o.end, "stop at this time (as ffmpeg's -to)");
  p->add_flag("--no-audio", o.no_audio, "play without sound (the window plays the file's default audio track; headless never does)");
  p->add_flag("--max-speed", o.max_speed, "as fast as possible instead of at the source's frame rate");
  add_equalizer_options(p, o.eq, {"kernel", "backend"});
  p->add_option("--hwdec", o.hwdec, "decode on the GPU: auto (NVDEC where the codec and GPU allow it), nvdec, none")
      ->check(CLI::IsMember({"auto", "nvdec", "none"}))
      ->capture_default_str();
  p->add_flag("--live", o.live, "read standard input or a file as a live stream (frames dropped rather than waited for, "
                                "shown at their arrival); network URLs and webcams are live without it");
  p->add_option("--live-timeout", o.live_timeout, "live inputs: seconds without data after which the stream has stopped")
      ->capture_default_str();
  p->add_option("--synthetic-on", o.synthetic_on, "where the built-in source is drawn: auto (the GPU when the equalizer runs there), gpu, cpu")
      ->check(CLI::IsMember({"auto", "gpu", "cpu"}))
      ->capture_default_str();
  add_equalizer_options(p, o.eq, {"strength", "device"},
                        "the CUDA device to decode (NVDEC), draw the built-in source and equalize on (default 0)");
  add_quality_options(p, o.quality);
  p->add_option("--stats-json", o.stats_json, "write every frame's stage times and the summary to this JSON file");
  p->add_flag("-q,--quiet", o.quiet, "no table each second, only the summary");
  p->add_flag("-v,--verbose", o.verbose, "show FFmpeg's warnings");
  p->add_option("--kernel-sequence", o.kernel_sequence, "switch kernels live: 'all' or K1,K2,... (starts with the first)");
  p->add_option("--switch-every", o.switch_every, "frames between --kernel-sequence switches")->capture_default_str();
  // The window.
  p->add_option("--window", o.window, "window size WxH (default: the video fitted to 80% of the screen)");
  p->add_flag("--no-vsync", o.no_vsync, "do not wait for the display's refresh when swapping");
  p->add_flag("--fullscreen", o.fullscreen, "start fullscreen (f toggles)");
  p->add_flag("--no-overlay", o.no_overlay, "start with the overlay hidden (o toggles)");
  p->add_option("--split", o.split, "start with the split view, divider at 0..1 of the width (b toggles)");
  p->add_option("--compare", o.compare,
                "the split view's left side: input (the picture as it came) or plain, clahe, default (those settings)")
      ->check(CLI::IsMember({"input", "plain", "clahe", "default"}))
      ->capture_default_str();
  p->add_flag("--exit-at-end", o.exit_at_end, "close the window at the end of the input (default: keep the last frame)");
  p->add_option("--frames", o.frames, "close the window after drawing this many frames (counted from the first with video)");
  p->add_option("--screenshot", o.screenshot, "with --frames: write a PNG of the window's last frame (video and overlay)");
  p->add_option("--screenshot-dir", o.screenshot_dir, "folder for the screenshots of the s key")->capture_default_str();
  p->add_option("--keys", o.keys, "scripted key presses, \"[FRAME:]KEY,...\" (e.g. \"space,5:TAB,k,20:s\"); keys as in the keys panel "
                                  "(mpv's names: space, left, Ctrl+s, comma for ','), or open=PATH / export=PATH");
  p->add_option("--input-conf", o.input_conf, "key bindings in mpv's input.conf syntax (KEY command args), over the defaults below")
      ->check(CLI::ExistingFile);
  p->add_option("--input-ipc-server", o.input_ipc_server,
                "mpv's JSON IPC on this Unix socket: {\"command\": [...], \"request_id\": N} a line (also headless)");
  p->footer(player::keys_footer());
}

Status parse_play_range(PlayOptions& o) {
  // --duration 0 keeps its old meaning: no limit (the synthetic source never ends).
  o.endless = !o.duration.empty() && o.end.empty() && video::parse_time(o.duration, "--duration").is_ok() &&
              *video::parse_time(o.duration, "--duration") == 0;
  auto r = video::parse_time_range(o.start, o.endless ? "" : o.duration, o.end);
  if (!r) return r.status();
  o.range = *r;
  o.synthetic_s = o.range.end_s > 0 ? o.range.end_s : 10.0;
  return Status::ok();
}

// --start: the source moves there before the first frame (frame-exact, as a seek); the range is
// checked against the input's length.
static Status seek_to_start(const PlayOptions& o, video::Source& source, pipeline::Pipeline& pipe) {
  HISTEQ_TRY(video::check_time_range(o.range, source.info().live ? 0 : source.info().duration_s, source.info().name));
  if (o.range.start_s <= 0) return Status::ok();
  if (!source.can_seek()) return HISTEQ_ERROR(Code::unsupported, source.info().name + ": --start needs a source that can seek");
  return pipe.seek(source, o.range.start_s);
}

namespace {

// The options that only the window takes, and the ones out of range; 0, or fail()'s code.
int check_window_options(const PlayOptions& o) {
  if (!o.screenshot.empty() && o.frames <= 0) return fail("--screenshot needs --frames N (the frame to capture)", 2);
  if (o.frames < 0) return fail("--frames must be >= 1", 2);
  if (o.switch_every < 1) return fail("--switch-every must be >= 1", 2);
  if (auto k = player::parse_scripted_keys(o); !k) return fail(k.status().to_string(), 2);
  return 0;
}

// --kernel-sequence: the kernels switched live, as the window's k key does, into `sequence`; the
// pipeline starts on the first. 0, or fail()'s code.
int start_kernel_sequence(const PlayOptions& o, pipeline::Pipeline& pipe, const video::SourceInfo& info, std::vector<std::string>& sequence) {
  if (o.kernel_sequence.empty()) return 0;
  const pipeline::EqualizerInfo& eq = pipe.equalizer();
  auto seq = player::parse_kernel_sequence(o.kernel_sequence, player::usable_kernels(player::kernel_menu(eq.backend, info.format)));
  if (!seq) return fail(seq.status().to_string(), 2);
  sequence = std::move(seq.value());
  if (sequence.front() != eq.kernel)
    if (Status ks = pipe.set_kernel(sequence.front()); !ks) return fail(ks.to_string());
  return 0;
}

std::string play_counters(int64_t frames, double secs, const pipeline::RunStats& stats, pipeline::Pipeline& pipe, video::Source& source) {
  return counters_line(frames, secs, stats, pipe.counters().dropped_source, source.counters());
}

// Called for each frame presented: the --kernel-sequence switches, and the table of the last second.
class HeadlessTicker {
 public:
  HeadlessTicker(const PlayOptions& o, const std::vector<std::string>& sequence, pipeline::Pipeline& pipe, video::Source& source,
                 const pipeline::RunStats& stats)
      : o_(o), sequence_(sequence), pipe_(pipe), source_(source), stats_(stats) {}

  void tick() {
    ++consumed_;
    if (!sequence_.empty() && consumed_ % o_.switch_every == 0) {
      const std::string& next = sequence_[static_cast<size_t>(consumed_ / o_.switch_every) % sequence_.size()];
      if (Status ks = pipe_.set_kernel(next); !ks) std::fprintf(stderr, "histeq: %s\n", ks.to_string().c_str());
    }
    if (o_.quiet) return;
    const auto now = Clock::now();
    if (now - last_print_ < std::chrono::seconds(1)) return;
    const double secs = std::chrono::duration<double>(now - last_print_).count();
    const int64_t frames = stats_.frames() + 1;  // this frame is added right after the sink returns
    // The last second's frames (as many as came, up to the window's bound: a frame rate in a
    // header sizes nothing).
    std::printf("[%6.1f s] %s\n%s", std::chrono::duration<double>(now - t0).count(),
                play_counters(frames - frames_at_last_, secs, stats_, pipe_, source_).c_str(),
                format_stage_table(stats_.window(static_cast<size_t>(std::max<int64_t>(1, frames - frames_at_last_))), pipe_.stages(), true).c_str());
    std::fflush(stdout);
    last_print_ = now;
    frames_at_last_ = frames;
  }

  const Clock::time_point t0 = Clock::now();

 private:
  const PlayOptions& o_;
  const std::vector<std::string>& sequence_;
  pipeline::Pipeline& pipe_;
  video::Source& source_;
  const pipeline::RunStats& stats_;
  Clock::time_point last_print_ = t0;
  int64_t frames_at_last_ = 0;
  int64_t consumed_ = 0;
};

// The summary after a headless run (and --stats-json); 0, fail()'s code, or after a stop signal
// 128 + its number (SIGINT 130, SIGTERM 143, SIGHUP 129), as export: the summary is printed, but a
// supervisor must not read a killed player as a success.
int report_headless(const PlayOptions& o, const std::vector<std::string>& argv, video::Source& source, pipeline::Pipeline& pipe,
                    const pipeline::RunStats& stats, const Status& s, double wall) {
  const video::SourceInfo& info = source.info();
  const bool interrupted = s.code() == Code::cancelled;
  if (!s && !interrupted) return fail(s.to_string());
  // A live stream that stopped or ended by itself: said in one line; the run's figures follow.
  if (s.is_ok() && !source.end_note().empty()) std::fprintf(stderr, "histeq: %s: %s\n", info.name.c_str(), source.end_note().c_str());

  std::printf("histeq play: %s%.2f s: %s\n%s", interrupted ? "interrupted after " : "done in ", wall,
              play_counters(stats.frames(), wall, stats, pipe, source).c_str(), format_stage_table(stats.total(), pipe.stages(), false).c_str());
  std::fflush(stdout);
  if (!o.stats_json.empty()) {
    const auto sc = source.counters();
    const auto pc = pipe.counters();
    Status js = write_stats_json(o.stats_json, argv, info, pipe.equalizer(), stats, pipe.stages(), wall,
                                 {{"dropped_source", pc.dropped_source},
                                  {"corrupt_packets", sc.corrupt_packets},
                                  {"damaged_frames", sc.damaged_frames},
                                  {"repaired_timestamps", sc.repaired_timestamps}});
    if (!js) return fail(js.to_string());
  }
  return interrupted ? stop_exit_code() : 0;
}

// No window: frames presented on schedule (or as fast as possible) without being drawn.
int play_headless(const PlayOptions& o, const std::vector<std::string>& argv, pipeline::OpenedSource& opened, video::Source& source,
                  const std::atomic<bool>& stop) {
  const video::SourceInfo& info = source.info();
  pipeline::PipelineOptions po;
  po.equalizer = o.eq;
  po.equalizer.download = false;  // nothing reads the host frame after equalizing: it stays on the GPU
  po.max_seconds = o.range.end_s;
  auto pipe = pipeline::Pipeline::create(po, info);
  if (!pipe) return fail(pipe.status().to_string());
  if (Status ss = seek_to_start(o, source, **pipe); !ss) return fail(ss.to_string());
  std::vector<std::string> sequence;
  if (const int rc = start_kernel_sequence(o, **pipe, info, sequence)) return rc;

  const double fps = info.frame_rate.valid() ? info.frame_rate.value() : 30.0;
  const bool realtime = !o.max_speed;
  std::printf("histeq play: %s\n  decoded by %s\n  -> %s; %s, headless\n", info.description.c_str(), info.decoder.c_str(),
              describe_equalizer((*pipe)->equalizer()).c_str(), realtime ? "at the source's rate" : "as fast as possible");
  if (!info.decode_note.empty() && video::parse_hwdec(o.hwdec).value() != video::HwDecode::none && !o.eq.cpu && cuda::have_device())
    std::fprintf(stderr, "histeq: note: %s\n", info.decode_note.c_str());
  std::fflush(stdout);

  // The per-second table covers the frames of the last second (HeadlessTicker), from a window of
  // fixed size: the file's frame rate sizes nothing.
  pipeline::RunStats stats(pipeline::kMaxWindow, !o.stats_json.empty());
  HeadlessTicker ticker(o, sequence, **pipe, source, stats);
  auto sink = open_presenter(opened, realtime, fps, [&ticker] { ticker.tick(); });
  if (!sink) return fail(sink.status().to_string());
  Status s = (*pipe)->run(source, **sink, stop, &stats);
  const double wall = std::chrono::duration<double>(Clock::now() - ticker.t0).count();
  return report_headless(o, argv, source, **pipe, stats, s, wall);
}

// Headless play driven by mpv's JSON IPC (--input-ipc-server): the player's session, which pauses,
// steps, seeks and switches as the window does, without a picture; it ends with the input.
class HeadlessFrontend final : public player::Frontend {
 public:
  HeadlessFrontend(player::Session& s, const PlayOptions& o) : controller_(s, nullptr, o), o_(o) {}
  Status start() { return controller_.start(o_.input_conf, o_.input_ipc_server); }
  std::string describe() const override { return o_.max_speed ? "headless, as fast as possible" : "headless, at the source's rate"; }
  int64_t tick_period_ns() const override { return 10'000'000; }
  Status upload(const pipeline::PipelineFrame&) override { return Status::ok(); }
  Status draw() override {
    controller_.poll();
    rendered_ = std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now().time_since_epoch()).count();
    return Status::ok();
  }
  int64_t rendered_ns() const override { return rendered_; }
  std::string ended_word() const override { return "done in"; }

 private:
  player::Controller controller_;
  const PlayOptions& o_;
  int64_t rendered_ = 0;
};

int play_headless_session(const PlayOptions& opts, const std::vector<std::string>& argv, std::unique_ptr<video::Source> source,
                          const std::atomic<bool>& stop) {
  PlayOptions o = opts;
  o.exit_at_end = true;
  player::Session session(o, stop);
  HeadlessFrontend fe(session, o);
  if (Status s = fe.start(); !s) return fail(s.to_string(), 2);
  return session.run(std::move(source), fe, argv);
}

}  // namespace

int run_play(const PlayOptions& opts, const std::vector<std::string>& argv) {
  const std::atomic<bool>& stop = install_stop_signals();
  forward_ffmpeg_log(opts.verbose);
  PlayOptions o = opts;
  if (Status rs = parse_play_range(o); !rs) return fail(rs.message(), 2);
  auto request = play_source_request(o);
  if (!request) return fail(request.status().to_string(), 2);  // an input and --webcam, a bad --size
  if (const int rc = check_window_options(o)) return rc;
  // --device: the main thread's device from here on (the pipeline's, the window's interop's).
  if (o.eq.device >= 0)
    if (Status s = cuda::use_device(o.eq.device); !s) return fail(s.message(), 2);
  const bool window_only = o.frames > 0 || !o.screenshot.empty() || !o.keys.empty();

  const std::future<void> gpu_warm_up = start_gpu_warm_up(o.eq);
  auto opened = pipeline::open_source(*request);
  if (!opened) return fail(opened.status().to_string(), opened.status().code() == Code::invalid_argument && request->input.empty() && !request->webcam ? 2 : 1);
  std::unique_ptr<video::Source> source = std::move(opened->source);

  if (o.headless) {
    if (window_only) return fail("--frames, --screenshot and --keys drive the window: drop --headless", 2);
  } else {
#if HISTEQ_HAVE_GUI
    auto win = player::open_window(o, source->info());
    if (win) return player::run_window(o, argv, std::move(source), std::move(win.value()), stop);
    const std::string why = win.status().message();
#else
    const std::string why = "this histeq was built without the player window (HISTEQ_GUI=OFF)";
#endif
    if (window_only) return fail("--frames, --screenshot and --keys need the player window: " + why);
    std::fprintf(stderr, "histeq: note: no player window (%s); playing headless\n", why.c_str());
  }
  if (!o.input_ipc_server.empty()) return play_headless_session(o, argv, std::move(source), stop);
  return play_headless(o, argv, *opened, *source, stop);
}

}  // namespace histeq::app
