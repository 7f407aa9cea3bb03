// The example operation of docs/architecture.md, "Adding an operation" (core/equalize/examples/
// gain.cu, built with -DHISTEQ_EXAMPLE_OPERATION=ON): its GPU frames must be the CPU's, bit for
// bit, on the fused path (plain settings, method2_tuned: the filter in front of the one launch) and
// on the steps, 8-bit and P010, with its controls changed live. In the default build the tests
// are not compiled in (the operation is not there).
#include <gtest/gtest.h>

#include "core/equalize/controls.h"
#include "core/equalize/operation.h"
#include "tests/common/gtest_status.h"
#include "tests/common/quality_cases.h"

#ifdef HISTEQ_EXAMPLE_OPERATION
namespace histeq::test {
namespace {

void set(eq::Quality& q, const char* control, double v) {
  const std::vector<eq::Control> table = eq::controls();
  eq::find_control(table, control)->set(q, v);
}

TEST(GpuExampleOperation, GainAndOffsetMatchCpuOnBothPathsLive) {
  REQUIRE_GPU();
  const video::FrameFormat yuv8{1280, 720, 8, 1, 1}, p010{1280, 720, 10, 1, 1, video::PlaneLayout::semi_planar};
  for (const auto& fmt : {yuv8, p010}) {
    for (const eq::Quality& start : {eq::plain_quality(), eq::default_quality()}) {
      auto schedule = [start](int n, pipeline::Equalizer& e) {
        eq::Quality q = start;
        if (n == 3) set(q, "luma-gain", 1.5);
        else if (n == 6) set(q, "luma-offset", -10);
        else if (n == 9) set(q, "luma-gain", 0.5), set(q, "luma-offset", 30);
        else return;
        EXPECT_TRUE(e.set_quality(q).is_ok());
      };
      pipeline::EqualizerOptions cpu;
      cpu.cpu = true;
      cpu.quality = start;
      auto want = drive(cpu, fmt, 12, dim_scene(fmt), schedule);
      pipeline::EqualizerOptions gpu = cpu;
      gpu.cpu = false;
      gpu.kernel = eq::kFusedKernel;
      gpu.frames_in_flight = 3;
      auto got = drive(gpu, fmt, 12, dim_scene(fmt), schedule);
      ASSERT_TRUE(want.is_ok() && got.is_ok());
      ASSERT_EQ(got->frames.size(), want->frames.size());
      for (size_t i = 0; i < want->frames.size(); ++i)
        ASSERT_TRUE(got->frames[i] == want->frames[i]) << fmt.bit_depth << "-bit " << eq::describe(start) << ": frame " << i;
      auto unchanged = drive(cpu, fmt, 12, dim_scene(fmt));
      ASSERT_TRUE(unchanged.is_ok());
      EXPECT_TRUE(want->frames[2] == unchanged->frames[2]);
      EXPECT_FALSE(want->frames[4] == unchanged->frames[4]) << "the gain changed nothing";
    }
  }
}

}  // namespace
}  // namespace histeq::test
#endif
