// What the player needs from the pipeline, on the CPU: kernels switched and strength changed while
// frames flow (no frame lost, each frame labelled with its kernel and equalized exactly as the
// reference would with that frame's settings), the input luma and the histogram/LUT kept for
// displays, seeking files and the synthetic source, and running a pipeline again after a stop.
#include <gtest/gtest.h>

#include <algorithm>
#include <functional>

#include "core/equalize/equalize.h"
#include "core/histogram/histogram.h"
#include "core/pipeline/pipeline.h"
#include "core/video/file_source.h"
#include "tests/common/video_helpers.h"

namespace histeq::test {
namespace {

using histeq::Backend;
using pipeline::Equalizer;

video::SyntheticOptions clip_options(int frames) {
  video::SyntheticOptions o;
  o.width = 96;
  o.height = 54;
  o.fps = 30;
  o.duration_s = frames / 30.0;
  return o;
}

std::vector<uint8_t> packed(const PlaneRef& p) {
  std::vector<uint8_t> out(p.row_bytes() * p.height);
  for (int y = 0; y < p.height; ++y)
    std::copy_n(static_cast<const uint8_t*>(p.data) + y * p.pitch, p.row_bytes(), out.data() + y * p.row_bytes());
  return out;
}

// A sink that calls `on_frame(n)` before taking frame n, and keeps what the player would show.
struct Shown {
  std::string kernel;
  std::vector<uint8_t> luma, input_luma;
  std::vector<uint32_t> histogram;
  std::vector<uint16_t> lut;
  double time_s = 0;
};
class RecordingSink final : public pipeline::Sink {
 public:
  std::function<void(int64_t)> on_frame = [](int64_t) {};
  std::vector<Shown> shown;
  Status consume(pipeline::PipelineFrame pf, pipeline::FrameRecord&) override {
    on_frame(static_cast<int64_t>(shown.size()));
    const video::FramePtr& f = pf.frame;
    Shown s;
    s.kernel = pf.side.kernel;
    s.luma = packed(f->plane(0));
    if (pf.side.input_luma) {
      EXPECT_EQ(pf.side.input_luma->memory, MemoryKind::host);
      s.input_luma = packed(*pf.side.input_luma);
    }
    s.histogram = pf.side.histogram;
    s.lut = pf.side.lut;
    s.time_s = f->time_s;
    shown.push_back(std::move(s));
    return Status::ok();
  }
};

pipeline::PipelineOptions display_options() {
  pipeline::PipelineOptions po;
  po.equalizer.cpu = true;
  po.equalizer.keep_input_luma = true;
  po.equalizer.keep_histogram = true;
  return po;
}

// The frame is what the reference makes of its input luma with the given weight: histogram, LUT, output.
void expect_reference(const Shown& s, int w, int h, uint32_t weight, const std::string& where) {
  ASSERT_EQ(s.input_luma.size(), static_cast<size_t>(w) * h) << where;
  PlaneView<const uint8_t> in{s.input_luma.data(), w, h, static_cast<size_t>(w), 8, MemoryKind::host};
  auto ref = hist::create_kernel("cpu_reference");
  ASSERT_TRUE(ref.is_ok());
  std::vector<uint32_t> counts(256);
  ASSERT_TRUE(hist::compute(**ref, in, {counts.data(), 256, MemoryKind::host}).is_ok());
  EXPECT_EQ(s.histogram, counts) << where;
  std::vector<uint16_t> lut(256);
  // Plain settings on the synthetic source (limited range): the curve within 16..235.
  ASSERT_TRUE(eq::build_lut(counts.data(), 256, weight, eq::nominal_levels(8, false, false), lut.data()).is_ok());
  EXPECT_EQ(s.lut, lut) << where;
  std::vector<uint8_t> out = s.input_luma;
  for (auto& v : out) v = static_cast<uint8_t>(lut[v]);
  EXPECT_EQ(s.luma, out) << where;
}

TEST(LiveControls, KernelSwitchesApplyToLaterFramesWithNoFrameLost) {
  const int kFrames = 48;
  auto src = video::open_synthetic(clip_options(kFrames));
  ASSERT_TRUE(src.is_ok());
  auto pipe = pipeline::Pipeline::create(display_options(), (*src)->info());
  ASSERT_TRUE(pipe.is_ok()) << pipe.status().to_string();
  pipeline::Pipeline& p = **pipe;
  RecordingSink sink;
  sink.on_frame = [&](int64_t n) {
    if (n == 10) {
      EXPECT_TRUE(p.set_kernel("cpu_reference").is_ok());
    } else if (n == 30) {
      EXPECT_TRUE(p.set_kernel("cpu_parallel").is_ok());
    }
  };
  std::atomic<bool> stop{false};
  ASSERT_TRUE(p.run(**src, sink, stop).is_ok());
  ASSERT_EQ(sink.shown.size(), static_cast<size_t>(kFrames));
  // parallel..., reference..., parallel...: each switch lands on one frame, after the request (the
  // frames queued before it keep the old kernel) and within the queues' depth.
  std::vector<size_t> changes;
  for (size_t i = 1; i < sink.shown.size(); ++i)
    if (sink.shown[i].kernel != sink.shown[i - 1].kernel) changes.push_back(i);
  EXPECT_EQ(sink.shown.front().kernel, "cpu_parallel");
  ASSERT_EQ(changes.size(), 2u);
  EXPECT_EQ(sink.shown[changes[0]].kernel, "cpu_reference");
  EXPECT_EQ(sink.shown.back().kernel, "cpu_parallel");
  const size_t depth = 2 * 4 + 2;  // two queues of 4, a frame in each thread
  EXPECT_GT(changes[0], 10u);
  EXPECT_LE(changes[0], 10u + depth);
  EXPECT_GT(changes[1], 30u);
  EXPECT_LE(changes[1], 30u + depth);
  for (size_t i = 0; i < sink.shown.size(); ++i) expect_reference(sink.shown[i], 96, 54, eq::kWeightOne, "frame " + std::to_string(i));
}

TEST(LiveControls, StrengthChangesApplyToLaterFrames) {
  auto src = video::open_synthetic(clip_options(30));
  ASSERT_TRUE(src.is_ok());
  auto pipe = pipeline::Pipeline::create(display_options(), (*src)->info());
  ASSERT_TRUE(pipe.is_ok());
  RecordingSink sink;
  sink.on_frame = [&](int64_t n) {
    if (n == 5) {
      EXPECT_TRUE((*pipe)->set_strength(0.0).is_ok());
      EXPECT_FALSE((*pipe)->set_strength(1.5).is_ok());  // refused: 0 stays
    }
  };
  std::atomic<bool> stop{false};
  ASSERT_TRUE((*pipe)->run(**src, sink, stop).is_ok());
  ASSERT_EQ(sink.shown.size(), 30u);
  EXPECT_NE(sink.shown.front().luma, sink.shown.front().input_luma);
  EXPECT_EQ(sink.shown.back().luma, sink.shown.back().input_luma);  // strength 0: the identity
  expect_reference(sink.shown.back(), 96, 54, 0, "last frame");
}

TEST(LiveControls, RefusesKernelsThatCannotServeAndKeepsTheCurrentOne) {
  const video::FrameFormat f8{64, 32, 8, 1, 1};
  EXPECT_TRUE(Equalizer::check_kernel("cpu_parallel", Backend::cpu, f8).is_ok());
  EXPECT_EQ(Equalizer::check_kernel("no_such_kernel", Backend::cpu, f8).code(), Code::not_found);
  const Status gpu_on_cpu = Equalizer::check_kernel("method2", Backend::cpu, f8);
  EXPECT_FALSE(gpu_on_cpu.is_ok());
  EXPECT_NE(gpu_on_cpu.message().find("GPU"), std::string::npos) << gpu_on_cpu.message();
  EXPECT_FALSE(Equalizer::check_kernel("cpu_parallel", Backend::gpu, f8).is_ok());

  pipeline::EqualizerOptions eo;
  eo.cpu = true;
  auto e = Equalizer::create(eo, f8);
  ASSERT_TRUE(e.is_ok());
  EXPECT_FALSE((*e)->set_kernel("method2").is_ok());
  EXPECT_FALSE((*e)->set_kernel("").is_ok());
  eo.passthrough = true;
  auto none = Equalizer::create(eo, f8);
  ASSERT_TRUE(none.is_ok());
  EXPECT_FALSE((*none)->set_kernel("cpu_reference").is_ok());
}

TEST(LiveControls, FramesKeepNothingExtraUnlessAsked) {
  auto src = video::open_synthetic(clip_options(3));
  ASSERT_TRUE(src.is_ok());
  pipeline::PipelineOptions po;
  po.equalizer.cpu = true;
  auto pipe = pipeline::Pipeline::create(po, (*src)->info());
  ASSERT_TRUE(pipe.is_ok());
  RecordingSink sink;
  std::atomic<bool> stop{false};
  ASSERT_TRUE((*pipe)->run(**src, sink, stop).is_ok());
  ASSERT_EQ(sink.shown.size(), 3u);
  EXPECT_TRUE(sink.shown[0].input_luma.empty());
  EXPECT_TRUE(sink.shown[0].histogram.empty());
  EXPECT_EQ(sink.shown[0].kernel, "cpu_parallel");
}

TEST(Seek, SyntheticSourceMovesToAFrameAndPastTheEnd) {
  auto a = video::open_synthetic(clip_options(30));
  auto b = video::open_synthetic(clip_options(30));
  ASSERT_TRUE(a.is_ok() && b.is_ok());
  EXPECT_TRUE((*a)->can_seek());
  auto pool = video::FramePool::create((*a)->info().format, MemoryKind::host);
  std::vector<FrameCopy> all;
  for (;;) {
    auto f = (*b)->next(**pool);
    ASSERT_TRUE(f.is_ok());
    if (!f.value()) break;
    all.push_back(copy_frame(*f.value()));
  }
  ASSERT_EQ(all.size(), 30u);
  for (int i = 0; i < 3; ++i) ASSERT_TRUE((*a)->next(**pool).is_ok());
  ASSERT_TRUE((*a)->seek(0.5).is_ok());
  auto f = (*a)->next(**pool);
  ASSERT_TRUE(f.is_ok() && f.value());
  EXPECT_EQ(f.value()->index, 15);
  EXPECT_DOUBLE_EQ(f.value()->time_s, 0.5);
  EXPECT_TRUE(copy_frame(*f.value()) == all[15]);
  ASSERT_TRUE((*a)->seek(100).is_ok());  // past the end: the end
  auto end = (*a)->next(**pool);
  ASSERT_TRUE(end.is_ok());
  EXPECT_FALSE(end.value());
  ASSERT_TRUE((*a)->seek(0).is_ok());  // and back
  auto first = (*a)->next(**pool);
  ASSERT_TRUE(first.is_ok() && first.value());
  EXPECT_TRUE(copy_frame(*first.value()) == all[0]);
}

class FileSeek : public ::testing::Test {
 protected:
  void SetUp() override {
    path_ = temp_path("seek.mp4");
    // mpeg4 puts a key frame every 12 frames: seeks land before the target and decode up to it.
    Status s = write_synthetic_clip(path_, clip_options(30), "mpeg4");
    ASSERT_TRUE(s.is_ok()) << s.to_string();
    auto all = read_frames(path_);
    ASSERT_TRUE(all.is_ok()) << all.status().to_string();
    all_ = std::move(all.value());
    ASSERT_EQ(all_.size(), 30u);
  }
  void TearDown() override { std::remove(path_.c_str()); }
  std::string path_;
  std::vector<FrameCopy> all_;
};

TEST_F(FileSeek, LandsOnTheFrameAtTheTimeEvenAfterTheEndOrAStop) {
  auto src = video::FileSource::open(path_);
  ASSERT_TRUE(src.is_ok());
  video::FileSource& s = **src;
  EXPECT_TRUE(s.can_seek());
  auto pool = video::FramePool::create(s.info().format, MemoryKind::host);
  ASSERT_TRUE(pool.is_ok());
  auto frame_at = [&](double t) -> FrameCopy {
    Status st = s.seek(t);
    EXPECT_TRUE(st.is_ok()) << st.to_string();
    auto f = s.next(**pool);
    EXPECT_TRUE(f.is_ok() && f.value()) << t;
    if (!f.is_ok() || !f.value()) return {};
    EXPECT_NEAR(f.value()->time_s, t, 1e-6);
    return copy_frame(*f.value());
  };
  for (int i = 0; i < 4; ++i) ASSERT_TRUE(s.next(**pool).is_ok());
  EXPECT_TRUE(frame_at(0.5) == all_[15]);   // forward, from key frame 12
  EXPECT_TRUE(frame_at(0.1) == all_[3]);    // backward
  EXPECT_TRUE(frame_at(0.0) == all_[0]);
  for (;;) {  // to the end
    auto f = s.next(**pool);
    ASSERT_TRUE(f.is_ok());
    if (!f.value()) break;
  }
  EXPECT_TRUE(frame_at(0.8) == all_[24]);   // after the end
  s.interrupt();
  EXPECT_EQ(s.next(**pool).status().code(), Code::cancelled);
  EXPECT_TRUE(frame_at(0.2) == all_[6]);    // after a stop
}

TEST(Seek, WebcamsAndTheBaseSourceCannot) {
  struct Plain final : video::Source {
    video::SourceInfo i;
    const video::SourceInfo& info() const override { return i; }
    Result<video::FramePtr> next(video::FramePool&) override { return video::FramePtr(); }
    video::SourceCounters counters() const override { return {}; }
  } plain;
  EXPECT_FALSE(plain.can_seek());
  EXPECT_EQ(plain.seek(1.0).code(), Code::unsupported);
}

// The player seeks by stopping the pipeline, seeking the source and running it again.
TEST(LiveControls, APipelineRunsAgainAfterAStopAndASeek) {
  auto src = video::open_synthetic(clip_options(30));
  ASSERT_TRUE(src.is_ok());
  auto pipe = pipeline::Pipeline::create(display_options(), (*src)->info());
  ASSERT_TRUE(pipe.is_ok());
  std::atomic<bool> stop{false};
  RecordingSink first;
  first.on_frame = [&](int64_t n) {
    if (n == 4) stop = true;
  };
  EXPECT_EQ((*pipe)->run(**src, first, stop).code(), Code::cancelled);
  ASSERT_TRUE((*src)->seek(0.5).is_ok());
  stop = false;
  RecordingSink second;
  ASSERT_TRUE((*pipe)->run(**src, second, stop).is_ok());
  ASSERT_EQ(second.shown.size(), 15u);  // frames 15..29
  EXPECT_DOUBLE_EQ(second.shown.front().time_s, 0.5);
  for (const auto& s : second.shown) expect_reference(s, 96, 54, eq::kWeightOne, "after the seek");
}

}  // namespace
}  // namespace histeq::test
