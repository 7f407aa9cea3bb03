// The runner (core/equalize/runner.h), the one driver of the operation list: its rules for a frame
// (the plan in the context, the source copied before the first operation that cannot take it, gray
// frames kept gray, skipped() for the operations that sat out) and its timing hook, on the CPU.
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "core/cuda/device.h"
#include "core/equalize/runner.h"
#include "tests/common/gtest_status.h"

namespace histeq::test {
namespace {

// Records what the runner shows it: the luma at its turn, the plan, the chroma setting.
struct Seen {
  std::vector<uint8_t> luma;
  bool had_source = false;
  eq::Plan plan;
  eq::ChromaMode chroma = eq::ChromaMode::keep;
  int runs = 0, skips = 0;
};

class ProbeOp final : public eq::Operation {
 public:
  ProbeOp(Seen& seen, bool takes, bool active = true) : seen_(seen), takes_(takes), active_(active) {}
  video::StageId stage() const override { return video::stage_id("probe"); }
  eq::Part part() const override { return eq::Part::filter; }
  bool active(const eq::FrameContext&) const override { return active_; }
  bool takes_source(const eq::FrameContext&) const override { return takes_; }
  void skipped(const eq::FrameContext&) override { ++seen_.skips; }
  Status run(eq::FrameContext& ctx, cudaStream_t) override {
    ++seen_.runs;
    seen_.had_source = ctx.source.data != nullptr;
    seen_.plan = ctx.plan;
    seen_.chroma = ctx.settings->quality.chroma;
    const auto* p = static_cast<const uint8_t*>(ctx.luma.data);
    seen_.luma.assign(p, p + ctx.luma.width);
    return Status::ok();
  }

 private:
  Seen& seen_;
  bool takes_, active_;
};

class Turns final : public eq::TimingHook {
 public:
  Status started(size_t k, const eq::Operation&, cudaStream_t) override {
    log.push_back("start " + std::to_string(k));
    return Status::ok();
  }
  Status finished(size_t k, const eq::Operation&, bool ran, cudaStream_t) override {
    log.push_back((ran ? "ran " : "out ") + std::to_string(k));
    return Status::ok();
  }
  std::vector<std::string> log;
};

PlaneRef row_plane(std::vector<uint8_t>& v) {
  PlaneRef p;
  p.data = v.data();
  p.width = static_cast<int>(v.size());
  p.height = 1;
  p.pitch = v.size();
  p.bytes_per_sample = 1;
  p.bit_depth = 8;
  p.memory = MemoryKind::host;
  return p;
}

TEST(Runner, CopiesTheSourceBeforeTheFirstOperationThatCannotTakeItAndTellsTheHook) {
  Seen a, b, c;
  eq::Operations ops;
  ops.push_back(std::make_unique<ProbeOp>(a, true));
  ops.push_back(std::make_unique<ProbeOp>(b, true, false));  // inactive: skipped
  ops.push_back(std::make_unique<ProbeOp>(c, false));
  auto r = eq::Runner::create(Backend::cpu, 1, video::FrameFormat{8, 1, 8, 1, 1}, std::move(ops));
  ASSERT_OK(r.status());
  std::vector<uint8_t> src{1, 2, 3, 4, 5, 6, 7, 8}, luma(8, 0), u(4, 128), v(4, 128);
  eq::FrameInput in;
  in.luma = row_plane(luma);
  in.source = row_plane(src);
  in.chroma[0] = row_plane(u);
  in.chroma[1] = row_plane(v);
  eq::Settings s;
  s.quality = eq::plain_quality();
  Turns turns;
  ASSERT_OK(r->run(in, s, 0, nullptr, &turns));
  EXPECT_TRUE(a.had_source);
  EXPECT_EQ(a.luma, std::vector<uint8_t>(8, 0)) << "the first operation reads the source, the luma not yet copied";
  EXPECT_EQ(b.runs, 0);
  EXPECT_EQ(b.skips, 1);
  EXPECT_FALSE(c.had_source);
  EXPECT_EQ(c.luma, src) << "copied before the operation that cannot take it";
  EXPECT_EQ(turns.log, (std::vector<std::string>{"start 0", "ran 0", "out 1", "start 2", "ran 2"}));
  // Nobody takes it: copied at the end.
  Seen d;
  eq::Operations one;
  one.push_back(std::make_unique<ProbeOp>(d, true));
  auto r2 = eq::Runner::create(Backend::cpu, 1, video::FrameFormat{8, 1, 8, 1, 1}, std::move(one));
  ASSERT_OK(r2.status());
  std::fill(luma.begin(), luma.end(), 0);
  ASSERT_OK(r2->run(in, s, 0, nullptr));
  EXPECT_EQ(luma, src);
}

TEST(Runner, PlansOncePerFrameAndKeepsTheChromaOfAFrameWithoutChromaPlanes) {
  Seen a;
  eq::Operations ops;
  ops.push_back(std::make_unique<ProbeOp>(a, false));
  const video::FrameFormat fmt{8, 1, 8, 1, 1};
  auto r = eq::Runner::create(Backend::cpu, 1, fmt, std::move(ops));
  ASSERT_OK(r.status());
  std::vector<uint8_t> luma(8, 10), u(4, 128), v(4, 128);
  eq::FrameInput in;
  in.luma = row_plane(luma);
  eq::Settings s;
  s.quality = eq::default_quality();
  ASSERT_EQ(s.quality.chroma, eq::ChromaMode::follow);
  ASSERT_OK(r->run(in, s, 0, nullptr));
  EXPECT_EQ(a.chroma, eq::ChromaMode::keep) << "no chroma planes (gray): nothing to follow";
  in.chroma[0] = row_plane(u);
  in.chroma[1] = row_plane(v);
  ASSERT_OK(r->run(in, s, 0, nullptr));
  EXPECT_EQ(a.chroma, eq::ChromaMode::follow);
  EXPECT_EQ(a.plan.fused, r->plan(s).fused);
  EXPECT_EQ(a.plan.folded, r->plan(s).folded);
  EXPECT_FALSE(r->run(in, s, 1, nullptr).is_ok()) << "one slot";
}

TEST(Runner, ChoosesTheBackendOnceForEveryFrontEnd) {
  auto cpu = eq::choose_backend(eq::BackendChoice::cpu, "");
  ASSERT_OK(cpu.status());
  EXPECT_EQ(cpu->backend, Backend::cpu);
  EXPECT_TRUE(cpu->note.empty());
  auto named = eq::choose_backend(eq::BackendChoice::automatic, "cpu_reference");
  ASSERT_OK(named.status());
  EXPECT_EQ(named->backend, Backend::cpu);
  EXPECT_TRUE(named->note.empty()) << "a CPU kernel was asked for: no fallback";
  auto wrong = eq::choose_backend(eq::BackendChoice::cpu, "method2_tuned");
  ASSERT_FALSE(wrong.is_ok());
  EXPECT_NE(wrong.status().message().find("runs on the GPU, but backend is cpu"), std::string::npos);
  EXPECT_FALSE(eq::choose_backend(eq::BackendChoice::automatic, "no_such_kernel").is_ok());
  if (cuda::have_device()) return;
  auto fallback = eq::choose_backend(eq::BackendChoice::automatic, "");
  ASSERT_OK(fallback.status());
  EXPECT_EQ(fallback->backend, Backend::cpu);
  EXPECT_FALSE(fallback->note.empty());
  EXPECT_EQ(eq::choose_backend(eq::BackendChoice::gpu, "").status().code(), Code::no_device);
}

}  // namespace
}  // namespace histeq::test
