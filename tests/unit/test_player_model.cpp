// The player's model, without a window: key scripts, the kernel menu and cycling, kernel sequences,
// frame times and miss causes, the luma plots (the output histogram pushed through the LUT).
#include <gtest/gtest.h>

#include <cmath>

#include "app/player/controls.h"
#include "app/player/stats_view.h"
#include "core/equalize/equalize.h"

namespace histeq::test {
namespace {

using app::player::Cause;
using app::player::Command;

TEST(PlayerControls, KeyScriptsTakeFramesKeysAndActions) {
  auto s = app::player::parse_key_script("space, 5:o,k,K , 9:s,9:left,right,.,open=/tmp/a b.mp4,20:export=/x/y.mkv");
  ASSERT_TRUE(s.is_ok()) << s.status().to_string();
  const std::vector<std::pair<int64_t, Command>> want = {
      {1, Command::pause},  {5, Command::overlay},       {6, Command::next_kernel},  {7, Command::prev_kernel},
      {9, Command::screenshot}, {9, Command::seek_back}, {10, Command::seek_forward}, {11, Command::step},
      {12, Command::open_file}, {20, Command::export_file}};
  ASSERT_EQ(s->size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) {
    EXPECT_EQ((*s)[i].tick, want[i].first) << i;
    EXPECT_EQ((*s)[i].command, want[i].second) << i;
  }
  EXPECT_EQ((*s)[8].arg, "/tmp/a b.mp4");
  EXPECT_EQ((*s)[9].arg, "/x/y.mkv");
  EXPECT_TRUE(app::player::parse_key_script("").is_ok());
  for (const char* bad : {"x", "5:", "0:o", "a:o", "9:o,3:k", "open=", "play=/a", "k,,o"}) {
    auto r = app::player::parse_key_script(bad);
    EXPECT_FALSE(r.is_ok()) << bad;
    if (!r.is_ok()) {
      EXPECT_NE(r.status().message().find("--keys"), std::string::npos);
    }
  }
  // Every key the help panel lists can be scripted.
  for (const auto& c : app::player::commands()) {
    auto r = app::player::parse_key_script(c.key);
    ASSERT_TRUE(r.is_ok()) << c.key;
    EXPECT_EQ(r->front().command, c.command);
  }
}

TEST(PlayerControls, KernelMenuCyclingAndSequences) {
  const video::FrameFormat f8{64, 32, 8, 1, 1};
  const auto menu = app::player::kernel_menu(Backend::cpu, f8);
  const auto usable = app::player::usable_kernels(menu);
  EXPECT_EQ(usable, (std::vector<std::string>{"cpu_reference", "cpu_parallel"}));
  bool has_gpu_entry = false;
  for (const auto& c : menu)
    if (c.name == "method2") {
      has_gpu_entry = true;
      EXPECT_FALSE(c.usable);
      EXPECT_FALSE(c.why_not.empty());
      EXPECT_NE(c.source.find("Nugteren"), std::string::npos);
    }
  EXPECT_TRUE(has_gpu_entry) << "the menu lists every kernel that serves the bins, usable or not";
  for (const auto& c : menu) EXPECT_NE(c.name, "podlozhnyuk64");  // 64 bins only: cannot serve 8-bit video

  const std::vector<std::string> names = {"a", "b", "c"};
  EXPECT_EQ(app::player::cycle(names, "a", 1), "b");
  EXPECT_EQ(app::player::cycle(names, "c", 1), "a");
  EXPECT_EQ(app::player::cycle(names, "a", -1), "c");
  EXPECT_EQ(app::player::cycle(names, "zz", 1), "a");
  EXPECT_EQ(app::player::cycle(names, "zz", -1), "c");
  EXPECT_EQ(app::player::cycle({}, "a", 1), "");

  auto all = app::player::parse_kernel_sequence("all", usable);
  ASSERT_TRUE(all.is_ok());
  EXPECT_EQ(*all, usable);
  auto two = app::player::parse_kernel_sequence("cpu_parallel, cpu_reference", usable);
  ASSERT_TRUE(two.is_ok());
  EXPECT_EQ(*two, (std::vector<std::string>{"cpu_parallel", "cpu_reference"}));
  EXPECT_FALSE(app::player::parse_kernel_sequence("cpu_parallel,method2", usable).is_ok());
  EXPECT_FALSE(app::player::parse_kernel_sequence("all", {}).is_ok());
}

pipeline::FrameRecord record(float decode, float histogram, float present, bool late = false, bool dropped = false) {
  pipeline::FrameRecord r;
  r.timing.set(video::stage::decode, decode);
  r.timing.set(video::stage_id("histogram"), histogram);
  r.timing.set(video::stage_id("apply"), 1.0);
  if (present == present) r.timing.set(video::stage::present, present);
  r.timing.latency_ms = 30;
  r.late = late;
  r.dropped = dropped;
  return r;
}

TEST(PlayerStats, FrameTimeIsTheBusiestThreadAndMissesHaveCauses) {
  EXPECT_FLOAT_EQ(app::player::frame_time_ms(record(3, 5, 2).timing), 6.f);  // equalizer: 5 + 1
  EXPECT_FLOAT_EQ(app::player::frame_time_ms(record(9, 1, 2).timing), 9.f);
  EXPECT_TRUE(std::isnan(app::player::frame_time_ms(pipeline::FrameTiming())));
  EXPECT_EQ(app::player::miss_cause(record(20, 1, 1).timing, 16.7), Cause::decode);
  EXPECT_EQ(app::player::miss_cause(record(1, 20, 1).timing, 16.7), Cause::equalize);
  EXPECT_EQ(app::player::miss_cause(record(1, 1, 20).timing, 16.7), Cause::present);
  EXPECT_EQ(app::player::miss_cause(record(18, 25, 1).timing, 16.7), Cause::equalize);  // the worst
  EXPECT_EQ(app::player::miss_cause(record(1, 1, 1).timing, 16.7), Cause::scheduling);

  app::player::StatsView v(4);
  v.add(record(1, 1, 1), 16.7);
  v.add(record(20, 1, 1, true), 16.7);
  v.add(record(1, 30, NAN, false, true), 16.7);
  v.add(record(2, 2, 2), 16.7);
  v.add(record(3, 3, 3), 16.7);  // the ring holds 4: the first goes
  EXPECT_EQ(v.size(), 4u);
  const auto ft = v.frame_times();
  ASSERT_EQ(ft.size(), 4u);
  EXPECT_FLOAT_EQ(ft[0], 20.f);
  EXPECT_TRUE(std::isnan(ft[1]));  // dropped
  EXPECT_FLOAT_EQ(ft[3], 4.f);
  const auto present = v.series((video::stage::present));
  EXPECT_TRUE(std::isnan(present[1]));
  EXPECT_FLOAT_EQ(present[3], 3.f);
  EXPECT_FLOAT_EQ(v.series(pipeline::kLatency)[0], 30.f);
  EXPECT_EQ(v.late(Cause::decode), 1);
  EXPECT_EQ(v.dropped(Cause::equalize), 1);
  EXPECT_EQ(v.dropped(Cause::decode) + v.late(Cause::scheduling), 0);
  EXPECT_EQ(v.dropped_flags(), (std::vector<uint8_t>{0, 1, 0, 0}));
}

TEST(PlayerStats, TheOutputHistogramIsTheInputPushedThroughTheLut) {
  // 8-bit: a narrow input, equalized.
  std::vector<uint32_t> h(256, 0);
  for (int v = 100; v < 120; ++v) h[v] = 10 + v % 7;
  std::vector<uint16_t> lut(256);
  ASSERT_TRUE(eq::build_lut(h.data(), 256, eq::kWeightOne, lut.data()).is_ok());
  const auto p = app::player::luma_plots(h, lut);
  ASSERT_EQ(p.input.size(), 256u);
  double total = 0;
  for (uint32_t c : h) total += c;
  for (int v = 0; v < 256; ++v) EXPECT_FLOAT_EQ(p.input[v], static_cast<float>(h[v] / total));
  std::vector<double> out(256, 0.0);
  for (int v = 0; v < 256; ++v) out[lut[v]] += h[v];
  for (int v = 0; v < 256; ++v) EXPECT_NEAR(p.output[v], out[v] / total, 1e-7) << v;
  EXPECT_NEAR(p.input_cdf.back(), 1.0, 1e-6);
  EXPECT_NEAR(p.output_cdf.back(), 1.0, 1e-6);
  EXPECT_GT(p.output[255], 0.f);  // equalized: stretched to the top

  // 10-bit: 1024 bins shown as 256 (groups of 4).
  std::vector<uint32_t> h10(1024, 0);
  h10[400] = 5;
  h10[403] = 7;
  h10[1023] = 1;
  std::vector<uint16_t> id(1024);
  for (int v = 0; v < 1024; ++v) id[v] = static_cast<uint16_t>(v);
  const auto p10 = app::player::luma_plots(h10, id);
  ASSERT_EQ(p10.input.size(), 256u);
  EXPECT_FLOAT_EQ(p10.input[100], 12.f / 13.f);
  EXPECT_FLOAT_EQ(p10.output[255], 1.f / 13.f);
  EXPECT_TRUE(app::player::luma_plots({}, {}).input.empty());
  EXPECT_TRUE(app::player::luma_plots(h, std::vector<uint16_t>(3)).input.empty());  // no LUT of its size
}

}  // namespace
}  // namespace histeq::test

