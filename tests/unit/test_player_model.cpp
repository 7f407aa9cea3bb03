// The player's model, without a window: key scripts, the kernel menu and cycling, kernel sequences,
// frame times and miss causes, the luma plots (the output histogram pushed through the LUT).
#include <gtest/gtest.h>

#include <cmath>
#include <set>
#include <tuple>

#include "app/player/bindings.h"
#include "app/player/controls.h"
#include "app/player/stats_view.h"
#include "core/equalize/equalize.h"
#include "core/pipeline/stats.h"

namespace histeq::test {
namespace {

using app::player::Cause;
using app::player::Command;

TEST(PlayerControls, KeyScriptsTakeFramesKeysAndActions) {
  const app::player::Bindings b = app::player::Bindings::defaults();
  auto known = [&b](const std::string& k) {
    auto c = app::player::canonical_key(k);
    return c.is_ok() && b.find(*c) != nullptr;
  };
  auto s = app::player::parse_key_script("space, 5:TAB,k,K , 9:s,9:left,right,.,open=/tmp/a b.mp4,20:export=/x/y.mkv,comma", known,
                                         b.names());
  ASSERT_TRUE(s.is_ok()) << s.status().to_string();
  using Action = app::player::ScriptedKey::Action;
  const std::vector<std::tuple<int64_t, Action, std::string>> want = {
      {1, Action::key, "space"}, {5, Action::key, "TAB"},  {6, Action::key, "k"},   {7, Action::key, "K"},
      {9, Action::key, "s"},     {9, Action::key, "left"}, {10, Action::key, "right"}, {11, Action::key, "."},
      {12, Action::open, ""},    {20, Action::export_file, ""}, {21, Action::key, "comma"}};
  ASSERT_EQ(s->size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) {
    EXPECT_EQ((*s)[i].tick, std::get<0>(want[i])) << i;
    EXPECT_EQ((*s)[i].action, std::get<1>(want[i])) << i;
    EXPECT_EQ((*s)[i].key, std::get<2>(want[i])) << i;
  }
  EXPECT_EQ((*s)[8].arg, "/tmp/a b.mp4");
  EXPECT_EQ((*s)[9].arg, "/x/y.mkv");
  EXPECT_TRUE(app::player::parse_key_script("", known, "").is_ok());
  for (const char* bad : {"x", "nosuchkey", "5:", "0:TAB", "a:o", "9:TAB,3:k", "open=", "play=/a", "k,,TAB"}) {
    auto r = app::player::parse_key_script(bad, known, b.names());
    EXPECT_FALSE(r.is_ok()) << bad;
    if (!r.is_ok()) {
      EXPECT_NE(r.status().message().find("--keys"), std::string::npos);
    }
  }
  // Every key the keys panel lists can be scripted (',' by its name: the list is comma-separated).
  for (const auto* k : b.list())
    EXPECT_TRUE(app::player::parse_key_script(k->key == "," ? "comma" : k->key, known, "").is_ok()) << k->key;
}

// mpv's keys do what mpv's do; histeq's own actions sit on keys mpv leaves free.
TEST(PlayerKeys, TheDefaultsAreMpvsKeysAndHisteqsOnFreeOnes) {
  const app::player::Bindings b = app::player::Bindings::defaults();
  auto cmd = [&](const std::string& key) {
    const app::player::Binding* k = b.find(*app::player::canonical_key(key));
    if (k == nullptr) return std::string("(unbound)");
    std::string out;
    for (const auto& c : k->commands)
      for (const auto& w : c.args) out += (out.empty() ? "" : " ") + w;
    return out;
  };
  const std::pair<const char*, const char*> mpv[] = {
      {"SPACE", "cycle pause"},   {"p", "cycle pause"},          {".", "frame-step"},       {",", "frame-back-step"},
      {"LEFT", "seek -5"},        {"RIGHT", "seek 5"},           {"UP", "seek 60"},         {"DOWN", "seek -60"},
      {"[", "multiply speed 1/1.1"}, {"]", "multiply speed 1.1"}, {"{", "multiply speed 0.5"}, {"}", "multiply speed 2.0"},
      {"BS", "set speed 1.0"},    {"i", "cycle stats"},          {"SHARP", "cycle audio"},  {"#", "cycle audio"},
      {"j", "cycle sub"},         {"q", "quit"},                 {"ESC", "set fullscreen no"}, {"f", "cycle fullscreen"},
      {"m", "cycle mute"},        {"9", "add volume -5"},        {"0", "add volume 5"},     {"s", "screenshot"},
      {"Ctrl+s", "screenshot window"}};
  for (auto [key, want] : mpv) EXPECT_EQ(cmd(key), want) << key;
  // Every key mpv's default input.conf binds (mpv 0.38's etc/input.conf).
  const std::set<std::string> mpv_keys = {
      "b", "d", "e", "f", "g", "i", "j", "l", "m", "o", "p", "q", "r", "s", "t", "u", "v", "w", "x", "z", "A", "E", "F", "G", "I",
      "J", "L", "O", "P", "Q", "R", "S", "T", "V", "W", "Z", "[", "]", "{", "}", "BS", ".", ",", "SPACE", ">", "<", "ENTER", "`",
      "?", "/", "*", "1", "2", "3", "4", "5", "6", "7", "8", "9", "0", "SHARP", "_", "DEL", "ESC", "LEFT", "RIGHT", "UP", "DOWN"};
  // The actions the issue moved off mpv's keys: plain, clip limit, the split's side, the overlay, swap.
  const std::pair<const char*, const char*> ours[] = {
      {"a", "cycle plain"}, {"C", "cycle clip-limit"}, {"B", "cycle compare"}, {"TAB", "cycle overlay"}, {"X", "swap"},
      {"k", "cycle kernel"}, {"K", "cycle kernel down"}, {"c", "cycle chroma"}, {"n", "cycle denoise"}, {"h", "cycle help"},
      {"F1", "cycle help"}};
  for (auto [key, want] : ours) {
    EXPECT_EQ(cmd(key), want) << key;
    EXPECT_EQ(mpv_keys.count(*app::player::canonical_key(key)), 0u) << key << " is one of mpv's keys";
  }
  // Each binding has its words for the keys panel, and the panel lists Esc and F1.
  for (const auto* k : b.list()) EXPECT_FALSE(k->help.empty()) << k->key;
  const std::string help = app::player::keys_help_text(b);
  for (const char* k : {"Esc ", "F1 ", "Tab ", "# ", "space "}) EXPECT_NE(help.find(std::string("  ") + k), std::string::npos) << k;
}

TEST(PlayerKeys, KeyNamesAndCommandLinesAreMpvs) {
  using app::player::canonical_key;
  EXPECT_EQ(*canonical_key("space"), "SPACE");
  EXPECT_EQ(*canonical_key("Shift+k"), "K");
  EXPECT_EQ(*canonical_key("ctrl+shift+s"), "Ctrl+S");
  EXPECT_EQ(*canonical_key("alt+ctrl+left"), "Ctrl+Alt+LEFT");
  EXPECT_EQ(*canonical_key("#"), "SHARP");
  EXPECT_EQ(*canonical_key("Alt++"), "Alt++");
  EXPECT_EQ(*canonical_key("comma"), ",");
  EXPECT_EQ(*canonical_key("f12"), "F12");
  for (const char* bad : {"", "F25", "nosuchkey", "g-p", "Ctrl+"}) EXPECT_FALSE(canonical_key(bad).is_ok()) << bad;

  std::string comment;
  auto c = app::player::parse_command_line(R"(no-osd seek 5 exact; show-text "a \"b\" # c" 2000 # the help)", &comment);
  ASSERT_TRUE(c.is_ok()) << c.status().to_string();
  ASSERT_EQ(c->size(), 2u);
  EXPECT_FALSE((*c)[0].osd);
  EXPECT_EQ((*c)[0].args, (std::vector<std::string>{"seek", "5", "exact"}));
  EXPECT_TRUE((*c)[1].osd);
  EXPECT_EQ((*c)[1].args, (std::vector<std::string>{"show-text", "a \"b\" # c", "2000"}));
  EXPECT_EQ(comment, "the help");
  EXPECT_FALSE(app::player::parse_command_line("show-text 'unterminated").is_ok());

  // An input.conf: it rebinds, adds and unbinds keys; its mistakes name the file and the line.
  app::player::Bindings b = app::player::Bindings::defaults();
  ASSERT_TRUE(b.parse("# mine\nk cycle plain  # plain on k\nCtrl+p cycle pause\nq ignore\ng {section} cycle mode\n", "mine.conf").is_ok());
  EXPECT_EQ(b.find("k")->commands.front().args, (std::vector<std::string>{"cycle", "plain"}));
  EXPECT_EQ(b.find("k")->help, "plain on k");
  EXPECT_EQ(b.find("k")->origin, "mine.conf:2");
  EXPECT_NE(b.find("Ctrl+p"), nullptr);
  EXPECT_EQ(b.find("q"), nullptr) << "ignore unbinds";
  EXPECT_EQ(b.find("g")->origin.rfind("default", 0), 0u) << "mpv's sections are left alone";
  auto bad = b.parse("x seek 5\nnosuchkey quit\n", "bad.conf");
  ASSERT_FALSE(bad.is_ok());
  EXPECT_NE(bad.message().find("bad.conf:2"), std::string::npos) << bad.message();
  EXPECT_FALSE(b.parse("z\n", "empty.conf").is_ok());
  EXPECT_FALSE(b.load("/nonexistent/input.conf").is_ok());
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

// A window the caller sizes by a frame rate a file's header chose (F99999999:1) allocates the bound,
// not that; the table of the last second takes the frames that came.
TEST(PlayerStats, TheStatisticsAreBoundedWhateverTheHeaderSays) {
  pipeline::RunStats huge(99'999'999);
  EXPECT_EQ(huge.window_size(), pipeline::kMaxWindow);
  for (int i = 0; i < 3000; ++i) {
    pipeline::FrameRecord r;
    r.index = i;
    r.timing.set(video::stage::decode, i < 2990 ? 1.0 : 5.0);
    huge.add(r);
  }
  EXPECT_EQ(huge.window()[video::stage::decode].count, static_cast<int64_t>(pipeline::kMaxWindow));
  EXPECT_EQ(huge.window(10)[video::stage::decode].count, 10);
  EXPECT_NEAR(huge.window(10)[video::stage::decode].avg, 5.0, 1e-9) << "the newest 10";
  EXPECT_EQ(huge.total()[video::stage::decode].count, 3000);
}

// --stats-json on an endless input: the records go to a spill file as they come, so memory holds
// at most one chunk of them; every record comes back, in order.
TEST(PlayerStats, RecordsSpillToAFileAndComeBackInOrder) {
  pipeline::RunStats rs(10, true);
  const int64_t n = 3 * static_cast<int64_t>(pipeline::kRecordChunk) + 123;
  for (int64_t i = 0; i < n; ++i) {
    pipeline::FrameRecord r;
    r.index = i;
    r.time_s = i / 60.0;
    r.kernel = i % 3 == 0 ? "cpu_parallel" : "cpu_reference";
    r.late = i % 7 == 0;
    r.paused_ns = i;
    r.timing.set(video::stage::decode, static_cast<double>(i % 100));
    rs.add(r);
    ASSERT_LE(rs.records_in_memory(), pipeline::kRecordChunk);
  }
  int64_t next = 0;
  rs.for_each_record([&](const pipeline::FrameRecord& r) {
    EXPECT_EQ(r.index, next);
    EXPECT_EQ(r.kernel, next % 3 == 0 ? "cpu_parallel" : "cpu_reference");
    EXPECT_EQ(r.late, next % 7 == 0);
    EXPECT_EQ(r.paused_ns, next);
    EXPECT_FLOAT_EQ(r.timing.get(video::stage::decode), static_cast<float>(next % 100));
    EXPECT_DOUBLE_EQ(r.time_s, next / 60.0);
    ++next;
  });
  EXPECT_EQ(next, n);
  EXPECT_EQ(rs.records_lost(), 0);
  EXPECT_EQ(rs.records().size(), static_cast<size_t>(n));
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
