// The control specs (core/equalize/controls.h): what derives from them (Quality's ==, plain(),
// describe(), the defaults and plain values), old names that warn, and the player's hints table.
#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "app/common/equalizer_options.h"
#include "app/player/hints.h"
#include "core/equalize/equalizer_controls.h"
#include "core/equalize/controls.h"
#include "core/equalize/operation.h"
#include "core/equalize/quality.h"

using namespace histeq;

namespace {

// An operation of a test with one number control, kept in params.
class NoOp final : public eq::Operation {
 public:
  video::StageId stage() const override { return video::stage_id("spec-test"); }
  Status run(eq::FrameContext&, cudaStream_t) override { return Status::ok(); }
};

class SpecOperation : public ::testing::Test {
 protected:
  void SetUp() override {
    eq::Control lift = eq::param_spec("spec-lift", {0, 8, eq::kZeroOff}, 0, std::nullopt, {"lift", "spec lift"}, "lift the blacks",
                                      "the blacks lifted")
                           .alias("spec-raise");
    ASSERT_TRUE(eq::register_operation({"spec-test", {lift}, [] { return std::make_unique<NoOp>(); }}).is_ok());
  }
  void TearDown() override { eq::remove_operation("spec-test"); }
};

}  // namespace

TEST(ControlSpecs, DefaultsAndPlainValuesComeFromTheSpecs) {
  const eq::Quality d = eq::default_quality(), p = eq::plain_quality();
  for (const auto& c : eq::controls()) {
    if (c.type == eq::ControlType::grid) {
      EXPECT_EQ(c.get_grid(d), (hist::TileGrid{static_cast<int>(c.fallback), static_cast<int>(c.fallback)})) << c.name;
      continue;
    }
    EXPECT_EQ(c.get(d), c.fallback) << c.name;
    if (c.plain_value) EXPECT_EQ(c.get(p), *c.plain_value) << c.name;
    else EXPECT_EQ(c.get(p), c.get(eq::Quality{})) << c.name << ": no plain value: Quality{}'s";
  }
  // The options structs' member initializers are the plain values.
  EXPECT_TRUE(eq::Quality{} == p);
  // The measured defaults of docs/quality.md, as the specs say them.
  EXPECT_EQ(d.clip_limit, 1.1);
  EXPECT_EQ(d.temporal_s, 0.35);
  EXPECT_EQ(d.chroma, eq::ChromaMode::follow);
  EXPECT_EQ(d.mode, eq::Mode::global);
  EXPECT_EQ(d.denoise, 0);
}

TEST(ControlSpecs, EqualityIsEveryControlsValue) {
  const eq::Quality base = eq::default_quality();
  for (const auto& c : eq::controls()) {
    eq::Quality other = base;
    if (c.type == eq::ControlType::grid) c.set_grid(other, {3, 5});
    else c.set(other, c.get(base) == c.max ? c.min : c.max);
    EXPECT_FALSE(other == base) << c.name;
    EXPECT_TRUE(other != base) << c.name;
    eq::copy_control(c, base, other);
    EXPECT_TRUE(other == base) << c.name;
  }
}

TEST(ControlSpecs, PlainIsTheSpecsPlainValues) {
  EXPECT_TRUE(eq::plain_quality().plain());
  EXPECT_FALSE(eq::default_quality().plain());
  eq::Quality q = eq::default_quality();
  q.range = eq::RangeMode::full;
  q.textbook = true;
  eq::make_plain(q);
  EXPECT_TRUE(q.plain());
  EXPECT_EQ(q.range, eq::RangeMode::full) << "plain keeps the levels (no plain value)";
  EXPECT_TRUE(q.textbook);
  for (const auto& c : eq::controls()) {
    if (!c.plain_value || !c.needs.empty() || c.type == eq::ControlType::grid) continue;
    eq::Quality off = eq::plain_quality();
    c.set(off, c.type == eq::ControlType::number ? c.max : 1);
    EXPECT_FALSE(off.plain()) << c.name;
  }
  // What applies only with another control does not make settings not plain (tiles in global mode).
  eq::Quality tiles = eq::plain_quality();
  tiles.tiles = {4, 4};
  tiles.scene_cut = 0.9;
  EXPECT_TRUE(tiles.plain());
}

TEST(ControlSpecs, DescribeIsTheSpecsWords) {
  EXPECT_EQ(eq::describe(eq::plain_quality()), "plain");
  EXPECT_EQ(eq::describe(eq::default_quality()), "global, clip 1.1, temporal 0.35 s (cut 0.3), chroma auto (limit 1.2)");
  eq::Quality q = eq::plain_quality();
  q.mode = eq::Mode::clahe;
  q.tiles = {4, 2};
  q.denoise = 3;
  q.range = eq::RangeMode::full;
  q.textbook = true;
  EXPECT_EQ(eq::describe(q), "clahe 4x2, no clip, no temporal, chroma kept, denoise 3, range full, textbook levels");
  eq::Quality levels = eq::plain_quality();
  levels.range = eq::RangeMode::limited;
  EXPECT_EQ(eq::describe(levels), "plain, range limited");
}

TEST_F(SpecOperation, AnotherOperationsValuesCountInEqualityPlainAndDescribe) {
  const std::vector<eq::Control> table = eq::controls();
  const eq::Control* lift = eq::find_control(table, "spec-lift");
  ASSERT_NE(lift, nullptr);
  eq::Quality q = eq::plain_quality();
  lift->set(q, 2);
  EXPECT_FALSE(q == eq::plain_quality());
  EXPECT_FALSE(q.plain()) << "a curve operation's value turns the fused path off";
  EXPECT_NE(eq::describe(q).find("spec-lift 2"), std::string::npos) << eq::describe(q);
  eq::make_plain(q);
  EXPECT_TRUE(q == eq::plain_quality());
  EXPECT_EQ(eq::find_control(table, "lift"), lift) << "its configuration key";
}

