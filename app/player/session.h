// The player's playback session, without a UI: what plays (source, pipeline, equalizer settings),
// the clock (frames paced to the wall clock, or following the sound's clock: A/V sync), pause,
// frame steps, seeks, opening another file, live kernel and settings changes, the split view's
// settings, the background export and the run's summary. No SDL, no GL, no ImGui: the window
// (app/player/player.cpp) and the headless session test drive it the same way.
//
// The session is the pipeline's sink, so it runs on the thread that calls run(): every frame the
// pipeline equalizes comes to consume(), which times it and hands it to the Frontend (upload, then
// draw). While a frame is not due yet, while paused, while the pipeline is starved, and after the
// input has ended, the session asks the Frontend for window frames (draw()) at the display's rate.
// In draw() the front end reads state() and sends commands (command(), seek(), set_quality(), ...);
// they take effect at once (settings: from the next frame) or, for seeks, opening a file and
// quitting, by stopping the pipeline run, which run() then repositions, replaces or ends.
//
// While the picture stands (paused, or the input ended), a change of what frames are made with
// (kernel, strength, the controls, settings B) is shown at once, as mpv refreshes a paused frame
// after a filter change: the frame on screen is made again from its source (the run stops and
// the source seeks back to that very frame), so the frames queued behind it, made with the old
// settings, are dropped and decoded again. A live source cannot seek: its queued frames decoded
// before the change are dropped and the next one shows. Steps after a change show new frames.
//
// The clock follows ffplay's drop rule: a late frame is dropped only when a newer one is ready;
// a machine that cannot keep up shows a slower picture (the sound's clock ahead, the drops and
// late frames counted), never a still one.
//
// Thread: one, the caller of run(), for everything (the front end's draw() is called from it).
#pragma once

#include <array>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "app/common/play_options.h"
#include "app/player/audio_device.h"
#include "app/player/controls.h"
#include "app/player/export_job.h"
#include "app/player/stats_view.h"
#include "core/pipeline/pacer.h"
#include "core/pipeline/pipeline.h"
#include "core/video/source.h"

namespace histeq::app::player {

constexpr double kOsdSeconds = 1.5;           // how long an OSD line stays (mpv's osd-duration: 1 s)
constexpr double kMinSpeed = 0.1, kMaxSpeed = 10.0;

struct StageRowView {
  std::string name;
  double last = 0, avg = 0, p99 = 0, peak = 0;  // ms, over the stats window
  std::vector<float> spark;                     // the last frames, oldest first (NaN: did not run)
  int row = -1;                                 // the stats row (pipeline::RunStats) it shows
};

struct ExportView {
  bool available = false;        // the source is a file
  std::string why_not;           // when not available
  std::string suggested_output;  // default path in the dialog
  bool running = false;
  double fraction = -1;          // 0..1, < 0 unknown
  std::string line;              // "frame 120/600  95 fps  ETA 0:05"
  std::string result;            // the last export's outcome
  bool failed = false;
};

// What the session shows: a plain struct, filled by Session::state(). The overlay's OverlayState
// adds what the window knows (the display, where the video is drawn).
struct SessionState {
  // What is playing (the source and the equalizer: Session::info(), Session::equalizer()).
  std::vector<KernelChoice> kernels;  // the selector
  std::string kernel_shown;           // the kernel that equalized the frame on screen
  std::string kernel_requested;       // a switch not on screen yet ("" = none)
  float strength = 1.f;
  eq::Quality quality;                // the controls as set (on screen from the next frame)
  std::string quality_shown;          // eq::describe() of the frame on screen

  // The picture.
  bool split = false;
  bool compare_look = false;          // the split's left side: settings B (else the input)
  pipeline::Look look_b;              // settings B
  float split_pos = 0.5f;

  // Sound: "" when none (audio_note says why), else the track and the device.
  std::string audio, audio_note;
  double volume = 1.0;
  bool muted = false;
  double av_offset_ms = NAN;  // the sound heard minus the frame shown, at its presentation
  int64_t held = 0;           // frames held on screen while the video waited for the sound

  // Transport.
  bool paused = false, ended = false, can_seek = false;
  double position_s = 0, duration_s = 0;
  double speed = 1.0;
  bool refreshing = false;            // a paused change or seek is not on screen yet

