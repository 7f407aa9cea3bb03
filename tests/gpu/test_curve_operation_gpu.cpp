// The curve operation of tests/common/gamma_operation.cu (docs/architecture.md, "Adding a curve
// operation") on the GPU's three paths: the steps (a kernel that does not fuse), settings that take
// the fused path without it (plain, method2_tuned) and settings that fold without it (the defaults,
// method2_tuned, 8-bit). On each the gamma must change the frames, the GPU's frames must be the
// CPU's bit for bit (so the gamma was not skipped by a fused launch or overridden by the fold),
// and at gamma 1 the frames must be those without the operation. The gamma changes live (1, then
// 1.6, then 0.7), so the plan switches path between frames. The CPU's part: tests/unit/test_curve_operation.cpp.
#include <gtest/gtest.h>

#include "core/equalize/controls.h"
#include "core/equalize/planner.h"
#include "tests/common/gtest_status.h"
#include "tests/common/quality_cases.h"

namespace histeq::test {

eq::OperationInfo gamma_operation();  // tests/common/gamma_operation.cu

namespace {

class GpuCurveOperation : public ::testing::Test {
 protected:
  void SetUp() override {
    REQUIRE_GPU();
    ASSERT_OK(eq::register_operation(gamma_operation(), "apply"));
  }
  void TearDown() override { eq::remove_operation("gamma"); }

  // Frames 0-2 at gamma 1, 3-6 at 1.6, 7-9 at 0.7 (live), or all without the control's change.
  static std::vector<FrameCopy> frames(pipeline::EqualizerOptions o, const video::FrameFormat& fmt, bool change) {
    auto schedule = [q0 = o.quality, change](int n, pipeline::Equalizer& e) {
      if (!change || (n != 3 && n != 7)) return;
      eq::Quality q = q0;
      const std::vector<eq::Control> table = eq::controls();
      eq::find_control(table, "gamma")->set(q, n == 3 ? 1.6 : 0.7);
      EXPECT_TRUE(e.set_quality(q).is_ok());
    };
    auto r = drive(o, fmt, 10, dim_scene(fmt, 5), schedule);
    EXPECT_TRUE(r.is_ok()) << r.status().to_string();
    return r.is_ok() ? r->frames : std::vector<FrameCopy>{};
  }

  // The gamma on settings `q` with `kernel` on the GPU: the plan without it is `path`.
  void check(const eq::Quality& q, const std::string& kernel, const char* path) {
    const video::FrameFormat fmt{320, 180, 8, 1, 1};
    eq::Settings s;
    s.kernel = kernel;
    s.quality = q;
    const eq::Plan plan = eq::plan_frame(s, Backend::gpu, fmt);
    const std::string p = path;
    if (p == "fused") {
      ASSERT_TRUE(plan.fused);
    } else if (p == "folded") {
      ASSERT_TRUE(plan.folded);
    } else {
      ASSERT_FALSE(plan.fused || plan.folded);
    }
    pipeline::EqualizerOptions cpu = cpu_options(q);
    const auto want = frames(cpu, fmt, true);
    pipeline::EqualizerOptions gpu = cpu;
    gpu.cpu = false;
    gpu.kernel = kernel;
    gpu.frames_in_flight = 3;
    const auto got = frames(gpu, fmt, true);
    eq::remove_operation("gamma");
    const auto without = frames(gpu, fmt, false);
    ASSERT_OK(eq::register_operation(gamma_operation(), "apply"));
    ASSERT_EQ(want.size(), 10u);
    ASSERT_EQ(got.size(), want.size());
    ASSERT_EQ(without.size(), want.size());
    for (size_t i = 0; i < want.size(); ++i) {
      EXPECT_TRUE(got[i] == want[i]) << path << ": frame " << i << ", GPU != CPU";
      if (i < 3) EXPECT_TRUE(got[i] == without[i]) << path << ": frame " << i << ", gamma 1 changed the frame";
      else EXPECT_FALSE(got[i] == without[i]) << path << ": frame " << i << ", the gamma changed nothing";
    }
  }
};

TEST_F(GpuCurveOperation, StepsMatchCpu) { check(eq::default_quality(), "method2", "steps"); }

TEST_F(GpuCurveOperation, FusedPathGivesWayAndMatchesCpu) { check(eq::plain_quality(), eq::kFusedKernel, "fused"); }

TEST_F(GpuCurveOperation, FoldGivesWayAndMatchesCpu) { check(eq::default_quality(), eq::kFusedKernel, "folded"); }

TEST_F(GpuCurveOperation, ClaheStepsMatchCpu) {
  eq::Quality q = eq::default_quality();
  q.mode = eq::Mode::clahe;
  check(q, eq::kFusedKernel, "steps");
}

}  // namespace
}  // namespace histeq::test
