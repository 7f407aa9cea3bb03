// The video pipeline on the CPU: synthetic source, frame pool, pipeline threads and order, the CPU
// equalizer against the reference, the writer/reader round trip, export (frames in == frames out,
// no partial output), stats, pacing, queues, layout choices.
#include <gtest/gtest.h>

#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmath>
#include <set>
#include <thread>

#include "core/equalize/lut.h"
#include "core/pipeline/export.h"
#include "core/pipeline/pacer.h"
#include "core/pipeline/queue.h"
#include "core/pipeline/stats.h"
#include "core/video/file_source.h"
#include "core/video/writer.h"
#include "tests/common/video_helpers.h"

namespace histeq::test {
namespace {


bool exists(const std::string& p) {
  struct stat st {};
  return ::stat(p.c_str(), &st) == 0;
}

video::SyntheticOptions small(int w, int h, int frames, int depth = 8) {
  video::SyntheticOptions o;
  o.width = w;
  o.height = h;
  o.fps = 30;
  o.duration_s = frames / 30.0;
  o.bit_depth = depth;
  return o;
}

std::vector<FrameCopy> synthetic_frames(const video::SyntheticOptions& o) {
  auto s = video::open_synthetic(o);
  EXPECT_TRUE(s.is_ok());
  auto pool = video::FramePool::create((*s)->info().format, MemoryKind::host);
  std::vector<FrameCopy> out;
  for (;;) {
    auto f = (*s)->next(**pool);
    EXPECT_TRUE(f.is_ok());
    if (!f.is_ok() || !f.value()) break;
    out.push_back(copy_frame(*f.value()));
  }
  return out;
}

TEST(FramePool, PlanesAreAlignedAndSized) {
  video::FrameFormat f{1921, 1081, 10, 1, 1};
  auto pool = video::FramePool::create(f, MemoryKind::host);
  ASSERT_TRUE(pool.is_ok()) << pool.status().to_string();
  auto fr = (*pool)->get();
  ASSERT_TRUE(fr.is_ok());
  for (int i = 0; i < 3; ++i) {
    const PlaneRef p = (*fr)->plane(i);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(p.data) % 64, 0u);
    EXPECT_EQ(p.pitch % 64, 0u);
    EXPECT_EQ(p.bytes_per_sample, 2);
    EXPECT_EQ(p.bit_depth, 10);
  }
  EXPECT_EQ((*fr)->plane(0).width, 1921);
  EXPECT_EQ((*fr)->plane(1).width, 961);  // chroma rounds up
  EXPECT_EQ((*fr)->plane(2).height, 541);
  EXPECT_FALSE(video::FramePool::create(video::FrameFormat{0, 10, 8, 1, 1}, MemoryKind::host).is_ok());
  EXPECT_FALSE(video::FramePool::create(video::FrameFormat{16, 16, 12, 1, 1}, MemoryKind::host).is_ok());
}

TEST(Synthetic, IsDeterministicLowContrastWithAFlatRegionAndAOneValueFrame) {
  auto o = small(192, 108, 0);
  o.fps = 60;
  o.duration_s = 5.5;  // the fade bottoms out at 5.25 s (frame 315)
  const auto a = synthetic_frames(o);
  ASSERT_EQ(a.size(), 330u);
  EXPECT_EQ(a[17], synthetic_frames(o)[17]) << "frames are a function of their index";
  // Low contrast: frame 0 spans well under half the range.
  const auto& y0 = a[0].planes[0];
  const int lo = *std::min_element(y0.begin(), y0.end()), hi = *std::max_element(y0.begin(), y0.end());
  EXPECT_LT(hi - lo, 120);
  EXPECT_GT(hi - lo, 30);
  // The flat rectangle: one value, 92, over a fifth of the width and a quarter of the height.
  const int W = 192;
  int flat = 0;
  for (uint8_t v : y0) flat += v == 92;
  EXPECT_GE(flat, (W / 5) * (108 / 4));
  // The fade's bottom is a one-value frame.
  std::set<uint8_t> values(a[315].planes[0].begin(), a[315].planes[0].end());
  EXPECT_EQ(values.size(), 1u);
  // Motion: consecutive frames differ.
  EXPECT_NE(a[1].planes[0], a[2].planes[0]);
  // 10-bit: the same picture times 4.
  auto o10 = o;
  o10.bit_depth = 10;
  o10.duration_s = 0.1;
  const auto b = synthetic_frames(o10);
  const uint16_t* y10 = reinterpret_cast<const uint16_t*>(b[0].planes[0].data());
  for (size_t i = 0; i < y0.size(); i += 97) EXPECT_EQ(y10[i], y0[i] * 4);
}

TEST(Synthetic, RejectsBadOptions) {
  EXPECT_FALSE(video::open_synthetic(small(1, 1, 1)).is_ok());
  auto o = small(64, 64, 1);
  o.fps = 0;
  EXPECT_FALSE(video::open_synthetic(o).is_ok());
  o = small(64, 64, 1, 12);
  EXPECT_FALSE(video::open_synthetic(o).is_ok());
}

class CpuPipeline : public ::testing::TestWithParam<std::tuple<int, int, int, double>> {};

// Every output frame equals the reference equalization of the matching input frame; chroma is
// untouched; order and counts are kept; every CPU stage is timed.
TEST_P(CpuPipeline, MatchesReference) {
  const auto [w, h, depth, strength] = GetParam();
  const auto o = small(w, h, 24, depth);
  auto expected = synthetic_frames(o);
  auto src = video::open_synthetic(o);
  ASSERT_TRUE(src.is_ok());
  pipeline::PipelineOptions po;
  po.equalizer.cpu = true;
  po.equalizer.strength = strength;
  po.queue_frames = 2;
  auto run = run_pipeline(**src, po);
  ASSERT_TRUE(run.is_ok()) << run.status().to_string();
  EXPECT_EQ(run->equalizer.kernel, "cpu_parallel");
  EXPECT_EQ(run->equalizer.bins, 1 << depth);
  ASSERT_EQ(run->frames.size(), expected.size());
  EXPECT_EQ(run->counters.frames_in, 24);
  EXPECT_EQ(run->counters.frames_out, 24);
  const uint32_t weight = static_cast<uint32_t>(std::lround(strength * eq::kWeightOne));
  for (size_t i = 0; i < expected.size(); ++i) {
    FrameCopy ref = expected[i];
    reference_equalize(ref, weight);
    ASSERT_EQ(run->frames[i].planes[0], ref.planes[0]) << "frame " << i;
    EXPECT_EQ(run->frames[i].planes[1], expected[i].planes[1]) << "chroma untouched";
    EXPECT_EQ(run->frames[i].planes[2], expected[i].planes[2]);
    EXPECT_EQ(run->frames[i].pts, static_cast<int64_t>(i));
    const auto& t = run->records[i].timing;
    for (video::StageId s : {video::stage::decode, video::stage_id("histogram"), video::stage_id("lut"), video::stage_id("apply")}) EXPECT_TRUE(t.has(s)) << video::stage_name(s);
    for (video::StageId s : {video::stage::upload, video::stage::download}) EXPECT_FALSE(t.has(s)) << video::stage_name(s);
  }
  if (strength == 0.0) {
    for (size_t i = 0; i < expected.size(); ++i) EXPECT_TRUE(run->frames[i] == expected[i]) << "strength 0 changes nothing";
  }
}

INSTANTIATE_TEST_SUITE_P(Sizes, CpuPipeline,
                         ::testing::Values(std::make_tuple(96, 64, 8, 1.0), std::make_tuple(97, 33, 8, 0.37),
                                           std::make_tuple(2, 2, 8, 1.0), std::make_tuple(130, 66, 10, 1.0),
                                           std::make_tuple(64, 48, 8, 0.0)));

TEST(Pipeline, EqualizedFramesAreFlatter) {
  const auto o = small(320, 180, 8);
  auto src = video::open_synthetic(o);
  pipeline::PipelineOptions po;
  po.equalizer.cpu = true;
  auto run = run_pipeline(**src, po);
  ASSERT_TRUE(run.is_ok());
  const auto in = synthetic_frames(o);
  for (size_t i = 0; i < in.size(); ++i) EXPECT_LT(ks_to_uniform(run->frames[i]), ks_to_uniform(in[i]) / 3) << i;
}

TEST(Pipeline, StopsAtMaxSecondsAndOnStop) {
  auto src = video::open_synthetic(small(64, 48, 90));
  pipeline::PipelineOptions po;
  po.equalizer.cpu = true;
  po.max_seconds = 1.0;  // 30 frames at 30 fps
  auto run = run_pipeline(**src, po);
  ASSERT_TRUE(run.is_ok());
  EXPECT_EQ(run->frames.size(), 30u);

  auto endless = small(64, 48, 0);
  endless.duration_s = 0;
  auto src2 = video::open_synthetic(endless);
  struct Stopper : pipeline::Sink {
    std::atomic<bool>* stop;
    int n = 0;
    Status consume(pipeline::PipelineFrame, pipeline::FrameRecord&) override {
      if (++n == 5) stop->store(true);
      return Status::ok();
    }
  } sink;
  std::atomic<bool> stop{false};
  sink.stop = &stop;
  po.max_seconds = 0;
  auto p2 = pipeline::Pipeline::create(po, (*src2)->info());
  Status s = (*p2)->run(**src2, sink, stop);
  EXPECT_EQ(s.code(), Code::cancelled);
}

TEST(Pipeline, SinkErrorsStopEverything) {
  auto src = video::open_synthetic(small(64, 48, 0));
  pipeline::PipelineOptions po;
  po.equalizer.cpu = true;
  auto p = pipeline::Pipeline::create(po, (*src)->info());
  struct Failing : pipeline::Sink {
    Status consume(pipeline::PipelineFrame, pipeline::FrameRecord&) override { return HISTEQ_ERROR(Code::io_error, "disk full"); }
  } sink;
  std::atomic<bool> stop{false};
  Status s = (*p)->run(**src, sink, stop);
  EXPECT_EQ(s.code(), Code::io_error);
  EXPECT_EQ(s.message(), "disk full");
}

TEST(Equalizer, ChoosesAndChecksKernels) {
  video::FrameFormat f8{64, 64, 8, 1, 1}, f10{64, 64, 10, 1, 1};
  pipeline::EqualizerOptions o;
  o.cpu = true;
  auto e = pipeline::Equalizer::create(o, f8);
  ASSERT_TRUE(e.is_ok());
  EXPECT_EQ((*e)->info().kernel, "cpu_parallel");
  EXPECT_EQ((*e)->info().backend, Backend::cpu);
  o.kernel = "cpu_reference";
  EXPECT_EQ(pipeline::Equalizer::create(o, f10).value()->info().bins, 1024);
  o.kernel = "no_such";
  EXPECT_EQ(pipeline::Equalizer::create(o, f8).status().code(), Code::not_found);
  o.kernel = "method2";
  EXPECT_EQ(pipeline::Equalizer::create(o, f8).status().code(), Code::invalid_argument) << "GPU kernel with --cpu";
  o.kernel = "";
  o.strength = 2;
  EXPECT_EQ(pipeline::Equalizer::create(o, f8).status().code(), Code::invalid_argument);
  o.strength = 1;
  o.passthrough = true;
  EXPECT_EQ(pipeline::Equalizer::create(o, f8).value()->info().kernel, "none");
}

TEST(Video, WriterAndSourceRoundTripLosslessly) {
  for (auto o : {small(64, 48, 12), small(33, 17, 5), small(64, 48, 6, 10)}) {
    const std::string path = temp_path("roundtrip.mkv");
    ASSERT_TRUE(write_synthetic_clip(path, o).is_ok());
    auto got = read_frames(path);
    ASSERT_TRUE(got.is_ok()) << got.status().to_string();
    const auto want = synthetic_frames(o);
    ASSERT_EQ(got->size(), want.size());
    for (size_t i = 0; i < want.size(); ++i) EXPECT_TRUE((*got)[i] == want[i]) << o.width << "x" << o.height << " frame " << i;
    ::unlink(path.c_str());
  }
}

TEST(Video, ChoosesALayoutTheEncoderTakes) {
  std::vector<std::string> notes;
  video::NativeVideo n{1921, 1081, 0 /*yuv420p*/, "yuv420p", "h264", {}};
  auto f = video::choose_format("libx264", n, notes);
  ASSERT_TRUE(f.is_ok());
  EXPECT_EQ(f->chroma_shift_x, 0) << "odd size: 4:4:4 for H.264";
  EXPECT_EQ(notes.size(), 1u);
  notes.clear();
  f = video::choose_format("ffv1", n, notes);
  EXPECT_EQ(f->chroma_shift_x, 1) << "ffv1 stores odd 4:2:0";
  EXPECT_TRUE(notes.empty());
  video::NativeVideo ten{1920, 1080, 64 /*placeholder, set below*/, "yuv420p10le", "hevc", {}};
  ten.av_pix_fmt = video::FrameFormat{16, 16, 10, 1, 1}.av_pix_fmt();
  f = video::choose_format("libx264", ten, notes);
  EXPECT_EQ(f->bit_depth, 10);
  f = video::choose_format("mpeg4", ten, notes);
  EXPECT_EQ(f->bit_depth, 8);
  EXPECT_FALSE(notes.empty());
  EXPECT_EQ(video::choose_format("no_such_codec", n, notes).status().code(), Code::not_found);
  EXPECT_EQ(video::choose_format("aac", n, notes).status().code(), Code::invalid_argument);
}

class Export : public ::testing::Test {
 protected:
  void SetUp() override {
    in_ = temp_path("in.mkv");
    out_ = temp_path("out.mkv");
    ASSERT_TRUE(write_synthetic_clip(in_, small(80, 46, 20)).is_ok());
  }
  void TearDown() override {
    ::unlink(in_.c_str());
    ::unlink(out_.c_str());
  }
  pipeline::ExportOptions options() const {
    pipeline::ExportOptions o;
    o.input = in_;
    o.output = out_;
    o.codec = "ffv1";
    o.pipeline.equalizer.cpu = true;
    return o;
  }
  // No ".NAME.*.part" file is left in the output's folder.
  bool temp_left() const {
    const std::string dir = out_.substr(0, out_.find_last_of('/'));
    const std::string prefix = "." + out_.substr(out_.find_last_of('/') + 1) + ".";
    DIR* d = opendir(dir.c_str());
    bool found = false;
    while (dirent* e = readdir(d))
      if (std::string(e->d_name).rfind(prefix, 0) == 0) found = true;
    closedir(d);
    return found;
  }
  std::string in_, out_;
};

TEST_F(Export, EveryFrameEqualizedFramesInEqualFramesOut) {
  auto x = pipeline::Exporter::open(options());
  ASSERT_TRUE(x.is_ok()) << x.status().to_string();
  std::atomic<bool> stop{false};
  int progress_calls = 0;
  auto r = (*x)->run(stop, nullptr, [&](const pipeline::ExportProgress&) { ++progress_calls; });
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  EXPECT_EQ(r->frames_in, 20);
  EXPECT_EQ(r->frames_out, 20);
  EXPECT_EQ(progress_calls, 20);
  auto got = read_frames(out_);
  ASSERT_TRUE(got.is_ok());
  auto want = synthetic_frames(small(80, 46, 20));
  ASSERT_EQ(got->size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) {
    reference_equalize(want[i], eq::kWeightOne);
    EXPECT_TRUE((*got)[i] == want[i]) << "frame " << i;
    EXPECT_NEAR((*got)[i].time_s, want[i].time_s, 0.0011) << "timestamps kept (Matroska stores milliseconds)";
  }
  EXPECT_FALSE(temp_left());
}

TEST_F(Export, RefusesToOverwriteOrToWriteOverItsInput) {
  ASSERT_TRUE(write_synthetic_clip(out_, small(16, 16, 1)).is_ok());
  auto x = pipeline::Exporter::open(options());
  ASSERT_FALSE(x.is_ok());
  EXPECT_NE(x.status().message().find("already exists"), std::string::npos) << x.status().message();
  auto o = options();
  o.output = in_;
  o.overwrite = true;
  x = pipeline::Exporter::open(o);
  ASSERT_FALSE(x.is_ok());
  EXPECT_NE(x.status().message().find("is the input"), std::string::npos);
  o = options();
  o.output = "/nonexistent-dir-histeq/out.mkv";
  x = pipeline::Exporter::open(o);
  ASSERT_FALSE(x.is_ok());
  EXPECT_EQ(x.status().message().rfind("/nonexistent-dir-histeq/out.mkv: ", 0), 0u) << x.status().message();
}

TEST_F(Export, AStopLeavesNoOutputAndNoTemporaryFile) {
  auto x = pipeline::Exporter::open(options());
  ASSERT_TRUE(x.is_ok());
  EXPECT_TRUE(temp_left()) << "the temporary file exists while the export runs";
  std::atomic<bool> stop{true};
  auto r = (*x)->run(stop, nullptr, nullptr);
  EXPECT_EQ(r.status().code(), Code::cancelled);
  EXPECT_FALSE(exists(out_));
  EXPECT_FALSE(temp_left());
  // An export that is opened and dropped also cleans up.
  auto y = pipeline::Exporter::open(options());
  ASSERT_TRUE(y.is_ok());
  y.value().reset();
  EXPECT_FALSE(temp_left());
}

TEST(Stats, SummarizeAndRunTotals) {
  std::vector<float> v;
  for (int i = 1; i <= 100; ++i) v.push_back(static_cast<float>(i));
  v.push_back(std::nanf(""));
  const auto s = pipeline::summarize(v);
  EXPECT_EQ(s.count, 100);
  EXPECT_DOUBLE_EQ(s.p50, 50);
  EXPECT_DOUBLE_EQ(s.p99, 99);
  EXPECT_DOUBLE_EQ(s.max, 100);
  EXPECT_DOUBLE_EQ(s.avg, 50.5);
  EXPECT_DOUBLE_EQ(s.last, 100);

  pipeline::RunStats rs(10, true);
  for (int i = 1; i <= 1000; ++i) {
    pipeline::FrameRecord r;
    r.index = i;
    r.timing.set(video::stage_id("histogram"), i * 0.01);
    r.timing.latency_ms = 5;
    r.late = i % 100 == 0;
    rs.add(r);
  }
  const auto win = rs.window();
  EXPECT_EQ(win[(video::stage_id("histogram"))].count, 10);
  EXPECT_NEAR(win[(video::stage_id("histogram"))].max, 10.0, 1e-6);
  EXPECT_NEAR(win[(video::stage_id("histogram"))].last, 10.0, 1e-6);
  EXPECT_EQ(win[(video::stage::decode)].count, 0);
  const auto tot = rs.total();
  const auto& h = tot[(video::stage_id("histogram"))];
  EXPECT_EQ(h.count, 1000);
  EXPECT_NEAR(h.p50, 5.0, 5.0 * 0.01) << "log histogram: within 1%";
  EXPECT_NEAR(h.p99, 9.9, 9.9 * 0.01);
  EXPECT_NEAR(h.avg, 5.005, 1e-3);
  EXPECT_NEAR(tot[pipeline::kLatency].p50, 5.0, 0.05);
  EXPECT_EQ(rs.late(), 10);
  EXPECT_EQ(rs.records().size(), 1000u);
}

TEST(Pacer, DropsFramesMoreThanAnIntervalLateAndFlagsLateOnes) {
  pipeline::Pacer p(0.01);  // 100 fps
  auto a = p.plan(5.0, 1'000'000'000);
  EXPECT_FALSE(a.drop);
  EXPECT_EQ(a.due_ns, 1'000'000'000);
  auto b = p.plan(5.02, 1'000'000'000);
  EXPECT_EQ(b.due_ns, 1'020'000'000);
  EXPECT_FALSE(p.plan(5.03, 1'035'000'000).drop);
  EXPECT_TRUE(p.plan(5.03, 1'041'000'000).drop);
  EXPECT_FALSE(p.late(1'000'000'000, 1'004'000'000));
  EXPECT_TRUE(p.late(1'000'000'000, 1'006'000'000));
}

TEST(Queue, ClosesAndAborts) {
  pipeline::BoundedQueue<int> q(2);
  EXPECT_TRUE(q.push(1));
  int two = 2, three = 3;
  EXPECT_TRUE(q.try_push(two));
  EXPECT_FALSE(q.try_push(three)) << "full";
  EXPECT_FALSE(q.aborted());
  std::thread producer([&] { EXPECT_TRUE(q.push(4)); q.close(); });
  int v = 0;
  std::vector<int> got;
  while (q.pop(v)) got.push_back(v);
  producer.join();
  EXPECT_EQ(got, (std::vector<int>{1, 2, 4}));
  pipeline::BoundedQueue<int> r(1);
  EXPECT_EQ(r.pop_for(v, std::chrono::milliseconds(1)), pipeline::BoundedQueue<int>::Pop::timeout);
  std::thread blocked([&] { EXPECT_TRUE(r.push(1)); EXPECT_FALSE(r.push(2)); });
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  r.abort();
  blocked.join();
  EXPECT_FALSE(r.pop(v));
}

}  // namespace
}  // namespace histeq::test