  // Timing.
  double budget_ms = 16.7, source_fps = 60;
  std::vector<float> frame_ms;        // StatsView::frame_times()
  std::vector<StageRowView> stages;   // the stages that ran, then latency
  double display_fps = 0, video_fps = 0;
  int64_t frames_shown = 0;           // frames presented since run() began (all files)
  std::array<int64_t, kCauses> dropped{}, late{};
  int64_t dropped_source = 0, corrupt_packets = 0, damaged_frames = 0;

  LumaPlots luma;
  ExportView exp;
  std::string browse_from;  // where "Open..." starts: the current file's folder
  std::string message;      // shown under the transport; errors in red ("" after its time is up)
  bool message_is_error = false;
  std::string osd;          // the on-screen line (mpv's OSD: "Kernel: cub"); "" after its time is up
  bool osd_is_error = false;
};

// Whoever shows the session: the player window, or a test.
class Frontend {
 public:
  virtual ~Frontend() = default;
  // What run()'s first line says after the equalizer: "window 1280x720 (llvmpipe, OpenGL 4.5), vsync".
  virtual std::string describe() const = 0;
  // The display's frame period: the pace of draw() while no frame is due.
  virtual int64_t tick_period_ns() const = 0;
  // The frame's picture (and the split view's left side, in its side data) goes to the display;
  // the next draw() shows it.
  virtual Status upload(const pipeline::PipelineFrame& frame) = 0;
  // One window frame: input (sent to the session as commands), the picture, the UI, the swap.
  // Returns once the frame has been handed to the display.
  virtual Status draw() = 0;
  // When the last draw() had rendered everything, before its swap (steady clock, ns).
  virtual int64_t rendered_ns() const = 0;
  // The summary's first words: "window closed after" (the window), "done in" (headless).
  virtual std::string ended_word() const { return "window closed after"; }
};

class Session final : public pipeline::Sink {
 public:
  // `options` and `stop` (a signal asked to stop) must outlive the session. `open_audio` plays a
  // file's sound (none: the session plays without).
  Session(const PlayOptions& options, const std::atomic<bool>& stop, AudioOpener open_audio = {});
  ~Session() override;
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  // Plays `source` through `frontend` until quit(), the stop signal, or (--exit-at-end) the end of
  // the input; prints what plays, and a summary (and --stats-json) at the end. Returns the exit
  // code; errors are printed (app/common/run_common.h fail()).
  int run(std::unique_ptr<video::Source> source, Frontend& frontend, const std::vector<std::string>& argv);

  // The state to show; cheap enough for every window frame.
  SessionState state();
  // The source's description; the frame on screen (null before the first one).
  const video::SourceInfo& info() const noexcept { return info_; }
  const pipeline::EqualizerInfo& equalizer() const noexcept { return eq_; }
  const video::Frame* frame() const noexcept { return current_.get(); }
  bool ended() const noexcept { return ended_; }
  bool quitting() const noexcept { return quit_; }  // run() returns once the current window frame is done
  // What is set now (the properties of app/player/controller.h read them).
  bool paused() const noexcept { return paused_; }
  double position_s() const noexcept { return current_ ? current_->time_s : 0.0; }
  const std::string& kernel() const { return target_kernel(); }
  const std::vector<std::string>& kernels() const noexcept { return usable_; }
  float strength() const noexcept { return strength_; }
  const eq::Quality& quality() const noexcept { return quality_; }
  bool split() const noexcept { return split_; }
  double volume() const noexcept { return volume_; }
  bool muted() const noexcept { return muted_; }
  bool has_audio() const noexcept { return audio_ != nullptr; }
  const std::string& audio_note() const noexcept { return audio_note_; }
  std::string audio_description() const { return audio_ ? audio_->description() : ""; }
  bool audio_stretches() const { return audio_ && audio_->can_stretch(); }
  // The file's audio tracks: how many, and the one playing (1..; 0: none). set_audio_track(0)
  // plays none; another number opens that track, its sound starting with the next frame.
  int audio_tracks() const noexcept { return audio_tracks_; }
  int audio_track() const noexcept { return audio_ ? audio_->track() : 0; }
  void set_audio_track(int track);
  float split_pos() const noexcept { return split_pos_; }
  // The split view as set now (state() has it too): the divider's position, < 0 when off; the
  // left side's settings (B), and whether it shows them.
  float split_at() const noexcept { return split_ ? split_pos_ : -1.f; }
  bool compare_look() const noexcept { return compare_look_; }
  const pipeline::Look& look_b() const noexcept { return look_b_; }

