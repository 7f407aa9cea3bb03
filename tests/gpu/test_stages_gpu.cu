// A stateful operation on the GPU: frames in flight run on different streams, yet the equalizer
// orders the operation's runs by events, so each frame sees the state the previous frame left; a
// seek resets it. The probe counts frames on the device and writes the count into the frame.
#include <gtest/gtest.h>

#include <atomic>
#include <memory>

#include "core/cuda/check.h"
#include "core/cuda/device.h"
#include "core/equalize/operation.h"
#include "core/pipeline/pipeline.h"
#include "core/video/source.h"
#include "tests/common/video_helpers.h"

namespace histeq::test {
namespace {

// Slow on purpose (a long dependent chain in one thread), so that without the ordering a later
// frame's run would overtake an earlier one's.
__global__ void count_frame(uint32_t* state, uint8_t* luma) {
  uint32_t v = state[0];
  for (int i = 0; i < 20000; ++i) v = v * 1664525u + 1013904223u;  // busy work, kept in state[1]
  state[1] = v;
  state[0] = state[0] + 1;
  luma[0] = static_cast<uint8_t>(state[0]);
}

class DeviceCounter final : public eq::Operation {
 public:
  video::StageId stage() const override { return video::stage_id("counter"); }
  // Not a step of the equalization: it runs on the fused path too (the planner, planner.h).
  eq::Part part() const override { return eq::Part::filter; }
  bool stateful() const override { return true; }
  Status prepare(Backend, int, const video::FrameFormat&) override {
    auto b = cuda::DeviceArray<uint32_t>::allocate(2);
    if (!b) return b.status();
    state_ = std::move(b.value());
    zero_pending_ = true;
    return Status::ok();
  }
  Status run(eq::FrameContext& ctx, cudaStream_t stream) override {
    if (zero_pending_) {
      HISTEQ_CUDA_TRY(cudaMemsetAsync(state_.data(), 0, sizeof(uint32_t), stream));
      zero_pending_ = false;
    }
    count_frame<<<1, 1, 0, stream>>>(state_.data(), static_cast<uint8_t*>(const_cast<void*>(ctx.luma.data)));
    HISTEQ_CUDA_TRY_LAUNCH();
    return Status::ok();
  }
  void reset() override { zero_pending_ = true; }

 private:
  cuda::DeviceArray<uint32_t> state_;
  bool zero_pending_ = true;
};

class Collect final : public pipeline::Sink {
 public:
  std::vector<std::pair<int64_t, int>> seen;  // frame index, the counter written into it
  Status consume(pipeline::PipelineFrame f, pipeline::FrameRecord&) override {
    seen.emplace_back(f.frame->index, static_cast<const uint8_t*>(f.frame->plane(0).data)[0]);
    return Status::ok();
  }
};

TEST(GpuStages, AStatefulOperationSeesFramesInOrderAcrossStreamsAndResetsOnSeek) {
  if (!cuda::have_device()) GTEST_SKIP() << "no CUDA device";
  video::SyntheticOptions o;
  o.width = 256;
  o.height = 64;
  o.fps = 10;
  o.duration_s = 6;  // 60 frames
  auto src = video::open_synthetic(o);
  ASSERT_TRUE(src.is_ok());
  pipeline::PipelineOptions po;
  po.equalizer.frames_in_flight = 4;
  po.equalizer.download = true;
  po.equalizer.make_operations = [] {
    eq::Operations ops = eq::standard_operations();
    ops.push_back(std::make_unique<DeviceCounter>());
    return ops;
  };
  auto p = pipeline::Pipeline::create(po, (*src)->info());
  ASSERT_TRUE(p.is_ok()) << p.status().to_string();
  std::atomic<bool> stop{false};
  Collect first;
  ASSERT_TRUE((*p)->run(**src, first, stop).is_ok());
  ASSERT_EQ(first.seen.size(), 60u);
  for (size_t i = 0; i < first.seen.size(); ++i) EXPECT_EQ(first.seen[i].second, static_cast<int>(i + 1)) << "frame " << i;

  ASSERT_TRUE((*p)->seek(**src, 3.0).is_ok());
  Collect second;
  ASSERT_TRUE((*p)->run(**src, second, stop).is_ok());
  ASSERT_EQ(second.seen.size(), 30u);
  EXPECT_EQ(second.seen.front().first, 30);
  for (size_t i = 0; i < second.seen.size(); ++i) EXPECT_EQ(second.seen[i].second, static_cast<int>(i + 1)) << "after the seek, frame " << i;
}

}  // namespace
}  // namespace histeq::test
