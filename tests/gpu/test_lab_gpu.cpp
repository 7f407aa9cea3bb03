// The lab (lab/) on a GPU: the paths `histeq bench`, `bench --equalize` and `quality --bench`
// take there, driven without the CLI. Each test skips itself without a CUDA device.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "lab/engine.h"
#include "lab/equalize.h"
#include "lab/frame_cost.h"
#include "lab/matrix.h"
#include "core/cuda/device.h"

namespace histeq::lab {
namespace {

#define SKIP_WITHOUT_GPU() \
  if (!cuda::have_device()) GTEST_SKIP() << "no CUDA device"

TEST(LabGpu, MatrixMeasuresTheCeilingAndTheKernels) {
  SKIP_WITHOUT_GPU();
  auto eng = Engine::create({10, 2, 0.01, false});
  ASSERT_TRUE(eng) << eng.status().to_string();
  ASSERT_TRUE((*eng)->gpu());
  auto kernels = select_kernels({"method2_tuned", "cub"}, 256, false, {0}, true);
  ASSERT_TRUE(kernels) << kernels.status().to_string();
  MatrixPlan plan;
  plan.sizes = {*parse_size("1921x1081")};
  plan.padded = {false, true};
  plan.inputs = {*parse_input("natural")};
  const MatrixResult res = run_matrix(**eng, plan, *kernels);
  ASSERT_EQ(res.rows.size(), 6u);  // per pitch: read_ceiling, method2_tuned, cub
  for (const Row& r : res.rows) {
    EXPECT_TRUE(r.m.ok()) << r.kernel << ": " << r.m.status;
    EXPECT_EQ(r.backend, "gpu");
    EXPECT_EQ(r.m.t.runs, 10);
    EXPECT_GT(r.m.gbps, 0);
  }
  EXPECT_EQ(res.rows[0].kernel, "read_ceiling");
  EXPECT_DOUBLE_EQ(res.rows[2].x_cub, 1.0);
  EXPECT_GT(res.rows[1].x_ceiling, 0);
}

TEST(LabGpu, EqualizeBenchChecksTheFusedPathThenTimesIt) {
  SKIP_WITHOUT_GPU();
  auto eng = Engine::create({10, 2, 0.01, false});
  ASSERT_TRUE(eng) << eng.status().to_string();
  auto bench = EqualizeBench::create(**eng);
  ASSERT_TRUE(bench) << bench.status().to_string();
  EqualizePlan plan;
  plan.sizes = {*parse_size("1280x720")};
  plan.depths = {8, 10};
  plan.inputs = {*parse_input("natural")};
  int seen = 0;
  const std::vector<Row> rows = (*bench)->run(plan, [&](const Row&) { ++seen; });
  ASSERT_EQ(rows.size(), 8u);
  EXPECT_EQ(seen, 8);
  const char* kernels[] = {"read_ceiling", "fused", "method2_tuned+lut+apply", "cub+lut+apply"};
  for (size_t i = 0; i < rows.size(); ++i) {
    EXPECT_EQ(rows[i].kernel, kernels[i % 4]);
    EXPECT_EQ(rows[i].bits, i < 4 ? 8 : 10);
    EXPECT_TRUE(rows[i].m.ok()) << rows[i].kernel << ": " << rows[i].m.status;  // the fused frame matched byte for byte
  }
  EXPECT_DOUBLE_EQ(rows[3].x_cub, 1.0);
  EXPECT_GT((*bench)->last_launch().blocks, 0);
}

TEST(LabGpu, EqualizeBenchNeedsAGpuEngine) {
  // Without a device the engine is a CPU one and the bench refuses it; with one it is accepted.
  auto eng = Engine::create({10, 2, 0.01, false});
  ASSERT_TRUE(eng);
  auto bench = EqualizeBench::create(**eng);
  EXPECT_EQ(static_cast<bool>(bench), (*eng)->gpu());
  if (!bench) {
    EXPECT_EQ(bench.status().code(), Code::no_device);
  }
}

TEST(LabGpu, FrameCostTimesEveryModeOnTheGpu) {
  SKIP_WITHOUT_GPU();
  auto bench = FrameCostBench::create(true, "method2_tuned", 10, {});
  ASSERT_TRUE(bench) << bench.status().to_string();
  ASSERT_TRUE((*bench)->run_size(*parse_size("1280x720")));
  const auto& res = (*bench)->results();
  ASSERT_EQ(res.size(), 6u);
  for (const FrameCost& r : res) {
    EXPECT_EQ(r.total.runs, 10) << r.name;
    EXPECT_GT(r.total.median_us, 0) << r.name;
    EXPECT_FALSE(r.stages.empty()) << r.name;
  }
  EXPECT_DOUBLE_EQ(res[0].x_plain, 1.0);
  // The defaults fold the histogram, the LUT and the apply into the temporal step (planner.h);
  // "global+steps" keeps them apart.
  auto stages = [](const FrameCost& r) {
    std::vector<std::string> v;
    for (const auto& st : r.stages) v.push_back(st.first);
    return v;
  };
  ASSERT_EQ(res[1].name, "global+all");
  ASSERT_EQ(res[2].name, "global+steps");
  EXPECT_EQ(stages(res[1]), (std::vector<std::string>{"temporal"}));
  EXPECT_EQ(stages(res[2]), (std::vector<std::string>{"histogram", "lut", "temporal", "apply"}));
}

}  // namespace
}  // namespace histeq::lab
