// The player's GPU path without a window: every GPU kernel switched in live, one after the other,
// while frames flow with their planes kept on the device (Frame::device), a device copy of the
// input luma (before/after view) and the histogram and LUT (histogram plots). Every frame must be
// bit-identical to the CPU reference equalization of its input, and every display-side copy must
// hold what it claims. Without a CUDA device every test here reports itself SKIPPED.
#include <gtest/gtest.h>

#include "core/cuda/check.h"
#include "core/cuda/device.h"
#include "core/equalize/equalize.h"
#include "core/histogram/histogram.h"
#include "core/pipeline/pipeline.h"
#include "tests/common/video_helpers.h"
#include "tests/common/gtest_status.h"

namespace histeq::test {
namespace {

std::vector<uint8_t> download(const PlaneRef& dev) {
  EXPECT_EQ(dev.memory, MemoryKind::device);
  std::vector<uint8_t> out(dev.row_bytes() * dev.height);
  const Status s = HISTEQ_CUDA_STATUS(
      cudaMemcpy2D(out.data(), dev.row_bytes(), dev.data, dev.pitch, dev.row_bytes(), dev.height, cudaMemcpyDeviceToHost));
  EXPECT_TRUE(s.is_ok()) << s.to_string();
  return out;
}

struct Seen {
  std::string kernel;
  FrameCopy frame;                         // the output frame (all planes, copied down)
  bool on_device = false;                  // it was a device frame (keep_on_device)
  std::vector<uint8_t> input_luma;         // SideData::input_luma (device)
  std::vector<uint32_t> histogram;
  std::vector<uint16_t> lut;
};

class SwitchingSink final : public pipeline::Sink {
 public:
  SwitchingSink(pipeline::Pipeline& p, std::vector<std::string> kernels, int every)
      : p_(p), kernels_(std::move(kernels)), every_(every) {}
  std::vector<Seen> seen;
  Status consume(pipeline::PipelineFrame pf, pipeline::FrameRecord& rec) override {
    const video::FramePtr& f = pf.frame;
    const int64_t n = static_cast<int64_t>(seen.size());
    if (n % every_ == 0 && static_cast<size_t>(n / every_ + 1) < kernels_.size()) {
      const Status s = p_.set_kernel(kernels_[n / every_ + 1]);
      EXPECT_TRUE(s.is_ok()) << s.to_string();
    }
    Seen s;
    s.kernel = pf.side.kernel;
    EXPECT_EQ(rec.kernel, pf.side.kernel);
    s.frame = copy_frame(*f);
    s.on_device = f->on_device();
    EXPECT_TRUE(pf.side.input_luma != nullptr);
    if (pf.side.input_luma) {
      EXPECT_TRUE(pf.side.input_luma->on_device());
      s.input_luma = download(*pf.side.input_luma);
    }
    s.histogram = pf.side.histogram;
    s.lut = pf.side.lut;
    seen.push_back(std::move(s));
    return Status::ok();
  }

 private:
  pipeline::Pipeline& p_;
  std::vector<std::string> kernels_;
  int every_;
};

class GpuLiveControls : public ::testing::TestWithParam<int> {};

TEST_P(GpuLiveControls, EveryKernelSwitchedInLiveEqualizesExactlyWithItsDisplayData) {
  REQUIRE_GPU();
  const int depth = GetParam();
  video::SyntheticOptions o;
  o.width = 328;  // rows that are not a multiple of 16 bytes (8-bit): pitched device planes
  o.height = 182;
  o.fps = 30;
  o.bit_depth = depth;
  video::FrameFormat fmt{o.width, o.height, depth, 1, 1};
  std::vector<std::string> kernels;
  for (const auto& e : hist::registry())
    if (pipeline::Equalizer::check_kernel(e.info.name, Backend::gpu, fmt).is_ok()) kernels.push_back(e.info.name);
  ASSERT_GE(kernels.size(), 2u);
  const int every = 4;
  o.duration_s = (static_cast<double>(kernels.size()) * every + 8) / o.fps;

  auto src = video::open_synthetic(o);
  ASSERT_TRUE(src.is_ok());
  pipeline::PipelineOptions po;
  po.equalizer.kernel = kernels[0];
  po.equalizer.keep_on_device = true;
  po.equalizer.download = false;
  po.equalizer.keep_input_luma = true;
  po.equalizer.keep_histogram = true;
  auto pipe = pipeline::Pipeline::create(po, (*src)->info());
  ASSERT_TRUE(pipe.is_ok()) << pipe.status().to_string();
  SwitchingSink sink(**pipe, kernels, every);
  std::atomic<bool> stop{false};
  const Status run = (*pipe)->run(**src, sink, stop);
  ASSERT_TRUE(run.is_ok()) << run.to_string();

  auto ref_src = video::open_synthetic(o);
  auto pool = video::FramePool::create((*ref_src)->info().format, MemoryKind::host);
  ASSERT_EQ(static_cast<int64_t>(sink.seen.size()), (*ref_src)->info().frames_hint);
  auto ref_kernel = hist::create_kernel("cpu_reference");
  ASSERT_TRUE(ref_kernel.is_ok());
  const int bins = fmt.bins();
  size_t next_kernel = 0;  // the labels follow the requests, in order, each kernel on some frame
  for (size_t i = 0; i < sink.seen.size(); ++i) {
    const Seen& s = sink.seen[i];
    auto in = (*ref_src)->next(**pool);
    ASSERT_TRUE(in.is_ok() && in.value());
    FrameCopy expected = copy_frame(*in.value());
    const std::vector<uint8_t> input_luma = expected.planes[0];
    std::vector<uint32_t> counts(bins);
    ASSERT_TRUE(hist::compute(**ref_kernel, in.value()->plane(0), {counts.data(), bins, MemoryKind::host}).is_ok());
    std::vector<uint16_t> lut(bins);
    ASSERT_TRUE(eq::build_lut(counts.data(), bins, eq::kWeightOne, reference_levels(expected), lut.data()).is_ok());
    reference_equalize(expected, eq::kWeightOne);
    const std::string where = "frame " + std::to_string(i) + " (" + s.kernel + ", " + std::to_string(depth) + "-bit)";
    if (s.kernel != kernels[next_kernel]) {
      ASSERT_LT(next_kernel + 1, kernels.size()) << where;
      ASSERT_EQ(s.kernel, kernels[++next_kernel]) << where << ": kernels out of order or one skipped";
    }
    EXPECT_TRUE(s.on_device) << where;
    ASSERT_EQ(s.frame.planes.size(), 3u) << where;
    for (int p = 0; p < 3; ++p) EXPECT_EQ(s.frame.planes[p], expected.planes[p]) << where << ", device plane " << p;
    EXPECT_EQ(s.input_luma, input_luma) << where;
    EXPECT_EQ(s.histogram, counts) << where;
    EXPECT_EQ(s.lut, lut) << where;
  }
  EXPECT_EQ(next_kernel + 1, kernels.size()) << "not every kernel equalized a frame";
}

INSTANTIATE_TEST_SUITE_P(Depths, GpuLiveControls, ::testing::Values(8, 10),
                         [](const auto& info) { return std::to_string(info.param) + "bit"; });

}  // namespace
}  // namespace histeq::test
