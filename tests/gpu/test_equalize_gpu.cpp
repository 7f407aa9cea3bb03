// The GPU equalizer against the CPU one: LUTs from many histograms, the LUT applied to planes of
// every shape and pitch, whole pipelines on synthetic video with every GPU kernel, frames kept on
// the device, and export files. Everything must be bit-identical. Without a CUDA device every test
// here reports itself SKIPPED.
#include <gtest/gtest.h>

#include <unistd.h>

#include <cstdlib>
#include <random>

#include "core/cuda/check.h"
#include "core/cuda/device.h"
#include "core/cuda/resources.h"
#include "core/equalize/equalize.h"
#include "core/equalize/operation.h"
#include "core/histogram/histogram.h"
#include "core/image/synthetic.h"
#include "core/pipeline/export.h"
#include "tests/common/video_helpers.h"
#include "tests/common/gtest_status.h"

namespace histeq::test {
namespace {

std::vector<std::vector<uint32_t>> histograms(int bins) {
  std::mt19937 rng(static_cast<uint32_t>(bins));
  std::vector<std::vector<uint32_t>> hs;
  hs.emplace_back(bins, 0u);  // empty
  for (int v : {0, bins / 2, bins - 1}) {
    hs.emplace_back(bins, 0u);
    hs.back()[v] = 1920 * 1080;  // one value
  }
  hs.emplace_back(bins, 0u);
  hs.back()[1] = 7;
  hs.back()[bins - 2] = 9;  // two values
  for (int t = 0; t < 6; ++t) {  // sparse and dense random
    std::vector<uint32_t> h(bins, 0u);
    const int used = t < 3 ? 1 + static_cast<int>(rng() % 8) : bins;
    for (int k = 0; k < used; ++k) h[rng() % bins] += 1 + rng() % 100000;
    hs.push_back(h);
  }
  std::vector<uint32_t> big(bins, 0u);  // N = 2^32 - 1: the most a histogram can count
  big[0] = 1;
  big[bins - 1] = 0xFFFFFFFEu;
  hs.push_back(big);
  std::vector<uint32_t> flat(bins, static_cast<uint32_t>(0xFFFFFFFFu / bins));  // every bin, near the limit
  hs.push_back(flat);
  return hs;
}

TEST(GpuLut, MatchesCpuOnEveryHistogramAndStrength) {
  REQUIRE_GPU();
  auto stream = cuda::Stream::create();
  ASSERT_TRUE(stream.is_ok());
  auto d_counts = cuda::DeviceArray<uint32_t>::allocate(1024);
  auto d_lut = cuda::DeviceArray<uint16_t>::allocate(1024);
  ASSERT_TRUE(d_counts.is_ok() && d_lut.is_ok());
  const cudaStream_t s = stream->get();
  for (int bins : {2, 64, 256, 512, 1024}) {
    for (const auto& h : histograms(bins)) {
      const int depth = hist::bins_log2(bins);
      std::vector<eq::Levels> levels = {eq::textbook_levels(static_cast<uint32_t>(bins - 1))};
      if (depth >= 8) levels.insert(levels.end(), {eq::nominal_levels(depth, false, false), eq::nominal_levels(depth, true, false)});
      for (uint32_t w : {0u, 1u, 12345u, eq::kWeightOne / 2, eq::kWeightOne - 1, eq::kWeightOne})
      for (const eq::Levels& lv : levels) {
        std::vector<uint16_t> cpu(bins), gpu(bins, 0xABCD), tb(bins);
        ASSERT_OK(eq::build_lut(h.data(), bins, w, lv, cpu.data()));
        ASSERT_OK(HISTEQ_CUDA_STATUS(cudaMemcpyAsync(d_counts->data(), h.data(), bins * 4, cudaMemcpyHostToDevice, s)));
        ASSERT_OK(HISTEQ_CUDA_STATUS(cudaMemsetAsync(d_lut->data(), 0xAB, 1024 * 2, s)));
        ASSERT_OK(eq::build_lut_gpu(d_counts->data(), bins, w, lv, d_lut->data(), s));
        ASSERT_OK(HISTEQ_CUDA_STATUS(cudaMemcpyAsync(gpu.data(), d_lut->data(), bins * 2, cudaMemcpyDeviceToHost, s)));
        ASSERT_OK(stream->synchronize());
        ASSERT_EQ(gpu, cpu) << "bins " << bins << " weight " << w << " levels " << lv.lo << ".." << lv.hi;
        if (lv == eq::textbook_levels(static_cast<uint32_t>(bins - 1))) {  // the overload without levels: the textbook ones
          ASSERT_OK(eq::build_lut_gpu(d_counts->data(), bins, w, d_lut->data(), s));
          ASSERT_OK(HISTEQ_CUDA_STATUS(cudaMemcpyAsync(tb.data(), d_lut->data(), bins * 2, cudaMemcpyDeviceToHost, s)));
          ASSERT_OK(stream->synchronize());
          ASSERT_EQ(tb, cpu);
        }
      }
    }
  }
  EXPECT_FALSE(eq::build_lut_gpu(d_counts->data(), 300, eq::kWeightOne, d_lut->data(), s).is_ok());
  EXPECT_FALSE(eq::build_lut_gpu(d_counts->data(), 256, eq::kWeightOne + 1, d_lut->data(), s).is_ok());
}

struct ApplyCase {
  int width, height;
  int bytes;           // 1 or 2
  size_t extra_pitch;  // bytes beyond the row (0 = tight)
  size_t offset;       // bytes from the allocation's start: > 0 misaligns the rows
};

void PrintTo(const ApplyCase& c, std::ostream* os) {
  *os << c.width << "x" << c.height << " " << 8 * c.bytes << "-bit, pitch +" << c.extra_pitch << ", offset " << c.offset;
}

class GpuApply : public ::testing::TestWithParam<ApplyCase> {};

// Samples mapped exactly as on the CPU; padding and the bytes around the plane untouched.
TEST_P(GpuApply, MatchesCpuAndTouchesOnlyTheSamples) {
  REQUIRE_GPU();
  const ApplyCase c = GetParam();
  const int bins = c.bytes == 1 ? 256 : 1024;
  const size_t row = static_cast<size_t>(c.width) * c.bytes, pitch = row + c.extra_pitch;
  const size_t total = c.offset + pitch * c.height + 64;
  std::vector<uint8_t> host(total, 0xC3);  // poison everywhere
  for (int y = 0; y < c.height; ++y)
    for (int x = 0; x < c.width; ++x) {
      uint32_t v = synth::hash_xy(x, y, 9);
      uint8_t* p = host.data() + c.offset + y * pitch + x * c.bytes;
      if (c.bytes == 1) *p = static_cast<uint8_t>(v);
      else *reinterpret_cast<uint16_t*>(p) = static_cast<uint16_t>((v & 0xFF) == 7 ? 1024 + (v >> 20) : v % 1024);  // some out of range
    }
  std::vector<uint16_t> lut(bins);
  std::mt19937 rng(5);
  for (auto& v : lut) v = static_cast<uint16_t>(rng() % bins);
  std::vector<uint8_t> want = host;
  auto dbuf = cuda::Buffer::allocate(MemoryKind::device, total);
  auto dlut = cuda::DeviceArray<uint16_t>::allocate(bins);
  ASSERT_TRUE(dbuf.is_ok() && dlut.is_ok());
  ASSERT_OK(HISTEQ_CUDA_STATUS(cudaMemcpy(dbuf->data(), host.data(), total, cudaMemcpyHostToDevice)));
  ASSERT_OK(HISTEQ_CUDA_STATUS(cudaMemcpy(dlut->data(), lut.data(), bins * 2, cudaMemcpyHostToDevice)));
  uint8_t* dbase = static_cast<uint8_t*>(dbuf->data()) + c.offset;
  if (c.bytes == 1) {
    ASSERT_OK(eq::apply_lut(PlaneView<uint8_t>{want.data() + c.offset, c.width, c.height, pitch, 8, MemoryKind::host}, lut.data(), bins));
    ASSERT_OK(eq::apply_lut_gpu(PlaneView<uint8_t>{dbase, c.width, c.height, pitch, 8, MemoryKind::device}, dlut->data(), bins, nullptr));
  } else {
    ASSERT_OK(eq::apply_lut(PlaneView<uint16_t>{reinterpret_cast<uint16_t*>(want.data() + c.offset), c.width, c.height, pitch, 10,
                                                MemoryKind::host}, lut.data(), bins));
    ASSERT_OK(eq::apply_lut_gpu(PlaneView<uint16_t>{reinterpret_cast<uint16_t*>(dbase), c.width, c.height, pitch, 10, MemoryKind::device},
                                dlut->data(), bins, nullptr));
  }
  std::vector<uint8_t> got(total);
  ASSERT_OK(HISTEQ_CUDA_STATUS(cudaMemcpy(got.data(), dbuf->data(), total, cudaMemcpyDeviceToHost)));
  for (size_t i = 0; i < total; ++i) ASSERT_EQ(got[i], want[i]) << "byte " << i << " of " << c.width << "x" << c.height;
}

INSTANTIATE_TEST_SUITE_P(Shapes, GpuApply,
                         ::testing::Values(ApplyCase{1, 1, 1, 0, 0}, ApplyCase{1, 1, 2, 0, 0}, ApplyCase{17, 3, 1, 0, 0},
                                           ApplyCase{1920, 1080, 1, 0, 0}, ApplyCase{1920, 1080, 1, 128, 0},
                                           ApplyCase{1921, 1081, 1, 15, 0}, ApplyCase{1921, 1081, 1, 0, 1},
                                           ApplyCase{1920, 1080, 2, 0, 0}, ApplyCase{1921, 1081, 2, 30, 2},
                                           ApplyCase{33, 7, 2, 2, 6}, ApplyCase{4099, 2, 1, 13, 3}));

video::SyntheticOptions synthetic(int w, int h, int depth, int frames) {
  video::SyntheticOptions o;
  o.width = w;
  o.height = h;
  o.bit_depth = depth;
  o.fps = 60;
  o.duration_s = frames / 60.0;
  return o;
}

Result<PipelineRun> run_on(const video::SyntheticOptions& o, const pipeline::EqualizerOptions& eo) {
  auto src = video::open_synthetic(o);
  if (!src) return src.status();
  pipeline::PipelineOptions po;
  po.equalizer = eo;
  po.queue_frames = 3;
  return run_pipeline(**src, po);
}

struct PipelineCase {
  std::string kernel;
  int width, height, depth, frames;
  double strength;
  int in_flight;
};

void PrintTo(const PipelineCase& c, std::ostream* os) {
  *os << c.kernel << " " << c.width << "x" << c.height << " " << c.depth << "-bit, " << c.frames << " frames, strength "
      << c.strength << ", " << c.in_flight << " in flight";
}

std::vector<PipelineCase> pipeline_cases() {
  std::vector<PipelineCase> out;
  for (const auto& e : hist::registry()) {
    if (e.info.backend != Backend::gpu) continue;
    if (e.info.supports(1, 256)) {
      out.push_back({e.info.name, 1920, 1080, 8, 8, 1.0, 3});
      out.push_back({e.info.name, 1921, 1081, 8, 5, 0.37, 2});
    }
    if (e.info.supports(2, 1024)) out.push_back({e.info.name, 1921, 1081, 10, 5, 1.0, 3});
  }
  // The fade reaches a one-value frame at 5.25 s; many small frames stress slot reuse.
  out.push_back({"method2", 64, 36, 8, 330, 1.0, 2});
  out.push_back({"method2", 64, 36, 8, 330, 0.5, 6});
  out.push_back({"method2", 2, 2, 8, 10, 1.0, 3});
  return out;
}

class GpuPipeline : public ::testing::TestWithParam<PipelineCase> {};

TEST_P(GpuPipeline, BitIdenticalToCpu) {
  REQUIRE_GPU();
  const PipelineCase c = GetParam();
  const auto o = synthetic(c.width, c.height, c.depth, c.frames);
  pipeline::EqualizerOptions cpu;
  cpu.cpu = true;
  cpu.strength = c.strength;
  auto want = run_on(o, cpu);
  ASSERT_TRUE(want.is_ok()) << want.status().to_string();
  pipeline::EqualizerOptions gpu;
  gpu.kernel = c.kernel;
  gpu.strength = c.strength;
  gpu.frames_in_flight = c.in_flight;
  auto got = run_on(o, gpu);
  ASSERT_TRUE(got.is_ok()) << got.status().to_string();
  EXPECT_EQ(got->equalizer.backend, Backend::gpu);
  ASSERT_EQ(got->frames.size(), want->frames.size());
  for (size_t i = 0; i < want->frames.size(); ++i) {
    ASSERT_TRUE(got->frames[i] == want->frames[i]) << c.kernel << " frame " << i;
    ASSERT_EQ(got->frames[i].pts, want->frames[i].pts);
    const auto& t = got->records[i].timing;
    // The fused kernel's frames have one "equalize" row; the others histogram, lut and apply.
    const bool fused = c.kernel == eq::kFusedKernel;
    std::vector<video::StageId> rows = {video::stage::upload, video::stage::download};
    if (fused) rows.push_back(video::stage_id("equalize"));
    else for (const char* n : {"histogram", "lut", "apply"}) rows.push_back(video::stage_id(n));
    for (auto s : rows) {
      ASSERT_TRUE(t.has(s)) << video::stage_name(s);
      EXPECT_GE(t.get(s), 0.0f);
    }
    EXPECT_EQ(t.has(video::stage_id("histogram")), !fused);
  }
}

INSTANTIATE_TEST_SUITE_P(Kernels, GpuPipeline, ::testing::ValuesIn(pipeline_cases()),
                         [](const ::testing::TestParamInfo<PipelineCase>& i) {
                           const auto& c = i.param;
                           return c.kernel + "_" + std::to_string(c.width) + "x" + std::to_string(c.height) + "_" +
                                  std::to_string(c.depth) + "bit_s" + std::to_string(static_cast<int>(c.strength * 100)) +
                                  "_f" + std::to_string(c.in_flight) + "_" + std::to_string(i.index);
                         });

// A display sink reads frames from the device: all three planes stay there, the luma equalized.
TEST(GpuPipeline, KeepsFramesOnTheDeviceForADisplay) {
  REQUIRE_GPU();
  const auto o = synthetic(1921, 1081, 8, 6);
  pipeline::EqualizerOptions cpu;
  cpu.cpu = true;
  auto want = run_on(o, cpu);
  ASSERT_TRUE(want.is_ok());
  pipeline::EqualizerOptions gpu;
  gpu.download = false;
  gpu.keep_on_device = true;
  auto got = run_on(o, gpu);
  ASSERT_TRUE(got.is_ok()) << got.status().to_string();
  ASSERT_EQ(got->device_frames.size(), want->frames.size());
  for (size_t i = 0; i < want->frames.size(); ++i) {
    ASSERT_EQ(got->device_frames[i].planes.size(), 3u);
    EXPECT_TRUE(got->device_frames[i] == want->frames[i]) << "frame " << i;
  }
}

// A frame that is already on the device (a GPU source) is equalized where it is: no upload, and
// with download the host sink still gets all planes, bit-identical to the CPU.
class DeviceSource final : public video::Source {
 public:
  explicit DeviceSource(std::unique_ptr<video::Source> host) : host_(std::move(host)) {}
  const video::SourceInfo& info() const override { return host_->info(); }
  video::SourceCounters counters() const override { return host_->counters(); }
  Result<video::FramePtr> next(video::FramePool& pool) override {
    (void)pool;  // frames come from our device pool: a GPU decoder does the same
    if (!host_pool_) {
      auto h = video::FramePool::create(info().format, MemoryKind::host);
      auto d = video::FramePool::create(info().format, MemoryKind::device);
      if (!h) return h.status();
      if (!d) return d.status();
      host_pool_ = std::move(h.value());
      dev_pool_ = std::move(d.value());
    }
    auto f = host_->next(*host_pool_);
    if (!f || !f.value()) return f;
    auto d = dev_pool_->get();
    if (!d) return d.status();
    for (int i = 0; i < (*f)->plane_count(); ++i) {
      const PlaneRef src = (*f)->plane(i);
      const PlaneRef dst = (*d)->plane(i);
      HISTEQ_CUDA_TRY(cudaMemcpy2D(const_cast<void*>(dst.data), dst.pitch, src.data, src.pitch, src.row_bytes(), src.height,
                                   cudaMemcpyHostToDevice));
    }
    (*d)->copy_props_from(**f);
    return std::move(d.value());
  }

