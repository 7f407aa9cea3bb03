// The player's playback session without a window (app/player/session.h): a scripted front end
// stands in for the window, records what the session hands it, and sends commands from its draw()
// as the window's keys and overlay do. CPU only: no GPU, no display.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <functional>

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

}  // namespace
}  // namespace histeq::test