  // Commands: controls.h's (pause, steps, seeks, kernels, split, plain, compare, swap, sound, quit).
  void command(Command c);
  // A control of the control table (controls.h) by name: on / off, or its next choice, from the next frame.
  void toggle_control(const std::string& name);
  void set_kernel(const std::string& name);
  void set_strength(float strength);
  void set_quality(const eq::Quality& q);
  void set_compare(bool look, const pipeline::Look& b);
  void set_split(bool on) { split_ = on; }  // both sides are made for every frame: nothing to remake
  void set_volume(double v);  // 0..kMaxVolume
  void set_muted(bool m);
  void set_split_pos(float pos) { split_pos_ = pos; }
  void seek(double t);                    // media seconds; clamped to the input (or --end)
  void set_paused(bool paused);
  // One frame back (pauses): the frame before the one on screen, through a seek.
  void step_back();
  // Playback speed, kMinSpeed..kMaxSpeed (errors: out of range). The sound keeps its pitch where
  // the sound device can stretch it (AudioDevice::can_stretch), else it is muted off 1x.
  Status set_speed(double speed);
  double speed() const noexcept { return speed_; }
  void open(const std::string& path);     // plays another file (errors: a message, playing on)
  void start_export(const std::string& output);  // the current file, with the current settings
  void cancel_export() { export_.cancel(); }
  void quit();
  bool export_running() const { return export_.progress().running; }
  // A message under the transport for a few seconds (errors in red, longer; errors are on the
  // OSD line too).
  void say(const std::string& msg, bool error = false);
  // The OSD line for `seconds` (mpv's style: top left, also with the overlay hidden).
  void osd(const std::string& text, double seconds = kOsdSeconds, bool error = false);
  // What happened since the last call, as mpv's IPC names it: "pause", "unpause", "seek",
  // "playback-restart", "end-file" (the input ended) and "shutdown" (quit).
  std::vector<std::string> take_events();
  // The shown picture is what the settings and position as set make (no paused change, seek or
  // step still on its way): a screenshot taken now shows them.
  bool picture_current() const noexcept { return !step_ && after_ != After::seek && after_ != After::open && after_ != After::refresh; }
  // The frame on screen: its Frame::index (the source's count; a file's runs on across seeks), and
  // its number in the media (its time over the frame interval, as mpv's estimated-frame-number);
  // -1 before the first.
  int64_t frame_index() const noexcept { return current_ ? current_->index : -1; }
  int64_t frame_number() const noexcept { return current_ ? std::llround(current_->time_s / interval_s_) : -1; }
  const pipeline::RunStats& stats() const noexcept { return *stats_; }
  // A failure the exit code must report (the front end's screenshot at --frames).
  void set_failed() { exit_code_ = 1; }
  void set_exit_code(int code) { exit_code_ = code; }  // quit CODE
  // Where a relative seek starts: a seek on its way, else the frame on screen.
  double seek_base() const noexcept { return after_ == After::seek ? seek_target_ : showing_.value_or(position_s()); }

  Status consume(pipeline::PipelineFrame f, pipeline::FrameRecord& rec) override;
  Status idle() override;

 private:
  enum class After { none, seek, open, quit, refresh };
  // A source and the pipeline made for it, ready to replace the current ones.
  struct Media {
    std::unique_ptr<video::Source> source;
    std::unique_ptr<pipeline::Pipeline> pipe;
  };

  // session.cpp: what plays, and the commands.
  Result<Media> prepare(std::unique_ptr<video::Source> source, const std::string& kernel);
  void commit(Media m);
  int start(std::unique_ptr<video::Source> source);
  bool sound_command(Command c);    // mute, volume: true when `c` is one
  bool quality_command(Command c);  // plain: true when `c` is it
  void toggle_plain();
  void swap_looks();
  const std::string& target_kernel() const { return kernel_requested_.empty() ? kernel_shown_ : kernel_requested_; }
  bool is_file() const;
  // A change of what frames are made with: shown at once while the picture stands.
  void changed();
  void seek_exact(double t, bool refresh);
  void event(const char* name) { events_.emplace_back(name); }
  bool audio_follows() const;  // the video follows the sound's clock now (sound, speed it can play)
  void fill_timing(SessionState& s, int64_t now);
  void fill_export(SessionState& s);
  // session_clock.cpp: the run loop and the frames' timing.
  Status play_run();
  bool after_run();
  Status consume_frame(pipeline::PipelineFrame& pf, pipeline::FrameRecord& rec);
  Status consume_paced(pipeline::PipelineFrame& pf, pipeline::FrameRecord& rec, bool restart, bool stepping);
  bool stale(const pipeline::PipelineFrame& pf) const;  // made before a paused change on a live source
  bool drop_late();  // a late frame is dropped: only when a newer one is ready (ffplay)
  Status consume_synced(pipeline::PipelineFrame& pf, pipeline::FrameRecord& rec);
  Status start_audio_with(pipeline::PipelineFrame& pf, pipeline::FrameRecord& rec, bool& dropped_audio);
  Status wait_for_audio(double t, bool& stopped);
  void note_presented(pipeline::FrameRecord& rec, double t, int64_t arrived, int64_t drawn_from);
  Status show(pipeline::PipelineFrame& pf, pipeline::FrameRecord& rec);
  Status ui_tick();
  Status draw();
  void poll_export();
  // session_audio.cpp: the sound, and the summary at the end.
  void open_audio();
  void keep_audio_log();
  void drop_audio(const std::string& why);
  double audio_now() const;  // the sound heard, in media time (Frame::time_s); NaN without
  int finish(double wall_s, const std::vector<std::string>& argv);