 private:
  std::unique_ptr<video::Source> host_;
  std::unique_ptr<video::FramePool> host_pool_, dev_pool_;
};

TEST(GpuPipeline, EqualizesDeviceFramesWithoutAnUpload) {
  REQUIRE_GPU();
  for (int depth : {8, 10}) {
    const auto o = synthetic(641, 359, depth, 6);
    pipeline::EqualizerOptions cpu;
    cpu.cpu = true;
    auto want = run_on(o, cpu);
    ASSERT_TRUE(want.is_ok());
    for (bool keep : {false, true}) {
      auto host = video::open_synthetic(o);
      ASSERT_TRUE(host.is_ok());
      DeviceSource src(std::move(host.value()));
      pipeline::PipelineOptions po;
      po.equalizer.download = !keep;
      po.equalizer.keep_on_device = keep;
      auto got = run_pipeline(src, po);
      ASSERT_TRUE(got.is_ok()) << got.status().to_string();
      ASSERT_EQ(got->frames.size(), want->frames.size());
      EXPECT_EQ(got->device_frames.size(), keep ? want->frames.size() : 0u);
      for (size_t i = 0; i < want->frames.size(); ++i) {
        EXPECT_TRUE(got->frames[i] == want->frames[i]) << depth << "-bit frame " << i << (keep ? " (device)" : " (host)");
        const auto& t = got->records[i].timing;
        EXPECT_FALSE(t.has(video::stage::upload)) << "a device frame needs no upload";
        EXPECT_EQ(t.has(video::stage::download), !keep);
        EXPECT_TRUE(t.has(video::stage_id("equalize"))) << "the default kernel equalizes in one fused launch";
      }
    }
  }
}

// End to end through files: decode, equalize, encode losslessly (ffv1); the CPU and GPU outputs
// must be the same frames, and as many as went in. On synthetic 8- and 10-bit clips of an odd size,
// and on the clip named by HISTEQ_TEST_CLIP when set (tools/device/device_run.sh passes the real clip).
void expect_same_exports(const std::string& in, int64_t frames) {
  const std::string out_cpu = temp_path("cpu.mkv"), out_gpu = temp_path("gpu.mkv");
  for (bool gpu : {false, true}) {
    pipeline::ExportOptions eo;
    eo.input = in;
    eo.output = gpu ? out_gpu : out_cpu;
    eo.codec = "ffv1";
    eo.pipeline.equalizer.cpu = !gpu;
    auto x = pipeline::Exporter::open(eo);
    ASSERT_TRUE(x.is_ok()) << x.status().to_string();
    EXPECT_EQ((*x)->plan().equalizer.backend, gpu ? Backend::gpu : Backend::cpu);
    std::atomic<bool> stop{false};
    auto r = (*x)->run(stop, nullptr, nullptr);
    ASSERT_TRUE(r.is_ok()) << r.status().to_string();
    if (frames > 0) {
      EXPECT_EQ(r->frames_in, frames);
    }
    EXPECT_EQ(r->frames_out, r->frames_in);
  }
  auto a = read_frames(out_cpu);
  auto b = read_frames(out_gpu);
  ASSERT_TRUE(a.is_ok() && b.is_ok());
  ASSERT_EQ(a->size(), b->size());
  if (frames > 0) {
    ASSERT_EQ(a->size(), static_cast<size_t>(frames));
  }
  for (size_t i = 0; i < a->size(); ++i) ASSERT_TRUE((*a)[i] == (*b)[i]) << in << " frame " << i;
  for (const auto& p : {out_cpu, out_gpu}) ::unlink(p.c_str());
}

TEST(GpuExport, BitIdenticalToCpuExport) {
  REQUIRE_GPU();
  for (int depth : {8, 10}) {
    const std::string in = temp_path("gpu-in.mkv");
    ASSERT_OK(write_synthetic_clip(in, synthetic(1921, 1081, depth, 30)));
    expect_same_exports(in, 30);
    ::unlink(in.c_str());
  }
}

TEST(GpuExport, BitIdenticalToCpuExportOnTheRealClip) {
  REQUIRE_GPU();
  const char* clip = std::getenv("HISTEQ_TEST_CLIP");
  if (clip == nullptr || *clip == '\0') GTEST_SKIP() << "HISTEQ_TEST_CLIP is not set";
  expect_same_exports(clip, 0);
}

}  // namespace
}  // namespace histeq::test
