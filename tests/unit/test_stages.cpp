// The equalizer as a list of operations: the list decides the order and the timing rows, state kept
// across frames sees every frame in order, and a seek resets it (CPU path; tests/gpu has the GPU's).
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <memory>

#include "core/equalize/operation.h"
#include "core/pipeline/pipeline.h"
#include "core/video/source.h"

namespace histeq::test {
namespace {

struct ProbeLog {
  std::vector<int64_t> seen;
  int resets = 0;
  int breaks = 0;  // a frame that did not follow the previous one without a reset between
};

// Keeps the index of the last frame it saw: a stand-in for a temporal filter.
class ContinuityProbe final : public eq::Operation {
 public:
  explicit ContinuityProbe(std::shared_ptr<ProbeLog> log) : log_(std::move(log)) {}
  video::StageId stage() const override { return video::stage_id("probe"); }
  bool stateful() const override { return true; }
  Status run(eq::FrameContext& ctx, cudaStream_t) override {
    if (last_ >= 0 && ctx.frame_index != last_ + 1) ++log_->breaks;
    last_ = ctx.frame_index;
    log_->seen.push_back(ctx.frame_index);
    return Status::ok();
  }
  void reset() override {
    last_ = -1;
    ++log_->resets;
  }

 private:
  std::shared_ptr<ProbeLog> log_;
  int64_t last_ = -1;
};

class StopAfter final : public pipeline::Sink {
 public:
  StopAfter(std::atomic<bool>& stop, int n) : stop_(stop), n_(n) {}
  std::vector<pipeline::FrameRecord> records;
  Status consume(pipeline::PipelineFrame, pipeline::FrameRecord& rec) override {
    records.push_back(rec);
    if (n_ > 0 && static_cast<int>(records.size()) == n_) stop_ = true;
    return Status::ok();
  }

