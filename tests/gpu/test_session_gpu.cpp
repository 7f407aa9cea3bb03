// The player's playback session on the GPU, without a window: the frames it hands its front end
// stay on the device (as the window's CUDA-GL interop takes them), and they are the CPU's, bit for
// bit, across a live kernel switch; a live settings change reaches the screen. Without a CUDA
// device the test reports itself SKIPPED.
#include <gtest/gtest.h>

#include "app/player/session.h"
#include "core/cuda/device.h"
#include "tests/common/session_frontend.h"
#include "tests/common/video_helpers.h"

namespace histeq::test {
namespace {

using app::player::Command;

video::SyntheticOptions clip_options() {
  video::SyntheticOptions so;
  so.width = 320;
  so.height = 180;
  so.fps = 30;
  so.duration_s = 2;
  return so;
}

TEST(GpuPlayerSession, ShowsTheCpuPicturesAcrossLiveChanges) {
  if (!cuda::have_device()) GTEST_SKIP() << "no CUDA device";
  const std::atomic<bool> stop{false};
  app::PlayOptions o;
  o.eq.quality = eq::default_quality();
  o.max_speed = true;
  app::player::Session session(o, stop);
  ScriptedFrontend fe(session, 1 << 20);
  std::string other;
  eq::Quality changed;
  fe.script.push_back({[&] { return fe.shown.size() == 10; }, [&] {
                         const auto s = session.state();
                         for (const auto& k : s.kernels)
                           if (k.usable && k.name != s.kernel_shown && other.empty()) other = k.name;
                         session.set_kernel(other);
                       }});
  fe.script.push_back({[&] { return fe.shown.size() == 25; }, [&] {
                         session.toggle_control("mode");  // the g key: global <-> clahe
                         changed = session.state().quality;
                       }});
  fe.script.push_back({[&] { return session.ended(); }, [&] { session.quit(); }});
  auto src = video::open_synthetic(clip_options());
  ASSERT_TRUE(src.is_ok()) << src.status().to_string();
  ASSERT_EQ(session.run(std::move(src.value()), fe, {"histeq", "play"}), 0);
  ASSERT_EQ(fe.steps_done(), fe.script.size());
  EXPECT_EQ(session.equalizer().backend, Backend::gpu);
  ASSERT_FALSE(other.empty()) << "a second GPU kernel to switch to";
  ASSERT_EQ(fe.shown.size(), 60u);

  // The CPU with the settings the session started with: every frame before the settings change
  // (the kernel changes nothing in the picture: histograms are exact).
  auto cpu_src = video::open_synthetic(clip_options());
  ASSERT_TRUE(cpu_src.is_ok());
  pipeline::PipelineOptions po;
  po.equalizer.cpu = true;
  po.equalizer.quality = eq::default_quality();
  auto ref = run_pipeline(**cpu_src, po);
  ASSERT_TRUE(ref.is_ok()) << ref.status().to_string();
  ASSERT_EQ(ref->frames.size(), 60u);
  bool saw_other = false, saw_changed = false;
  for (size_t i = 0; i < fe.copies.size(); ++i) {
    const auto& [index, copy] = fe.copies[i];
    saw_other |= fe.shown[i].kernel == other;
    const bool clahe = fe.shown[i].quality == eq::describe(changed);
    saw_changed |= clahe;
    if (clahe) continue;  // from here the temporal filter's state is the new settings' too
    EXPECT_TRUE(copy == ref->frames[static_cast<size_t>(index)]) << "frame " << index << " (" << fe.shown[i].kernel << ")";
  }
  EXPECT_TRUE(saw_other) << "the kernel switch reached the screen";
  EXPECT_TRUE(saw_changed) << "the settings change reached the screen";
}

}  // namespace
}  // namespace histeq::test
