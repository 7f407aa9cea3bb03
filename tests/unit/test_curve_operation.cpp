// A curve operation added with one file and one line (tests/common/gamma_operation.cu, the
// register_operation line below; docs/architecture.md, "Adding a curve operation"), on the CPU:
// it changes the frames in every mode, at gamma 1 the frames are those without it, and the planner
// keeps the GPU's fused path and fold off while it is active (it says neither fusable() nor
// foldable()), so that it is never skipped there. The GPU's frames: tests/gpu/test_curve_operation_gpu.cpp.
#include <gtest/gtest.h>

#include <algorithm>

#include "core/equalize/controls.h"
#include "core/equalize/planner.h"
#include "tests/common/gtest_status.h"
#include "tests/common/quality_cases.h"

namespace histeq::test {

eq::OperationInfo gamma_operation();  // tests/common/gamma_operation.cu

namespace {

class CurveOperation : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_OK(eq::register_operation(gamma_operation(), "apply")); }
  void TearDown() override { eq::remove_operation("gamma"); }
};

eq::Quality with_gamma(eq::Quality q, double gamma) {
  const std::vector<eq::Control> table = eq::controls();
  const eq::Control* c = eq::find_control(table, "gamma");
  EXPECT_NE(c, nullptr) << "the gamma control is registered";
  if (c != nullptr) c->set(q, gamma);
  return q;
}

std::vector<FrameCopy> cpu_frames(const eq::Quality& q, const video::FrameFormat& fmt) {
  auto r = drive(cpu_options(q), fmt, 6, dim_scene(fmt, 3));
  EXPECT_TRUE(r.is_ok()) << r.status().to_string();
  return r.is_ok() ? r->frames : std::vector<FrameCopy>{};
}

eq::Quality clahe_quality() {
  eq::Quality q = eq::default_quality();
  q.mode = eq::Mode::clahe;
  return q;
}

TEST_F(CurveOperation, RunsBetweenTheCurveAndTheApply) {
  const auto& list = eq::operation_list();
  std::vector<std::string> names;
  for (const auto& o : list) names.push_back(o.name);
  const auto at = std::find(names.begin(), names.end(), "gamma");
  ASSERT_NE(at, names.end());
  ASSERT_NE(at + 1, names.end());
  EXPECT_EQ(*(at + 1), "apply");
  EXPECT_EQ(*(at - 1), "temporal");
  EXPECT_FALSE(eq::register_operation(gamma_operation(), "apply").is_ok()) << "taken";
  eq::OperationInfo other = gamma_operation();
  other.name = "gamma-2";
  other.controls.clear();
  EXPECT_FALSE(eq::register_operation(other, "no-such-operation").is_ok());
}

TEST_F(CurveOperation, ChangesTheCpuFramesInEveryModeAndNothingAtOne) {
  for (const auto& fmt : {video::FrameFormat{96, 64, 8, 1, 1}, video::FrameFormat{96, 64, 10, 1, 1}}) {
    for (const eq::Quality& q : {eq::plain_quality(), eq::default_quality(), clahe_quality()}) {
      const auto at_one = cpu_frames(with_gamma(q, 1), fmt);
      const auto bright = cpu_frames(with_gamma(q, 1.6), fmt);
      eq::remove_operation("gamma");
      const auto without = cpu_frames(q, fmt);
      ASSERT_OK(eq::register_operation(gamma_operation(), "apply"));
      ASSERT_EQ(at_one.size(), 6u);
      ASSERT_EQ(bright.size(), 6u);
      for (size_t i = 0; i < at_one.size(); ++i) {
        EXPECT_TRUE(at_one[i] == without[i]) << eq::describe(q) << ", frame " << i << ": gamma 1 changed the frame";
        EXPECT_FALSE(bright[i] == without[i]) << eq::describe(q) << ", frame " << i << ": gamma 1.6 changed nothing";
      }
    }
  }
}

// The planner asks every active operation (fusable(), foldable()): with the gamma on, the fused
// path and the fold are off where they would be on without it. Without that question the fused
// launch would equalize the frame and the gamma would sit out (Part::step), silently.
TEST_F(CurveOperation, TurnsTheFusedPathAndTheFoldOff) {
  const video::FrameFormat yuv8{96, 64, 8, 1, 1};
  eq::Settings plain;
  plain.kernel = eq::kFusedKernel;
  plain.quality = eq::plain_quality();
  eq::Settings def = plain;
  def.quality = eq::default_quality();
  EXPECT_TRUE(eq::plan_frame(plain, Backend::gpu, yuv8).fused);
  EXPECT_TRUE(eq::plan_frame(def, Backend::gpu, yuv8).folded);
  plain.quality = with_gamma(plain.quality, 1);
  def.quality = with_gamma(def.quality, 1);
  EXPECT_TRUE(eq::plan_frame(plain, Backend::gpu, yuv8).fused) << "gamma 1: inactive, not asked";
  EXPECT_TRUE(eq::plan_frame(def, Backend::gpu, yuv8).folded);
  plain.quality = with_gamma(plain.quality, 1.6);
  def.quality = with_gamma(def.quality, 1.6);
  const eq::Plan p = eq::plan_frame(plain, Backend::gpu, yuv8), d = eq::plan_frame(def, Backend::gpu, yuv8);
  EXPECT_FALSE(p.fused) << "an operation that is not fusable keeps the fused path off";
  EXPECT_FALSE(p.folded);
  EXPECT_FALSE(d.fused);
  EXPECT_FALSE(d.folded) << "an operation that is not foldable keeps the fold off";
  EXPECT_TRUE(d.runs(eq::Part::step) && d.runs(eq::Part::curve)) << "the steps, the gamma among them";
}

}  // namespace
}  // namespace histeq::test