 private:
  std::atomic<bool>& stop_;
  int n_;
};

TEST(Stages, TheListSetsTheOrderTheRowsAndTheStateAndASeekResetsIt) {
  video::SyntheticOptions o;
  o.width = 64;
  o.height = 48;
  o.fps = 10;
  o.duration_s = 4;  // 40 frames
  auto src = video::open_synthetic(o);
  ASSERT_TRUE(src.is_ok());
  auto log = std::make_shared<ProbeLog>();
  pipeline::PipelineOptions po;
  po.equalizer.cpu = true;
  po.equalizer.make_operations = [log] {
    eq::Operations ops = eq::standard_operations();
    ops.push_back(std::make_unique<ContinuityProbe>(log));
    return ops;
  };
  auto p = pipeline::Pipeline::create(po, (*src)->info());
  ASSERT_TRUE(p.is_ok()) << p.status().to_string();

  // The timing rows follow the list: histogram, lut, apply, then the probe, between the source's
  // and the sinks' stages.
  const std::vector<video::StageId> st = (*p)->stages();
  auto at = [&](const char* name) { return std::find(st.begin(), st.end(), video::stage_id(name)) - st.begin(); };
  EXPECT_LT(at("decode"), at("histogram"));
  EXPECT_LT(at("histogram"), at("lut"));
  EXPECT_LT(at("lut"), at("apply"));
  EXPECT_LT(at("apply"), at("probe"));
  EXPECT_LT(at("probe"), at("present"));

  std::atomic<bool> stop{false};
  StopAfter first(stop, 10);
  EXPECT_EQ((*p)->run(**src, first, stop).code(), Code::cancelled);
  EXPECT_EQ(log->resets, 0);
  for (const auto& r : first.records) EXPECT_TRUE(r.timing.has(video::stage_id("probe")));

  // A seek: the next run starts from a reset probe, and its frames follow each other again.
  ASSERT_TRUE((*p)->seek(**src, 2.0).is_ok());
  stop = false;
  StopAfter second(stop, 0);
  ASSERT_TRUE((*p)->run(**src, second, stop).is_ok());
  EXPECT_EQ(log->resets, 1);
  EXPECT_EQ(log->breaks, 0) << "the probe saw a jump without a reset";
  ASSERT_FALSE(second.records.empty());
  EXPECT_EQ(second.records.front().index, 20);
  EXPECT_EQ(second.records.back().index, 39);

  // The stats follow the list too: the probe's row comes after apply.
  pipeline::RunStats stats;
  for (const auto& r : second.records) stats.add(r);
  const auto rows = pipeline::ordered_rows(stats.total(), st);
  auto row = [&](int id) { return std::find(rows.begin(), rows.end(), id) - rows.begin(); };
  EXPECT_LT(row(video::stage_id("apply")), row(video::stage_id("probe")));

  // Another source: the pipeline resets before its first frame.
  auto other = video::open_synthetic(o);
  ASSERT_TRUE(other.is_ok());
  StopAfter third(stop, 0);
  ASSERT_TRUE((*p)->run(**other, third, stop).is_ok());
  EXPECT_EQ(log->resets, 2);
  EXPECT_EQ(log->breaks, 0);
}

TEST(Stages, AnEmptyListIsRefused) {
  pipeline::EqualizerOptions eo;
  eo.cpu = true;
  eo.make_operations = [] { return eq::Operations{}; };
  auto e = pipeline::Equalizer::create(eo, video::FrameFormat{64, 48, 8, 1, 1});
  EXPECT_FALSE(e.is_ok());
}

TEST(Frames, WrapDescribesPlanesInAnyMemoryAndChecksThem) {
  video::FrameFormat nv12{6, 4, 8, 1, 1, video::PlaneLayout::semi_planar};
  EXPECT_EQ(nv12.plane_count(), 2);
  EXPECT_EQ(nv12.plane_width(1), 6);  // 3 U,V pairs
  EXPECT_EQ(nv12.plane_height(1), 2);
  video::FrameFormat p010{6, 4, 10, 1, 1, video::PlaneLayout::semi_planar};
  EXPECT_EQ(p010.sample_shift(), 6);
  EXPECT_EQ(p010.storage_depth(), 16);
  EXPECT_FALSE(video::validate(video::FrameFormat{6, 4, 8, 1, 0, video::PlaneLayout::semi_planar}).is_ok());

  auto storage = std::make_shared<std::vector<uint8_t>>(6 * 4 + 6 * 2);
  PlaneRef planes[2];
  planes[0] = PlaneView<uint8_t>{storage->data(), 6, 4, 6, 8, MemoryKind::host};
  planes[1] = PlaneView<uint8_t>{storage->data() + 24, 6, 2, 6, 8, MemoryKind::host};
  auto f = video::Frame::wrap(nv12, MemoryKind::host, planes, 2, storage);
  ASSERT_TRUE(f.is_ok()) << f.status().to_string();
  EXPECT_EQ((*f)->plane_count(), 2);
  EXPECT_EQ((*f)->plane(1).width, 6);
  EXPECT_EQ(storage.use_count(), 2);  // the frame holds the storage
  f.value().reset();
  EXPECT_EQ(storage.use_count(), 1);

  planes[1].width = 3;  // does not fit
  EXPECT_FALSE(video::Frame::wrap(nv12, MemoryKind::host, planes, 2, storage).is_ok());
  EXPECT_FALSE(video::Frame::wrap(nv12, MemoryKind::device, planes, 2, storage).is_ok());  // memory kind mismatch
  EXPECT_FALSE(video::Frame::wrap(nv12, MemoryKind::host, planes, 1, storage).is_ok());    // too few planes

  auto pool = video::FramePool::create(nv12, MemoryKind::host);
  ASSERT_TRUE(pool.is_ok());
  auto g = (*pool)->get();
  ASSERT_TRUE(g.is_ok());
  EXPECT_EQ((*g)->plane_count(), 2);
  EXPECT_GE((*g)->plane(1).pitch, 6u);
  EXPECT_EQ((*g)->format().describe(), "6x4 8-bit 4:2:0, NV12");
}

TEST(Frames, StageIdsAreInternedOncePerName) {
  const video::StageId a = video::stage_id("a-test-stage");
  EXPECT_EQ(video::stage_id("a-test-stage"), a);
  EXPECT_STREQ(video::stage_name(a), "a-test-stage");
  EXPECT_EQ(video::stage_id("decode"), video::stage::decode);
  EXPECT_EQ(video::stage_id("present"), video::stage::present);
  EXPECT_STREQ(video::stage_name(9999), "?");
}

}  // namespace
}  // namespace histeq::test

