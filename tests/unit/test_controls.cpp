// The picture-quality controls declared once: the table, the command line of play,
// export and quality parsed into settings, `histeq quality`'s keys, the planner, and an operation
// registered at run time reaching every front end. The expectations of QualityCli were written from the code before
// the table (hand-written options and QualityArgs::resolve) and passed there.
#include <gtest/gtest.h>

#include <CLI/CLI.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "app/common/play_options.h"
#include "app/player/controls.h"
#include "core/cuda/numbers.h"
#include "core/equalize/controls.h"
#include "core/equalize/operation.h"
#include "core/equalize/planner.h"
#include "core/equalize/quality.h"
#define HISTEQ_API_NO_USING  // histeq::api::Status beside the core one
#include "histeq/histeq.hpp"
#include "tests/common/quality_cases.h"

namespace histeq {
namespace {

// `args` through the quality options of a command and QualityArgs::resolve(); a parse error (an
// unknown choice, --plain with a tone option) as an error status with CLI11's message.
Result<eq::Quality> parse_quality(std::vector<std::string> args) {
  CLI::App cmd("test");
  app::QualityArgs q;
  app::add_quality_options(&cmd, q);
  std::vector<std::string> reversed(args.rbegin(), args.rend());
  try {
    cmd.parse(reversed);
  } catch (const CLI::ParseError& e) {
    return HISTEQ_ERROR(Code::invalid_argument, e.what());
  }
  return q.resolve();
}

struct CliCase {
  std::vector<std::string> args;
  eq::Quality want;
};

std::vector<CliCase> cli_cases() {
  const eq::Quality d = eq::default_quality(), p = eq::plain_quality();
  std::vector<CliCase> c;
  c.push_back({{}, d});
  c.push_back({{"--plain"}, p});
  eq::Quality q = p;
  q.textbook = true;
  c.push_back({{"--plain", "--textbook"}, q});
  q = p;
  q.denoise = 3;
  c.push_back({{"--plain", "--denoise", "3"}, q});
  q = p;
  q.range = eq::RangeMode::full;
  c.push_back({{"--plain", "--range", "full"}, q});
  q = d;
  q.mode = eq::Mode::clahe;
  q.tiles = {13, 5};
  q.chroma = eq::ChromaMode::keep;
  c.push_back({{"--mode", "clahe", "--tiles", "13x5", "--chroma", "keep"}, q});
  q = d;
  q.clip_limit = 0;
  q.temporal_s = 0;
  c.push_back({{"--clip-limit", "0", "--temporal", "0"}, q});
  q = d;
  q.clip_limit = 2.5;
  q.scene_cut = 1;
  q.chroma_limit = 3;
  c.push_back({{"--clip-limit", "2.5", "--scene-cut", "1", "--chroma-limit", "3"}, q});
  q = d;
  q.range = eq::RangeMode::limited;
  q.textbook = true;
  q.denoise = 0.5;
  c.push_back({{"--range", "limited", "--textbook", "--denoise", "0.5"}, q});
  q = d;
  q.mode = eq::Mode::global;
  q.temporal_s = 10;
  q.scene_cut = 0;
  q.chroma = eq::ChromaMode::follow;
  q.chroma_limit = 1;
  q.clip_limit = 64;
  q.denoise = 20;
  c.push_back({{"--mode", "global", "--temporal", "10", "--scene-cut", "0", "--chroma", "auto", "--chroma-limit", "1", "--clip-limit",
                "64", "--denoise", "20"},
               q});
  return c;
}

TEST(QualityCli, ArgumentLinesGiveTheSettingsOfBefore) {
  for (const CliCase& c : cli_cases()) {
    std::string line;
    for (const auto& a : c.args) line += a + " ";
    auto q = parse_quality(c.args);
    ASSERT_TRUE(q.is_ok()) << line << ": " << q.status().to_string();
    EXPECT_EQ(*q, c.want) << line << ": " << eq::describe(*q) << " instead of " << eq::describe(c.want);
  }
}

TEST(QualityCli, BadValuesAreRefusedNamingTheControl) {
  const std::vector<std::pair<std::vector<std::string>, std::string>> bad = {
      {{"--clip-limit", "0.5"}, "clip limit"}, {{"--tiles", "0x8"}, "tiles"},         {{"--tiles", "8"}, "tiles"},
      {{"--temporal", "-1"}, "temporal"},      {{"--scene-cut", "2"}, "scene-cut"},   {{"--chroma-limit", "9"}, "chroma limit"},
      {{"--mode", "local"}, "--mode"},         {{"--chroma", "vivid"}, "--chroma"},   {{"--plain", "--mode", "clahe"}, "--plain"},
      {{"--denoise", "50"}, "denoise"},        {{"--plain", "--denoise", "0.1"}, "denoise"},
      {{"--range", "tv"}, "--range"},          {{"--clip-limit", "x"}, "--clip-limit"}};
  for (const auto& [args, word] : bad) {
    auto q = parse_quality(args);
    ASSERT_FALSE(q.is_ok()) << args[0];
    EXPECT_NE(q.status().message().find(word), std::string::npos) << args[0] << ": " << q.status().message();
  }
}

// A renamed control's old name (chroma-limit's configuration key was "limit") still works, as an
// option and as a key, and warns.
TEST(QualityCli, AnOldNameWorksAndWarns) {
  CLI::App cmd("test");
  app::QualityArgs args;
  app::add_quality_options(&cmd, args);
  cmd.parse(std::vector<std::string>{"1.5", "--limit"});
  auto q = args.resolve();
  ASSERT_TRUE(q.is_ok()) << q.status().to_string();
  EXPECT_EQ(q->chroma_limit, 1.5);
  ASSERT_EQ(args.warnings().size(), 1u);
  EXPECT_NE(args.warnings()[0].find("use 'chroma-limit'"), std::string::npos) << args.warnings()[0];
  EXPECT_EQ(cmd.help().find("--limit"), std::string::npos) << "hidden from the help";
  EXPECT_FALSE(parse_quality({"--limit", "2", "--chroma-limit", "2"}).is_ok()) << "one value, one way";
  EXPECT_FALSE(parse_quality({"--plain", "--limit", "2"}).is_ok()) << "--plain sets it";
  CLI::App fresh("test");
  app::QualityArgs none;
  app::add_quality_options(&fresh, none);
  fresh.parse(std::vector<std::string>{"1.5", "--chroma-limit"});
  EXPECT_TRUE(none.warnings().empty());
  std::vector<std::string> warnings;
  auto c = app::quality_config("x:limit=2", &warnings);
  ASSERT_TRUE(c.is_ok()) << c.status().to_string();
  EXPECT_EQ(c->chroma_limit, 2);
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_NE(warnings[0].find("'limit' is an old name of 'chroma-limit'"), std::string::npos) << warnings[0];
  warnings.clear();
  ASSERT_TRUE(app::quality_config("x:chroma-limit=2", &warnings).is_ok());
  EXPECT_TRUE(warnings.empty());
  // The library's word for it (the Python module shows it as a DeprecationWarning).
  EXPECT_NE(histeq::api::control_warning("limit").find("chroma-limit"), std::string::npos);
  EXPECT_EQ(histeq::api::control_warning("chroma-limit"), "");
  EXPECT_EQ(histeq::api::control_warning("no-such"), "");
}

// Every field of Quality is bound to exactly one control, and each control moves one field.
TEST(ControlTable, EveryQualityFieldIsBoundOnce) {
  using F = std::function<bool(const eq::Quality&, const eq::Quality&)>;
  const std::vector<std::pair<std::string, F>> fields = {
      {"mode", [](auto& a, auto& b) { return a.mode != b.mode; }},
      {"tiles", [](auto& a, auto& b) { return a.tiles != b.tiles; }},
      {"clip_limit", [](auto& a, auto& b) { return a.clip_limit != b.clip_limit; }},
      {"temporal_s", [](auto& a, auto& b) { return a.temporal_s != b.temporal_s; }},
      {"scene_cut", [](auto& a, auto& b) { return a.scene_cut != b.scene_cut; }},
      {"chroma", [](auto& a, auto& b) { return a.chroma != b.chroma; }},
      {"chroma_limit", [](auto& a, auto& b) { return a.chroma_limit != b.chroma_limit; }},
      {"range", [](auto& a, auto& b) { return a.range != b.range; }},
      {"textbook", [](auto& a, auto& b) { return a.textbook != b.textbook; }},
      {"denoise", [](auto& a, auto& b) { return a.denoise != b.denoise; }},
  };
  const eq::Quality d = eq::default_quality();
  std::map<std::string, std::string> bound;  // field -> control
  for (const auto& c : eq::controls()) {
    eq::Quality q = d;
    if (c.type == eq::ControlType::grid) c.set_grid(q, {3, 7});
    else if (c.type == eq::ControlType::number) c.set(q, c.get(d) == c.max ? c.min : c.max);
    else c.set(q, c.get(d) == 0 ? 1 : 0);
    EXPECT_TRUE(eq::check_control(c, q).is_ok()) << c.name;
    int moved = 0;
    for (const auto& [field, differs] : fields) {
      if (!differs(q, d)) continue;
      ++moved;
      EXPECT_EQ(bound.count(field), 0u) << field << " is bound to " << bound[field] << " and " << c.name;
      bound[field] = c.name;
    }
    EXPECT_EQ(moved + static_cast<int>(q.params.size()), 1) << c.name << " moves one field or one param";
    EXPECT_FALSE(c.help.empty() || c.doc.empty() || c.what.empty() || c.op.empty()) << c.name;
  }
  for (const auto& [field, differs] : fields) EXPECT_EQ(bound.count(field), 1u) << field << " has no control";
}

TEST(ControlTable, TextAndNumberFormsRoundTrip) {
  const std::vector<eq::Control> table = eq::controls();
  for (const auto& c : table) {
    std::vector<std::string> texts;
    if (c.type == eq::ControlType::choice) texts = c.choices;
    if (c.type == eq::ControlType::flag) texts = {"0", "1"};
    if (c.type == eq::ControlType::grid) texts = {"1x1", "3x7", "32x32"};
    if (c.type == eq::ControlType::number) texts = {eq::control_number(c.min), eq::control_number(c.max), "0.75"};
    for (const auto& t : texts) {
      eq::Quality q = eq::default_quality();
      ASSERT_TRUE(eq::set_control_text(c, q, t).is_ok()) << c.name << "=" << t;
      EXPECT_EQ(eq::control_text(c, q), t) << c.name;
      eq::Quality r = eq::default_quality();
      c.set(r, c.get(q));
      if (c.type != eq::ControlType::grid) {
        EXPECT_EQ(r, q) << c.name << "=" << t << ": the number form";
      }
    }
    EXPECT_EQ(eq::find_control(table, c.python_name())->name, c.name);
    EXPECT_EQ(eq::find_control(table, c.config_key())->name, c.name);
  }
}

TEST(ControlTable, ValuesOutsideTheRangeAreRefusedNamingTheControl) {
  for (const auto& c : eq::controls()) {
    if (c.type != eq::ControlType::number) continue;
    const double below = c.min - (c.zero_off && c.min > 0 ? c.min / 2 : 1);
    for (double v : {below, c.max + 1, std::nan("")}) {
      eq::Quality q = eq::default_quality();
      c.set(q, v);
      const Status s = eq::validate(q);
      ASSERT_FALSE(s.is_ok()) << c.name << " " << v;
      EXPECT_NE(s.message().find(c.what), std::string::npos) << s.message();
    }
    for (double v : {c.min, c.max}) {
      eq::Quality q = eq::default_quality();
      c.set(q, v);
      EXPECT_TRUE(eq::validate(q).is_ok()) << c.name << " " << v;
    }
  }
  eq::Quality q = eq::default_quality();
  const std::vector<eq::Control> table = eq::controls();  // find_control's pointers point into it
  const auto* tiles = eq::find_control(table, "tiles");
  EXPECT_FALSE(eq::set_control_text(*tiles, q, "0x8").is_ok());
  EXPECT_FALSE(eq::set_control_text(*tiles, q, "8").is_ok());
  EXPECT_EQ(eq::set_control_text(*eq::find_control(table, "clip"), q, "x").message(), "clip=x: not a number");
  EXPECT_EQ(eq::set_control_text(*eq::find_control(table, "mode"), q, "local").message(),
            "mode must be global or clahe, not 'local'");
}

// WxH is one checked parser (core/cuda/numbers.h) for the grid controls, `histeq quality`'s tiles
// key and the command line's --size: sscanf's %d wrapped at 32 bits (4294967304x4294967300 tiles
// were 8x4), and took signs, spaces and trailing words.
TEST(NumbersInText, DimensionsNeverWrapAndSayWhatIsWrong) {
  int a = 0, b = 0;
  ASSERT_TRUE(parse_dimensions("16x9", "size", 100, a, b).is_ok());
  EXPECT_EQ(std::make_pair(a, b), std::make_pair(16, 9));
  const std::vector<std::pair<std::string, std::string>> bad = {
      {"4294967304x4294967300", "tiles must be 1..32 per axis, not 4294967304x4294967300"},
      {"4294967297x2", "tiles must be 1..32 per axis, not 4294967297x2"},
      {"99999999999999999999999999x1", "tiles must be 1..32 per axis, not 99999999999999999999999999x1"},
      {"0x8", "tiles must be 1..32 per axis, not 0x8"},
      {"33x1", "tiles must be 1..32 per axis, not 33x1"},
      {"-8x8", "tiles must be WxH (two whole numbers, e.g. 8x8), not '-8x8'"},
      {"+8x8", "tiles must be WxH (two whole numbers, e.g. 8x8), not '+8x8'"},
      {" 8x8", "tiles must be WxH (two whole numbers, e.g. 8x8), not ' 8x8'"},
      {"8x8 ", "tiles must be WxH (two whole numbers, e.g. 8x8), not '8x8 '"},
      {"8x8x8", "tiles must be WxH (two whole numbers, e.g. 8x8), not '8x8x8'"},
      {"8", "tiles must be WxH (two whole numbers, e.g. 8x8), not '8'"},
      {"8.5x8", "tiles must be WxH (two whole numbers, e.g. 8x8), not '8.5x8'"},
      {"x", "tiles must be WxH (two whole numbers, e.g. 8x8), not 'x'"}};
  const std::vector<eq::Control> table = eq::controls();
  const eq::Control* tiles = eq::find_control(table, "tiles");
  for (const auto& [text, want] : bad) {
    a = b = -1;
    EXPECT_EQ(parse_dimensions(text, "tiles", hist::kMaxTiles, a, b).message(), want) << text;
    EXPECT_EQ(std::make_pair(a, b), std::make_pair(-1, -1)) << text << ": nothing is written on an error";
    eq::Quality q = eq::default_quality();
    EXPECT_EQ(eq::set_control_text(*tiles, q, text).message(), want) << text;  // the grid control
    EXPECT_EQ(q, eq::default_quality()) << text;
    EXPECT_EQ(eq::parse_tiles(text).status().message(), want) << text;  // histeq quality's key
  }
  auto q = parse_quality({"--mode", "clahe", "--tiles", "4294967304x4294967300"});
  ASSERT_FALSE(q.is_ok());
  EXPECT_NE(q.status().message().find("tiles must be 1..32 per axis, not 4294967304x4294967300"), std::string::npos);
}

// Numbers print and parse as in the C locale, whatever the process's (numbers.h): %g's forms.
TEST(NumbersInText, FormatAndParseAreThoseOfTheCLocale) {
  for (double v : {1.1, 0.35, 1.0, 64.0, 1e-7, 123456.0, 1234567.0, -2.5, 0.0, 1.0 / 3}) {
    char want[64];
    std::snprintf(want, sizeof(want), "%g", v);  // the test runs in the C locale
    EXPECT_EQ(format_number(v), want) << v;
    double back = 0;
    ASSERT_TRUE(parse_number(format_number(v, 17), back)) << v;
    EXPECT_EQ(back, v);
  }
  EXPECT_EQ(format_number(1.23456789, 4), "1.235");
  EXPECT_EQ(format_fixed(12.25, 1), "12.2");
  EXPECT_EQ(format_fixed(3.0, 1), "3.0");
  double v = 0;
  for (const char* ok : {"1.5", "+1.5", "-2", "1e3", ".5", "inf"}) EXPECT_TRUE(parse_number(ok, v)) << ok;
  for (const char* no : {"", "1,5", " 1.5", "1.5 ", "1.5x", "x", "+", "+-1", "1e999"}) EXPECT_FALSE(parse_number(no, v)) << no;
}

// `histeq quality`'s configurations, as the hand-written parser had them.
TEST(QualityConfigs, PresetsAndKeys) {
  const eq::Quality d = eq::default_quality(), p = eq::plain_quality();
  EXPECT_EQ(*app::quality_config("plain"), p);
  EXPECT_EQ(*app::quality_config("default"), d);
  eq::Quality want = d;
  want.mode = eq::Mode::clahe;
  EXPECT_EQ(*app::quality_config("clahe"), want);
  want = p;
  want.textbook = true;
  EXPECT_EQ(*app::quality_config("textbook"), want);
  want = p;
  want.clip_limit = d.clip_limit;
  EXPECT_EQ(*app::quality_config("clip"), want);
  want = p;
  want.temporal_s = d.temporal_s;
  want.scene_cut = d.scene_cut;
  EXPECT_EQ(*app::quality_config("temporal"), want);
  want = p;
  want.chroma = d.chroma;
  want.chroma_limit = d.chroma_limit;
  EXPECT_EQ(*app::quality_config("chroma"), want);
  auto q = app::quality_config("x:mode=clahe:tiles=4x2:clip=2:temporal=1:cut=0.5:chroma=keep:limit=2:range=full:textbook=1:denoise=3");
  ASSERT_TRUE(q.is_ok()) << q.status().to_string();
  want = d;
  want.mode = eq::Mode::clahe;
  want.tiles = {4, 2};
  want.clip_limit = 2;
  want.temporal_s = 1;
  want.scene_cut = 0.5;
  want.chroma = eq::ChromaMode::keep;
  want.chroma_limit = 2;
  want.range = eq::RangeMode::full;
  want.textbook = true;
  want.denoise = 3;
  EXPECT_EQ(*q, want);
  for (const char* bad : {"nonsense", "x:size=3", "x:clip", "x:clip=big", "x:clip=0.5", "x:textbook=yes", "x:range=tv"})
    EXPECT_FALSE(app::quality_config(bad).is_ok()) << bad;
  EXPECT_NE(app::quality_config("nonsense").status().message().find("plain, textbook, default, clahe, clip, temporal, chroma"),
            std::string::npos);
}

TEST(Planner, FusedOnlyForPlainSettingsWithTheFusedKernelOnTheGpuUnshifted) {
  const video::FrameFormat yuv8{64, 32, 8, 1, 1}, yuv10{64, 32, 10, 1, 1};
  video::FrameFormat p010 = yuv10;
  p010.layout = video::PlaneLayout::semi_planar;
  ASSERT_NE(p010.sample_shift(), 0);
  eq::Settings plain;
  plain.kernel = eq::kFusedKernel;
  plain.quality = eq::plain_quality();
  EXPECT_TRUE(eq::plan_frame(plain, Backend::gpu, yuv8).fused);
  EXPECT_TRUE(eq::plan_frame(plain, Backend::gpu, yuv10).fused);
  EXPECT_FALSE(eq::plan_frame(plain, Backend::gpu, p010).fused) << "samples in the high bits";
  EXPECT_FALSE(eq::plan_frame(plain, Backend::cpu, yuv8).fused);
  eq::Settings other = plain;
  other.kernel = "method2";
  EXPECT_FALSE(eq::plan_frame(other, Backend::gpu, yuv8).fused);
  other = plain;
  other.quality.textbook = true;  // levels only: still plain
  other.quality.range = eq::RangeMode::full;
  EXPECT_TRUE(eq::plan_frame(other, Backend::gpu, yuv8).fused);
  for (const auto& c : eq::controls()) {
    if (!c.has_plain()) continue;  // the controls that make settings not plain
    other = plain;
    if (c.type == eq::ControlType::grid) continue;  // the grid matters in clahe mode only
    if (c.needs.empty()) c.set(other.quality, c.type == eq::ControlType::number ? c.max : 1);
    else continue;
    // Fused only where the control's operation says it fits the fused launch (a filter before the
    // count, as the example gain of -DHISTEQ_EXAMPLE_OPERATION=ON); the standard controls all say no.
    bool fits = false;
    for (const auto& o : eq::operation_list())
      if (o.name == c.op) fits = o.make()->fusable(other);
    EXPECT_EQ(eq::plan_frame(other, Backend::gpu, yuv8).fused, fits) << c.name;
#ifndef HISTEQ_EXAMPLE_OPERATION
    EXPECT_FALSE(fits) << c.name;
#endif
  }
  other = plain;
  other.quality.denoise = 3;
  EXPECT_FALSE(eq::plan_frame(other, Backend::gpu, yuv8).fused) << "the denoiser";
  const eq::Plan fused{true}, steps{false}, folded{false, true};
  EXPECT_TRUE(fused.runs(eq::Part::filter) && fused.runs(eq::Part::fused) && !fused.runs(eq::Part::step) &&
              !fused.runs(eq::Part::curve));
  EXPECT_TRUE(steps.runs(eq::Part::filter) && !steps.runs(eq::Part::fused) && steps.runs(eq::Part::step) &&
              steps.runs(eq::Part::curve));
  EXPECT_TRUE(folded.runs(eq::Part::filter) && !folded.runs(eq::Part::fused) && folded.runs(eq::Part::step) &&
              !folded.runs(eq::Part::curve));
}

// The fold (planner.h): global mode with the temporal filter, the fused kernel, the GPU, samples in
// the low bits, at most kFoldMaxBins bins; never with plain settings (the fused path) or tiles.
TEST(Planner, TheCurveFoldsIntoTheTemporalStepOnlyWhereItCan) {
  const video::FrameFormat yuv8{64, 32, 8, 1, 1}, yuv9{64, 32, 9, 1, 1}, yuv10{64, 32, 10, 1, 1};
  video::FrameFormat p010 = yuv10;
  p010.layout = video::PlaneLayout::semi_planar;
  eq::Settings def;
  def.kernel = eq::kFusedKernel;
  def.quality = eq::default_quality();
  ASSERT_GT(def.quality.temporal_s, 0) << "the defaults filter through time";
  ASSERT_EQ(def.quality.mode, eq::Mode::global);
  EXPECT_TRUE(eq::plan_frame(def, Backend::gpu, yuv8).folded);
  EXPECT_TRUE(eq::plan_frame(def, Backend::gpu, yuv9).folded);
  EXPECT_FALSE(eq::plan_frame(def, Backend::gpu, yuv10).folded) << "1,024 bins: more than the fused block's threads";
  EXPECT_FALSE(eq::plan_frame(def, Backend::gpu, p010).folded) << "samples in the high bits";
  EXPECT_FALSE(eq::plan_frame(def, Backend::cpu, yuv8).folded);
  eq::Settings other = def;
  other.kernel = "cub";
  EXPECT_FALSE(eq::plan_frame(other, Backend::gpu, yuv8).folded) << "another kernel counts its own way";
  other = def;
  other.quality.mode = eq::Mode::clahe;
  EXPECT_FALSE(eq::plan_frame(other, Backend::gpu, yuv8).folded) << "tiles";
  other = def;
  other.quality.temporal_s = 0;
  EXPECT_FALSE(eq::plan_frame(other, Backend::gpu, yuv8).folded) << "no temporal step to fold into";
  other.kernel = eq::kFusedKernel;
  other.quality = eq::plain_quality();
  EXPECT_TRUE(eq::plan_frame(other, Backend::gpu, yuv8).fused);
  EXPECT_FALSE(eq::plan_frame(other, Backend::gpu, yuv8).folded);
  other.quality.temporal_s = 0.5;  // temporal alone
  EXPECT_TRUE(eq::plan_frame(other, Backend::gpu, yuv8).folded);
}

// An operation registered at run time, through the same API as operations.def's: a luma gain and
// offset before the histogram (the example of docs/architecture.md, "Adding an operation", CPU
// only). Its controls must reach the command line, `histeq quality`'s keys, the overlay and the
// docs' table, and setting them must change the frames.
class TestGainOp final : public eq::Operation {
 public:
  video::StageId stage() const override { return video::stage_id("test-gain"); }
  eq::Part part() const override { return eq::Part::filter; }
  bool active(const eq::FrameContext& ctx) const override {
    return ctx.settings->quality.param("test-gain", 1) != 1 || ctx.settings->quality.param("test-offset", 0) != 0;
  }
  Status run(eq::FrameContext& ctx, cudaStream_t) override {
    if (ctx.luma.bytes_per_sample != 1) return HISTEQ_ERROR(Code::unsupported, "8-bit only");
    const long gain = std::lround(ctx.settings->quality.param("test-gain", 1) * 256);
    const long offset = std::lround(ctx.settings->quality.param("test-offset", 0));
    for (int y = 0; y < ctx.luma.height; ++y) {
      auto* row = static_cast<uint8_t*>(const_cast<void*>(ctx.luma.data)) + static_cast<size_t>(y) * ctx.luma.pitch;
      for (int x = 0; x < ctx.luma.width; ++x) row[x] = static_cast<uint8_t>(std::clamp((row[x] * gain + 128) / 256 + offset, 0L, 255L));
    }
    return Status::ok();
  }
};

class RegisteredOperation : public ::testing::Test {
 protected:
  void SetUp() override {
    eq::Control gain = eq::param_control("test-gain", 1, 0.25, 4);
    gain.what = "test gain";
    gain.help = "multiply the luma";
    gain.doc = "the luma multiplied by this";
    eq::Control offset = eq::param_control("test-offset", 0, -64, 64);
    offset.what = "test offset";
    offset.help = "add to the luma";
    offset.doc = "added to the luma";
    ASSERT_TRUE(eq::register_operation({"test-gain", {gain, offset}, [] { return std::make_unique<TestGainOp>(); }}).is_ok());
  }
  void TearDown() override { eq::remove_operation("test-gain"); }
};

TEST_F(RegisteredOperation, ReachesEveryFrontEnd) {
  EXPECT_FALSE(eq::register_operation({"test-gain", {}, [] { return std::make_unique<TestGainOp>(); }}).is_ok()) << "taken";
  // The command line and its defaults.
  auto q = parse_quality({"--test-gain", "1.5", "--test-offset", "-10"});
  ASSERT_TRUE(q.is_ok()) << q.status().to_string();
  EXPECT_EQ(q->param("test-gain", 1), 1.5);
  EXPECT_EQ(q->param("test-offset", 0), -10);
  EXPECT_EQ(*parse_quality({}), eq::default_quality()) << "at their defaults the params are not stored";
  auto bad = parse_quality({"--test-gain", "9"});
  ASSERT_FALSE(bad.is_ok());
  EXPECT_NE(bad.status().message().find("test gain must be 0.25..4"), std::string::npos) << bad.status().message();
  // `histeq quality`'s keys.
  auto c = app::quality_config("g:test-gain=2:test-offset=5");
  ASSERT_TRUE(c.is_ok()) << c.status().to_string();
  EXPECT_EQ(c->param("test-gain", 1), 2);
  EXPECT_NE(eq::describe(*c).find("test-gain 2"), std::string::npos) << eq::describe(*c);
  // The overlay's widgets and the docs' table.
  int widgets = 0;
  for (const auto& w : app::player::overlay_controls()) widgets += w.name == "test-gain" || w.name == "test-offset";
  EXPECT_EQ(widgets, 2);
  const std::string md = app::controls_markdown();
  EXPECT_NE(md.find("| `--test-gain` | `test-gain` | test-gain | 0.25..4 | 1 |"), std::string::npos) << md;
  EXPECT_NE(md.find("| `--test-offset` |"), std::string::npos);
  const std::vector<eq::Control> table = eq::controls();
  EXPECT_EQ(eq::find_control(table, "test_offset")->python_name(), "test_offset");
}

TEST_F(RegisteredOperation, ItsControlsChangeTheFrames) {
  const video::FrameFormat fmt{96, 64, 8, 1, 1};
  const std::vector<eq::Control> table = eq::controls();  // with the registered operation's controls
  auto run = [&](double gain, double offset, const std::string& kernel) {
    eq::Quality q = eq::plain_quality();
    eq::find_control(table, "test-gain")->set(q, gain);
    eq::find_control(table, "test-offset")->set(q, offset);
    pipeline::EqualizerOptions o = test::cpu_options(q);
    o.strength = 0;  // the equalization blended away: the frames show the operation itself
    if (!kernel.empty()) o.kernel = kernel;
    auto r = test::drive(o, fmt, 2, test::dim_scene(fmt));
    EXPECT_TRUE(r.is_ok()) << r.status().to_string();
    return r.is_ok() ? r->frames : std::vector<test::FrameCopy>{};
  };
  const auto off = run(1, 0, ""), gained = run(2, 0, ""), offset = run(1, 20, "");
  ASSERT_EQ(off.size(), 2u);
  EXPECT_NE(gained, off);
  EXPECT_NE(offset, off);
  // The offset on the input's luma, bit for bit (strength 0 leaves the operation's picture).
  const auto& a = off[0].planes[0];
  const auto& b = offset[0].planes[0];
  for (size_t i = 0; i < a.size(); ++i) ASSERT_EQ(b[i], std::min(255, a[i] + 20)) << i;
}

#ifdef HISTEQ_EXAMPLE_OPERATION
// The example operation of docs/architecture.md (core/equalize/ops/gain/gain.cu), in a build with
// -DHISTEQ_EXAMPLE_OPERATION=ON: one file and one line of operations.def, and its controls are on
// the command line, in `histeq quality`'s keys, the overlay and the docs' table, and work.
TEST(ExampleOperation, ItsControlsAreEverywhereAndChangeTheFrames) {
  auto q = parse_quality({"--luma-gain", "1.5", "--luma-offset", "4"});
  ASSERT_TRUE(q.is_ok()) << q.status().to_string();
  EXPECT_EQ(q->param("luma-gain", 1), 1.5);
  EXPECT_EQ(q->param("luma-offset", 0), 4);
  auto c = app::quality_config("g:gain=2:offset=-3");
  ASSERT_TRUE(c.is_ok()) << c.status().to_string();
  EXPECT_EQ(c->param("luma-offset", 0), -3);
  int widgets = 0;
  for (const auto& w : app::player::overlay_controls()) widgets += w.op == "gain";
  EXPECT_EQ(widgets, 2);
  EXPECT_NE(app::controls_markdown().find("| `--luma-gain` | `gain` | gain |"), std::string::npos);
  const video::FrameFormat fmt{96, 64, 8, 1, 1};
  eq::Quality gained = eq::default_quality();
  gained.params["luma-gain"] = 2;
  auto a = test::drive(test::cpu_options(eq::default_quality()), fmt, 2, test::dim_scene(fmt));
  auto b = test::drive(test::cpu_options(gained), fmt, 2, test::dim_scene(fmt));
  ASSERT_TRUE(a.is_ok() && b.is_ok());
  EXPECT_NE(a->frames, b->frames);
}
#endif

}  // namespace
}  // namespace histeq
