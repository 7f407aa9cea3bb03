// The player's playback session without a window (app/player/session.h): a scripted front end
// stands in for the window, records what the session hands it, and sends commands from its draw()
// as the window's keys and overlay do. CPU only: no GPU, no display.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <thread>

#include "app/player/controller.h"
#include "app/player/session.h"
#include "core/video/file_source.h"
#include "tests/common/session_frontend.h"
#include "tests/common/video_helpers.h"

namespace histeq::test {
namespace {

using app::player::Command;
using app::player::Session;
using Clock = std::chrono::steady_clock;

app::PlayOptions cpu_play_options() {
  app::PlayOptions o;
  o.eq.cpu = true;
  o.eq.quality = eq::default_quality();
  return o;
}

video::SyntheticOptions small_synthetic(double fps, double seconds) {
  video::SyntheticOptions so;
  so.width = 160;
  so.height = 90;
  so.fps = fps;
  so.duration_s = seconds;
  return so;
}

const std::vector<std::string> kArgv = {"histeq", "play"};

// Real time: the frames keep to the source's clock, the window lives between them, and the
// pictures are the pipeline's, bit for bit.
TEST(PlayerSession, PlaysInRealTimeAndCountsTheFrames) {
  const std::atomic<bool> stop{false};
  app::PlayOptions o = cpu_play_options();
  Session session(o, stop);
  ScriptedFrontend fe(session, 3);
  fe.script.push_back({[&] { return fe.shown.size() == 30; }, [&] { session.quit(); }});
  auto src = video::open_synthetic(small_synthetic(60, 10));
  ASSERT_TRUE(src.is_ok()) << src.status().to_string();
  const auto t0 = Clock::now();
  EXPECT_EQ(session.run(std::move(src.value()), fe, kArgv), 0);
  const double wall = std::chrono::duration<double>(Clock::now() - t0).count();

  ASSERT_EQ(fe.shown.size(), 30u);
  const app::player::SessionState s = session.state();
  // Each frame at its own time, in order; a frame the clock had passed by more than an interval (a
  // busy machine) is dropped, and counted as such.
  int64_t dropped = 0;
  for (int64_t d : s.dropped) dropped += d;
  for (size_t i = 0; i < fe.shown.size(); ++i) {
    EXPECT_NEAR(fe.shown[i].time_s, fe.shown[i].index / 60.0, 1e-6);
    if (i > 0) {
      EXPECT_GT(fe.shown[i].index, fe.shown[i - 1].index);
    }
  }
  EXPECT_EQ(fe.shown.front().index, 0);
  EXPECT_EQ(fe.shown.back().index + 1, 30 + dropped);
  // Real time: the last frame no earlier than its time after the first; the window drew between
  // the frames (1 ms ticks).
  EXPECT_GE(wall, fe.shown.back().index / 60.0 - 0.01);
  EXPECT_GT(fe.draws, 60);
  EXPECT_EQ(s.frames_shown, 30);
  EXPECT_NEAR(s.position_s, fe.shown.back().time_s, 1e-9);
  EXPECT_FALSE(s.paused);
  EXPECT_FALSE(s.ended);
  EXPECT_TRUE(s.can_seek);
  EXPECT_NEAR(s.source_fps, 60.0, 1e-9);
  EXPECT_EQ(s.kernel_shown, pipeline::default_kernel(Backend::cpu));
  EXPECT_FALSE(s.exp.available) << "the synthetic source is not a file";
  EXPECT_EQ(s.audio_note, "none (not a file)");

  // The same frames as the pipeline gives anyone else.
  auto again = video::open_synthetic(small_synthetic(60, 10));
  ASSERT_TRUE(again.is_ok());
  pipeline::PipelineOptions po;
  po.equalizer = o.eq;
  po.max_seconds = 10 / 60.0 - 1e-3;
  auto ref = run_pipeline(**again, po);
  ASSERT_TRUE(ref.is_ok()) << ref.status().to_string();
  ASSERT_EQ(ref->frames.size(), 10u);
  ASSERT_EQ(fe.copies.size(), 3u);
  for (const auto& [index, copy] : fe.copies) {
    ASSERT_LT(index, 10);
    EXPECT_TRUE(copy == ref->frames[static_cast<size_t>(index)]) << "frame " << index;
  }
}

// Pause, a frame step, a seek while paused, play again, a live kernel switch and a live settings
// change, each checked in the state the window would draw.
TEST(PlayerSession, PausesStepsSeeksAndSwitchesLive) {
  const std::atomic<bool> stop{false};
  app::PlayOptions o = cpu_play_options();
  o.max_speed = true;
  Session session(o, stop);
  ScriptedFrontend fe(session);
  int64_t draws_at_pause = 0;
  std::string other_kernel;
  eq::Quality wanted;
  size_t kernel_asked_at = 0, quality_asked_at = 0, quality_seen_at = 0;
  auto& sc = fe.script;
  sc.push_back({[&] { return fe.shown.size() == 10; }, [&] {
                  session.command(Command::pause);
                  draws_at_pause = fe.draws;
                }});
  sc.push_back({[&] { return fe.draws >= draws_at_pause + 5; }, [&] {
                  const auto s = session.state();
                  EXPECT_TRUE(s.paused);
                  EXPECT_EQ(fe.shown.size(), 10u) << "paused: no frame comes";
                  EXPECT_NEAR(s.position_s, 9 / 30.0, 1e-6);
                  session.command(Command::step);
                }});
  sc.push_back({[&] { return fe.shown.size() == 11; }, [&] {
                  EXPECT_TRUE(session.state().paused) << "a step stays paused";
                  session.seek(2.0);
                }});
  sc.push_back({[&] { return fe.shown.size() == 12; }, [&] {
                  EXPECT_NEAR(fe.shown.back().time_s, 2.0, 1e-6) << "the seek lands on the frame at 2 s";
                  EXPECT_TRUE(session.state().paused);
                  session.command(Command::pause);
                }});
  sc.push_back({[&] { return fe.shown.size() == 20; }, [&] {
                  const auto s = session.state();
                  EXPECT_FALSE(s.paused);
                  for (const auto& k : s.kernels)
                    if (k.usable && k.name != s.kernel_shown) other_kernel = k.name;
                  ASSERT_FALSE(other_kernel.empty());
                  session.set_kernel(other_kernel);
                  EXPECT_EQ(session.state().kernel_requested, other_kernel);
                  kernel_asked_at = fe.shown.size();
                }});
  sc.push_back({[&] { return fe.shown.back().kernel == other_kernel; }, [&] {
                  const auto s = session.state();
                  EXPECT_EQ(s.kernel_shown, other_kernel);
                  EXPECT_TRUE(s.kernel_requested.empty());
                  session.toggle_control("clip-limit");  // the l key: the clip limit off
                  wanted = session.state().quality;
                  EXPECT_EQ(wanted.clip_limit, 0);
                  EXPECT_NE(wanted.clip_limit, o.eq.quality.clip_limit);
                  quality_asked_at = fe.shown.size();
                }});
  sc.push_back({[&] { return fe.shown.back().quality == eq::describe(wanted); }, [&] {
                  EXPECT_EQ(session.state().quality_shown, eq::describe(wanted));
                  quality_seen_at = fe.shown.size();
                }});
  sc.push_back({[&] { return fe.shown.size() == quality_seen_at + 5; }, [&] { session.quit(); }});

  auto src = video::open_synthetic(small_synthetic(30, 10));
  ASSERT_TRUE(src.is_ok()) << src.status().to_string();
  EXPECT_EQ(session.run(std::move(src.value()), fe, kArgv), 0);
  ASSERT_EQ(fe.steps_done(), sc.size());

  // Every frame in order: 0..10 (the step showed frame 10), then from 2 s (frame 60) on, none
  // lost across the kernel and settings changes.
  for (size_t i = 0; i < 11; ++i) EXPECT_EQ(fe.shown[i].index, static_cast<int64_t>(i));
  for (size_t i = 11; i < fe.shown.size(); ++i) EXPECT_EQ(fe.shown[i].index, 60 + static_cast<int64_t>(i - 11)) << i;
  // The changes reach the screen within the pipeline's queues (a few frames), and stay.
  EXPECT_LE(quality_seen_at - quality_asked_at, 12u);
  for (size_t i = kernel_asked_at + 12; i < fe.shown.size(); ++i) EXPECT_EQ(fe.shown[i].kernel, other_kernel) << i;
  const auto s = session.state();
  EXPECT_EQ(s.frames_shown, static_cast<int64_t>(fe.shown.size()));
  EXPECT_NEAR(s.position_s, fe.shown.back().time_s, 1e-9);
}

// A file plays; the export of it with the settings of the moment runs in the background and
// writes every frame, while playback goes on.
TEST(PlayerSession, ExportsInTheBackgroundWhilePlaying) {
  const std::string clip = temp_path("session-clip.mkv");
  const std::string out = temp_path("session-export.mkv");
  ASSERT_TRUE(write_synthetic_clip(clip, small_synthetic(30, 2)).is_ok());
  const std::atomic<bool> stop{false};
  app::PlayOptions o = cpu_play_options();
  o.max_speed = true;
  Session session(o, stop);
  ScriptedFrontend fe(session);
  size_t shown_at_export = 0;
  fe.script.push_back({[&] { return fe.shown.size() == 5; }, [&] {
                         const auto s = session.state();
                         EXPECT_TRUE(s.exp.available);
                         EXPECT_FALSE(s.exp.running);
                         session.command(Command::pause);  // the export goes on while the picture stands
                         session.start_export(out);
                         EXPECT_TRUE(session.export_running());
                         shown_at_export = fe.shown.size();
                       }});
  fe.script.push_back({[&] { return !session.export_running(); }, [&] {
                         const auto s = session.state();
                         EXPECT_FALSE(s.exp.failed) << s.exp.result;
                         EXPECT_NE(s.exp.result.find("wrote " + out + ": 60 frames"), std::string::npos) << s.exp.result;
                         EXPECT_EQ(fe.shown.size(), shown_at_export) << "paused while exporting";
                         session.command(Command::pause);
                       }});
  fe.script.push_back({[&] { return session.ended(); }, [&] { session.quit(); }});

  video::FileSourceOptions fo;
  auto src = video::FileSource::open(clip, fo);
  ASSERT_TRUE(src.is_ok()) << src.status().to_string();
  EXPECT_EQ(session.run(std::unique_ptr<video::Source>(std::move(src.value())), fe, kArgv), 0);
  ASSERT_EQ(fe.steps_done(), fe.script.size());
  EXPECT_EQ(fe.shown.size(), 60u);
  EXPECT_EQ(session.state().frames_shown, 60);

  auto written = read_frames(out);
  ASSERT_TRUE(written.is_ok()) << written.status().to_string();
  EXPECT_EQ(written->size(), 60u);
  std::filesystem::remove(clip);
  std::filesystem::remove(out);
}

// A change made while paused is on screen at once: the frame on screen is made again with the new
// settings (the same frame: its index and time do not move), the "on screen" settings and kernel
// follow, and a step after it shows the next frame with them. The same after a seek while paused.
TEST(PlayerSession, PausedChangesAreShownAtOnce) {
  const std::atomic<bool> stop{false};
  app::PlayOptions o = cpu_play_options();
  o.max_speed = true;
  Session session(o, stop);
  ScriptedFrontend fe(session);
  size_t at = 0;
  int64_t paused_index = -1;
  std::string other;
  auto& sc = fe.script;
  auto shown_more = [&] { return fe.shown.size() > at && session.picture_current(); };
  sc.push_back({[&] { return fe.shown.size() == 10; }, [&] { session.command(Command::pause); }});
  sc.push_back({[&] { return fe.draws > 0 && session.state().paused; }, [&] {
                  paused_index = session.frame_index();
                  at = fe.shown.size();
                  session.command(Command::plain);  // plain on, paused
                  EXPECT_FALSE(session.picture_current());
                }});
  sc.push_back({shown_more, [&] {
                  EXPECT_EQ(fe.shown.back().index, paused_index) << "the same frame, made again";
                  EXPECT_EQ(fe.shown.back().quality, eq::describe(session.quality()));
                  EXPECT_TRUE(session.quality().plain());
                  EXPECT_EQ(session.state().quality_shown, eq::describe(session.quality())) << "the on-screen line follows";
                  EXPECT_TRUE(session.state().paused);
                  for (const auto& k : session.kernels())
                    if (k != session.kernel()) other = k;
                  at = fe.shown.size();
                  session.set_kernel(other);
                }});
  sc.push_back({shown_more, [&] {
                  EXPECT_EQ(fe.shown.back().index, paused_index);
                  EXPECT_EQ(fe.shown.back().kernel, other);
                  EXPECT_EQ(session.state().kernel_shown, other);
                  EXPECT_TRUE(session.state().kernel_requested.empty());
                  at = fe.shown.size();
                  session.command(Command::step);
                }});
  sc.push_back({shown_more, [&] {
                  EXPECT_EQ(fe.shown.back().index, paused_index + 1) << "a step after the change: the next frame";
                  EXPECT_EQ(fe.shown.back().kernel, other) << "made with the new kernel, not a queued old frame";
                  EXPECT_EQ(fe.shown.back().quality, eq::describe(session.quality()));
                  at = fe.shown.size();
                  session.seek(2.0);
                }});
  sc.push_back({shown_more, [&] {
                  EXPECT_EQ(fe.shown.back().index, 60) << "a paused seek shows where it landed";
                  at = fe.shown.size();
                  session.command(Command::plain);  // plain off again, paused at the sought frame
                }});
  sc.push_back({shown_more, [&] {
                  EXPECT_EQ(fe.shown.back().index, 60);
                  EXPECT_FALSE(session.quality().plain());
                  EXPECT_EQ(fe.shown.back().quality, eq::describe(session.quality()));
                  session.quit();
                }});
  auto src = video::open_synthetic(small_synthetic(30, 10));
  ASSERT_TRUE(src.is_ok()) << src.status().to_string();
  EXPECT_EQ(session.run(std::move(src.value()), fe, kArgv), 0);
  EXPECT_EQ(fe.steps_done(), sc.size());
  // A refresh is not a seek: no "seek" event for it, one for the real seek.
  int seeks = 0;
  for (const auto& e : session.take_events()) seeks += e == "seek";
  EXPECT_LE(seeks, 1);
}

// A source slower than its frame rate (a loaded machine): ffplay's rule keeps a moving picture.
// A late frame goes only when a newer one is ready; here none ever is, so every frame is shown,
// late, and the picture moves slower than real time instead of standing still.
class SlowSource final : public video::Source {
 public:
  SlowSource(std::unique_ptr<video::Source> inner, int ms) : inner_(std::move(inner)), ms_(ms) {}
  const video::SourceInfo& info() const override { return inner_->info(); }
  Result<video::FramePtr> next(video::FramePool& pool) override {
    std::this_thread::sleep_for(std::chrono::milliseconds(ms_));
    return inner_->next(pool);
  }
  video::SourceCounters counters() const override { return inner_->counters(); }