namespace histeq::test {
namespace {

// P010 keeps its 10-bit values in the high bits: the CPU equalizer gives the planar 10-bit result,
// shifted up (the low bits stay zero).
TEST(Frames, P010EqualizesAsPlanarTenBitOnTheCpu) {
  const int w = 37, h = 21;
  video::FrameFormat p010{w, h, 10, 1, 1, video::PlaneLayout::semi_planar};
  video::FrameFormat planar{w, h, 10, 1, 1};
  auto pp = video::FramePool::create(p010, MemoryKind::host);
  auto lp = video::FramePool::create(planar, MemoryKind::host);
  ASSERT_TRUE(pp.is_ok() && lp.is_ok());
  auto a = (*pp)->get();
  auto b = (*lp)->get();
  ASSERT_TRUE(a.is_ok() && b.is_ok());
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x) {
      const uint16_t v = static_cast<uint16_t>((x * 37 + y * 11) % 300 + 200);  // low contrast, 10-bit
      (*b)->plane16(0).row(y)[x] = v;
      (*a)->plane16(0).row(y)[x] = static_cast<uint16_t>(v << 6);
    }
  pipeline::EqualizerOptions eo;
  eo.cpu = true;
  auto ea = pipeline::Equalizer::create(eo, p010);
  auto eb = pipeline::Equalizer::create(eo, planar);
  ASSERT_TRUE(ea.is_ok()) << ea.status().to_string();
  ASSERT_TRUE(eb.is_ok());
  std::vector<pipeline::PipelineFrame> da, db;
  ASSERT_TRUE((*ea)->submit(std::move(a.value()), da).is_ok());
  ASSERT_TRUE((*eb)->submit(std::move(b.value()), db).is_ok());
  const auto A = da.at(0).frame->plane16(0), B = db.at(0).frame->plane16(0);
  int changed = 0;
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x) {
      ASSERT_EQ(A.row(y)[x], B.row(y)[x] << 6) << x << "," << y;
      changed += B.row(y)[x] != static_cast<uint16_t>((x * 37 + y * 11) % 300 + 200);
    }
  EXPECT_GT(changed, w * h / 2) << "the test picture should be stretched";
}

}  // namespace
}  // namespace histeq::test

namespace histeq::test {
namespace {

// The CPU draws the built-in picture by rows in parallel: any number of threads, the same frames.
TEST(Frames, TheSyntheticSourceDrawsTheSameFramesOnAnyNumberOfThreads) {
  for (int depth : {8, 10}) {
    video::SyntheticOptions o;
    o.width = 643;
    o.height = 361;
    o.bit_depth = depth;
    o.fps = 4;
    o.duration_s = 7;  // the fade to one value included
    o.threads = 1;
    auto one = video::open_synthetic(o);
    o.threads = 3;
    auto three = video::open_synthetic(o);
    ASSERT_TRUE(one.is_ok() && three.is_ok());
    auto pool = video::FramePool::create((*one)->info().format, MemoryKind::host);
    ASSERT_TRUE(pool.is_ok());
    for (int n = 0;; ++n) {
      auto a = (*one)->next(**pool);
      auto b = (*three)->next(**pool);
      ASSERT_TRUE(a.is_ok() && b.is_ok());
      if (!a.value()) break;
      for (int i = 0; i < 3; ++i) {
        const PlaneRef pa = (*a)->plane(i), pb = (*b)->plane(i);
        for (int y = 0; y < pa.height; ++y)
          ASSERT_EQ(std::memcmp(static_cast<const uint8_t*>(pa.data) + y * pa.pitch, static_cast<const uint8_t*>(pb.data) + y * pb.pitch,
                                pa.row_bytes()),
                    0)
              << depth << "-bit frame " << n << " plane " << i << " row " << y;
      }
    }
  }
}

}  // namespace
}  // namespace histeq::test