TEST_F(SpecOperation, AnOldNameIsFoundAndWarns) {
  const std::vector<eq::Control> table = eq::controls();
  const eq::Control* c = eq::find_control(table, "spec-raise");
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(c->name, "spec-lift");
  EXPECT_EQ(eq::find_control(table, "spec_raise"), c) << "the Python spelling of the old name";
  EXPECT_NE(eq::alias_warning(*c, "spec-raise").find("use 'spec-lift'"), std::string::npos) << eq::alias_warning(*c, "spec-raise");
  EXPECT_EQ(eq::alias_warning(*c, "spec-lift"), "") << "the name itself does not warn";
  EXPECT_EQ(eq::alias_warning(*c, "lift"), "");
  // An old name is taken like a name.
  eq::Control other = eq::param_spec("spec-raise", {0, 1}, 0, std::nullopt, {}, "", "");
  EXPECT_FALSE(eq::register_operation({"spec-other", {other}, [] { return std::make_unique<NoOp>(); }}).is_ok());
}

TEST(PlayerHints, EveryRowNamesAControlAndEveryLiveControlHasAWidget) {
  const std::vector<eq::Control> table = eq::controls();
  EXPECT_TRUE(app::player::check_hints(app::player::control_hints(), table).is_ok())
      << app::player::check_hints(app::player::control_hints(), table).to_string();
  std::set<std::string> keys;
  for (const auto& c : table) {
    if (!c.live) continue;
    const app::player::ControlHints h = app::player::hints_of(c);
    EXPECT_EQ(h.control, c.name);
    if (!h.key.empty()) EXPECT_TRUE(keys.insert(h.key).second) << "key " << h.key << " twice";
    if (!h.key.empty()) EXPECT_FALSE(h.key_help.empty()) << c.name;
    EXPECT_GE(h.step, 0) << c.name;
    if (c.type == eq::ControlType::number && h.slider_max > 0) EXPECT_LE(h.slider_max, c.max) << c.name << ": the slider ends in the range";
    if (c.type == eq::ControlType::number && h.step > 0) EXPECT_LE(h.step, c.max - (c.zero_off ? 0 : c.min)) << c.name;
    EXPECT_TRUE(c.needs.empty() || eq::find_control(table, c.needs) != nullptr) << c.name;
  }
  EXPECT_EQ(app::player::hints_of(*eq::find_control(table, "clip-limit")).key, "C");
}

TEST(PlayerHints, AControlWithoutARowGetsADefaultWidget) {
  eq::Control c = eq::param_spec("spec-nohints", {0, 2}, 1, std::nullopt, {"", "lift amount"}, "", "");
  const app::player::ControlHints h = app::player::hints_of(c);
  EXPECT_EQ(h.label, "Lift amount") << "its own row";
  EXPECT_EQ(h.key, "");
  EXPECT_EQ(h.step, 0);
}

TEST(PlayerHints, ARowNamingAnUnknownControlFails) {
  std::vector<app::player::ControlHints> hints = app::player::control_hints();
  hints.push_back({"no-such-control", "Nothing"});
  const Status s = app::player::check_hints(hints, eq::controls());
  ASSERT_FALSE(s.is_ok());
  EXPECT_NE(s.message().find("no-such-control"), std::string::npos) << s.message();
  hints = app::player::control_hints();
  hints.push_back(hints.front());
  EXPECT_FALSE(app::player::check_hints(hints, eq::controls()).is_ok()) << "two rows for one control";
}

// The command line's --kernel, --strength, --backend (--cpu its shorthand) and --device come from
// the equalizer's own specs.
TEST(EqualizerOptions, TheOwnControlsOptionsComeFromTheirSpecs) {
  auto parse = [](std::vector<std::string> args, pipeline::EqualizerOptions& eq) {
    CLI::App cmd("test");
    app::add_equalizer_options(&cmd, eq, {"kernel", "strength", "backend", "device"});
    for (const auto& c : eq::equalizer_controls()) EXPECT_NE(cmd.get_option_no_throw("--" + c.name), nullptr) << c.name;
    std::reverse(args.begin(), args.end());
    cmd.parse(args);
  };
  pipeline::EqualizerOptions eq;
  parse({"--backend", "cpu", "-k", "cpu_parallel", "--strength", "0.5", "--device", "1"}, eq);
  EXPECT_TRUE(eq.cpu);
  EXPECT_EQ(eq.kernel, "cpu_parallel");
  EXPECT_EQ(eq.strength, 0.5);
  EXPECT_EQ(eq.device, 1);
  pipeline::EqualizerOptions shorthand;
  parse({"--cpu", "--kernel", "auto"}, shorthand);
  EXPECT_TRUE(shorthand.cpu) << "--cpu is --backend cpu";
  EXPECT_EQ(shorthand.kernel, "") << "auto: the backend's default";
  pipeline::EqualizerOptions automatic;
  parse({"--backend", "auto"}, automatic);
  EXPECT_FALSE(automatic.cpu);
  pipeline::EqualizerOptions both;
  EXPECT_THROW(parse({"--cpu", "--backend", "cpu"}, both), CLI::ParseError);
  pipeline::EqualizerOptions bad;
  EXPECT_THROW(parse({"--backend", "tpu"}, bad), CLI::ParseError);
}