  const PlayOptions& o_;
  const std::atomic<bool>& signal_stop_;
  AudioOpener audio_opener_;
  Frontend* frontend_ = nullptr;  // during run()

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
  bool split_;
  float split_pos_;
  std::string quality_shown_;                // eq::describe() of the frame on screen
  double interval_s_ = 1 / 60.0, budget_ms_ = 1000 / 60.0;

  // What is on screen.
  video::FramePtr current_;
  LumaPlots luma_;
  StatsView view_;

  // Control.
  std::atomic<bool> run_stop_{false};
  After after_ = After::none;
  double seek_target_ = 0;
  std::optional<double> showing_;   // where the frame a seek, step back or refresh asked for is
  int64_t stale_before_ns_ = 0;     // live sources: frames decoded before this paused change are dropped
  double speed_ = 1.0;
  std::vector<std::string> events_;
  // Pauses: when playback stood (steady clock), so that latency leaves them out (FrameRecord::paused_ns).
  struct PauseLog {
    void pause(int64_t now);
    void play(int64_t now);
    int64_t overlap(int64_t from, int64_t to) const;  // paused ns within [from, to)
    std::array<std::pair<int64_t, int64_t>, 32> spans{};  // the last ones, [begin, end)
    size_t count = 0;
    int64_t since = -1;  // paused since (-1: playing)
  };
  PauseLog pause_log_;
  std::optional<Media> pending_;
  bool quit_ = false, paused_ = false, step_ = false, ended_ = false;
  bool behind_ = false;             // the last frame shown was late: idle redraws slow down
  std::optional<pipeline::Pacer> pacer_;
  int64_t frames_presented_ = 0;
  struct RateMeter {  // events per second, over windows of half a second
    void tick(int64_t now);
    int64_t start = 0, count = 0;
    double rate = 0;
  };
  RateMeter display_rate_, video_rate_;
  std::string message_;
  bool message_error_ = false;
  int64_t message_until_ns_ = 0;
  std::string osd_;
  bool osd_error_ = false;
  int64_t osd_until_ns_ = 0;
  int exit_code_ = 0;
  std::vector<StageRowView> rows_;
  int64_t rows_at_ns_ = 0;
  ExportJob export_;
  bool export_reported_ = true;  // the outcome of the last export was printed

  // Sound: the video follows its clock while it plays.
  std::unique_ptr<AudioDevice> audio_;
  std::string audio_note_;         // why there is none
  int audio_tracks_ = 0;           // the file's audio tracks (as its sound last opened)
  int audio_choice_ = -1;          // the track asked for: -1 the default, 0 none, n the n-th
  bool need_audio_start_ = true;   // the next frame shown while playing starts the sound at its time
  double origin_s_ = 0;            // stream time of media time 0 (FileSource::time_origin_s)
  double volume_ = 1.0;
  bool muted_ = false;
  double av_offset_ms_ = NAN;      // of the last frame shown
  int64_t prev_present_ns_ = 0;    // when the previous frame was shown (hold counting)
  double present_s_ = 0.002;       // how long a frame takes from draw to the screen (median of the last draws)
  std::array<double, 15> draw_times_{};
  size_t draws_ = 0;
  std::vector<AudioCallback> audio_log_;  // of the sounds closed so far (--stats-json), at most kMaxAudioLog
  int64_t audio_log_lost_ = 0;
  bool signalled_ = false;                 // a stop signal ended the run
};

}  // namespace histeq::app::player