namespace histeq::test {
namespace {

TEST(PlayerControls, QualityKeysToggleOneControlEach) {
  using app::player::Command;
  using app::player::toggle_control;
  const eq::Quality d = eq::default_quality();
  eq::Quality q = toggle_control("mode", d, d);
  EXPECT_EQ(q.mode, eq::Mode::clahe);
  q.mode = d.mode;
  EXPECT_EQ(q, d) << "m changes the mode only";
  EXPECT_EQ(toggle_control("mode", toggle_control("mode", d, d), d), d);
  EXPECT_EQ(toggle_control("chroma", d, d).chroma, eq::ChromaMode::keep);
  EXPECT_EQ(toggle_control("temporal", d, d).temporal_s, 0);
  EXPECT_EQ(toggle_control("clip-limit", d, d).clip_limit, 0);
  // Back on at the value the user had, or at the defaults' when that was off too.
  eq::Quality custom = d;
  custom.temporal_s = 1.5;
  EXPECT_EQ(toggle_control("temporal", toggle_control("temporal", custom, custom), custom).temporal_s, 1.5);
  EXPECT_EQ(toggle_control("temporal", eq::plain_quality(), eq::plain_quality()).temporal_s, d.temporal_s);
  EXPECT_TRUE(toggle_control("textbook", d, d).textbook);
  EXPECT_EQ(toggle_control("textbook", toggle_control("textbook", d, d), d), d);
  EXPECT_EQ(toggle_control("no-such-control", d, d), d);
  // n: the denoiser, off by default, on at eq::kDenoiseOn or the user's sigma, the rest unchanged.
  eq::Quality dn = toggle_control("denoise", d, d);
  EXPECT_EQ(dn.denoise, eq::kDenoiseOn);
  EXPECT_FALSE(dn.plain());
  dn.denoise = 0;
  EXPECT_EQ(dn, d);
  custom.denoise = 6;
  EXPECT_EQ(toggle_control("denoise", toggle_control("denoise", custom, custom), custom).denoise, 6);
  // --compare: the input or a look.
  EXPECT_FALSE(app::player::compare_look("input")->has_value());
  EXPECT_TRUE((*app::player::compare_look("plain"))->quality.plain());
  EXPECT_EQ((*app::player::compare_look("clahe"))->quality.mode, eq::Mode::clahe);
  EXPECT_FALSE(app::player::compare_look("sideways").is_ok());
}

}  // namespace
}  // namespace histeq::test