 private:
  std::unique_ptr<video::Source> inner_;
  int ms_;
};

TEST(PlayerSession, ASlowMachineShowsASlowerPictureNotAStillOne) {
  const std::atomic<bool> stop{false};
  app::PlayOptions o = cpu_play_options();
  Session session(o, stop);
  ScriptedFrontend fe(session);
  fe.script.push_back({[&] { return session.ended(); }, [&] { session.quit(); }});
  auto src = video::open_synthetic(small_synthetic(60, 1));  // 60 frames at 60 fps, made at about 25 fps
  ASSERT_TRUE(src.is_ok());
  EXPECT_EQ(session.run(std::make_unique<SlowSource>(std::move(src.value()), 40), fe, kArgv), 0);
  // Every frame came late by more than an interval; with no newer one ready, each was shown.
  EXPECT_GE(fe.shown.size(), 45u) << "a still picture: late frames were dropped with nothing newer to show";
  int64_t late = 0;
  for (int64_t l : session.state().late) late += l;
  EXPECT_GT(late, 20) << "the late frames are counted";
  for (size_t i = 1; i < fe.shown.size(); ++i) EXPECT_LE(fe.shown[i].index - fe.shown[i - 1].index, 3) << i;
}

// The latency row leaves out the time playback stood paused (a frame decoded before a pause and
// shown after it did not wait for the pipeline).
TEST(PlayerSession, LatencyLeavesOutPausedTime) {
  const std::atomic<bool> stop{false};
  app::PlayOptions o = cpu_play_options();
  o.max_speed = true;
  Session session(o, stop);
  ScriptedFrontend fe(session);
  Clock::time_point paused_at;
  fe.script.push_back({[&] { return fe.shown.size() == 5; }, [&] {
                         session.command(Command::pause);
                         paused_at = Clock::now();
                       }});
  fe.script.push_back({[&] { return Clock::now() - paused_at > std::chrono::milliseconds(800); }, [&] { session.command(Command::pause); }});
  fe.script.push_back({[&] { return fe.shown.size() == 30; }, [&] { session.quit(); }});
  auto src = video::open_synthetic(small_synthetic(30, 10));
  ASSERT_TRUE(src.is_ok());
  EXPECT_EQ(session.run(std::move(src.value()), fe, kArgv), 0);
  const auto total = session.stats().total();
  ASSERT_GT(total[pipeline::kLatency].count, 20);
  EXPECT_LT(total[pipeline::kLatency].max, 400.0) << "an 800 ms pause counted as latency";
}

// Runs `body` once three frames are on screen, with a controller on the session (headless: no
// window), then quits.
void with_controller(const std::function<void(Session&, app::player::Controller&)>& body) {
  const std::atomic<bool> stop{false};
  app::PlayOptions o = cpu_play_options();
  o.max_speed = true;
  Session session(o, stop);
  ScriptedFrontend fe(session);
  app::player::Controller ctl(session, nullptr, o);
  ASSERT_TRUE(ctl.start("", "").is_ok());
  fe.script.push_back({[&] { return fe.shown.size() == 3; }, [&] {
                         body(session, ctl);
                         session.quit();
                       }});
  auto src = video::open_synthetic(small_synthetic(30, 10));
  ASSERT_TRUE(src.is_ok());
  EXPECT_EQ(session.run(std::move(src.value()), fe, kArgv), 0);
  EXPECT_EQ(fe.steps_done(), 1u);
}

// The commands and properties (mpv's) that keys, --input-conf and the IPC run: values as the
// command line takes them, mpv's error strings, nothing changed by a failed command, and the OSD
// line after each key action (headless: no window, so the window's properties are unavailable).
TEST(PlayerController, PropertiesCommandsAndTheOsd) {
  with_controller([](Session& session, app::player::Controller& ctl) {
    auto run = [&](std::vector<std::string> args, bool osd = true) { return ctl.run_now(args, osd); };
    using app::player::Reply;
    EXPECT_EQ(run({"cycle", "pause"}).error, "success");
    EXPECT_EQ(session.state().osd, "Paused");
    EXPECT_EQ(ctl.get("pause").data, true);
    // A control of the table, with the command line's values.
    EXPECT_EQ(run({"set_property", "mode", "clahe"}, false).error, "success");
    EXPECT_EQ(session.quality().mode, eq::Mode::clahe);
    EXPECT_EQ(ctl.get("mode").data, "clahe");
    EXPECT_EQ(session.state().osd, "Paused") << "set_property shows nothing";
    EXPECT_EQ(run({"set", "tiles", "4x2"}).error, "success");
    EXPECT_EQ(ctl.get("tiles").data, "4x2");
    EXPECT_EQ(run({"cycle", "mode"}).error, "success");
    EXPECT_EQ(session.state().osd, "Mode: global");
    EXPECT_EQ(run({"cycle", "mode"}).error, "success");
    EXPECT_EQ(session.state().osd, "Mode: clahe 4x2");
    EXPECT_EQ(run({"set", "clip-limit", "2.5"}).error, "success");
    EXPECT_EQ(ctl.get("clip-limit").data, 2.5);
    EXPECT_EQ(session.state().osd, "Clip limit: 2.5");
    EXPECT_EQ(run({"cycle", "clip-limit"}).error, "success");
    EXPECT_EQ(session.state().osd, "Clip limit: off");
    // Bad values change nothing, with mpv's words.
    const eq::Quality before = session.quality();
    EXPECT_EQ(run({"set", "mode", "sideways"}).error, "invalid parameter");
    EXPECT_EQ(run({"set", "clip-limit", "0.5"}).error, "invalid parameter");
    EXPECT_EQ(run({"set", "tiles", "999x1"}).error, "invalid parameter");
    EXPECT_EQ(run({"set", "no-such-thing", "1"}).error, "property not found");
    EXPECT_EQ(run({"no-such-command"}).error, "invalid parameter");
    EXPECT_EQ(run({"set", "kernel", "method2"}).error, "invalid parameter") << "a GPU kernel on the CPU";
    EXPECT_EQ(run({"set", "speed", "1000"}).error, "invalid parameter");
    EXPECT_EQ(session.quality(), before);
  });
}

// The rest of the properties: plain, kernels, speed, strength, the split, the read-only and the
// window's ones, and the keys' OSD lines.
TEST(PlayerController, PlainKernelsSpeedAndTheSplit) {
  with_controller([](Session& session, app::player::Controller& ctl) {
    auto run = [&](std::vector<std::string> args, bool osd = true) { return ctl.run_now(args, osd); };
    EXPECT_EQ(run({"cycle", "pause"}).error, "success");
    EXPECT_EQ(run({"cycle", "plain"}).error, "success");
    EXPECT_EQ(session.state().osd, "Plain: on");
    EXPECT_EQ(ctl.get("plain").data, true);
    EXPECT_EQ(run({"cycle", "kernel"}).error, "success");
    EXPECT_EQ(session.state().osd, "Kernel: " + session.kernel());
    EXPECT_EQ(run({"multiply", "speed", "1.5"}).error, "success");
    EXPECT_EQ(session.state().osd, "Speed: 1.5x");
    EXPECT_EQ(run({"multiply", "speed", "1/1.5"}).error, "success");
    EXPECT_NEAR(session.speed(), 1.0, 1e-12);
    EXPECT_EQ(run({"multiply", "speed", "1000"}).error, "success") << "add and multiply stop at the range's end";
    EXPECT_NEAR(session.speed(), app::player::kMaxSpeed, 1e-12);
    EXPECT_EQ(run({"set", "speed", "1"}).error, "success");
    EXPECT_EQ(run({"add", "strength", "-0.25"}).error, "success");
    EXPECT_NEAR(session.strength(), 0.75, 1e-6);
    EXPECT_EQ(run({"cycle", "split"}).error, "success");
    EXPECT_EQ(session.state().osd, "Split: input | output");
    EXPECT_EQ(run({"set", "compare", "plain"}).error, "success");
    EXPECT_EQ(session.state().osd, "Left side: settings B (plain)");
    EXPECT_EQ(ctl.get("compare").data, "plain");
    // Read-only and window properties.
    EXPECT_EQ(run({"set", "duration", "3"}).error, "property unavailable");
    EXPECT_EQ(ctl.get("fullscreen").error, "property unavailable");
    EXPECT_EQ(run({"screenshot-to-file", "/tmp/x.png"}).error, "error running command");
    const auto t = ctl.get("histeq-timings");
    ASSERT_EQ(t.error, "success");
    EXPECT_TRUE(t.data["stages"].is_array());
    EXPECT_GT(t.data["budget_ms"].get<double>(), 0);
    EXPECT_EQ(ctl.get("estimated-frame-number").data, session.frame_index());
    // Keys run their bindings.
    EXPECT_TRUE(ctl.key("a"));
    EXPECT_EQ(session.state().osd, "Plain: off");
    EXPECT_FALSE(ctl.key("x")) << "unbound";
    EXPECT_TRUE(ctl.key("SPACE"));
    EXPECT_EQ(session.state().osd, "Playing");
  });
}

}  // namespace
}  // namespace histeq::test
