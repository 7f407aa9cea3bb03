// The GPU does the video work: the synthetic source drawn on the device, NVDEC decoding with frames
// left on the device (NV12/P010), the equalizer on those frames, exports from them, NVENC refused
// with one line where the GPU has none. Each test is skipped without a CUDA device; NVDEC tests
// also without an NVDEC engine (they say so).
#include <gtest/gtest.h>

#include <dlfcn.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <optional>

#include "core/cuda/device.h"
#include "core/image/deinterleave.h"
#include "core/pipeline/export.h"
#include "core/pipeline/pipeline.h"
#include "core/video/file_source.h"
#include "core/video/source.h"
#include "tests/common/video_helpers.h"
#include "tests/common/gtest_status.h"

namespace histeq::test {
namespace {

std::vector<uint8_t> bytes_of(const PlaneRef& p) {
  std::vector<uint8_t> out(p.row_bytes() * p.height);
  if (p.on_device()) {
    if (cudaMemcpy2D(out.data(), p.row_bytes(), p.data, p.pitch, p.row_bytes(), p.height, cudaMemcpyDeviceToHost) != cudaSuccess)
      out.clear();
  } else {
    for (int y = 0; y < p.height; ++y)
      std::memcpy(out.data() + y * p.row_bytes(), static_cast<const uint8_t*>(p.data) + y * p.pitch, p.row_bytes());
  }
  return out;
}

// A frame's planes as planar Y, U, V bytes (NV12/P010 split, P010 shifted down to 10-bit values).
std::vector<std::vector<uint8_t>> planar_bytes(const video::Frame& f) {
  std::vector<std::vector<uint8_t>> out;
  if (f.format().layout == video::PlaneLayout::planar) {
    for (int i = 0; i < 3; ++i) out.push_back(bytes_of(f.plane(i)));
    return out;
  }
  out.push_back(bytes_of(f.plane(0)));
  const std::vector<uint8_t> uv = bytes_of(f.plane(1));
  const int bps = f.format().bytes_per_sample();
  const size_t n = uv.size() / 2 / bps;
  std::vector<uint8_t> u(n * bps), v(n * bps);
  for (size_t i = 0; i < n; ++i)
    for (int b = 0; b < bps; ++b) {
      u[i * bps + b] = uv[(2 * i) * bps + b];
      v[i * bps + b] = uv[(2 * i + 1) * bps + b];
    }
  out.push_back(std::move(u));
  out.push_back(std::move(v));
  const int shift = f.format().sample_shift();
  if (shift > 0)
    for (auto& plane : out)
      for (size_t i = 0; i + 1 < plane.size(); i += 2) {
        uint16_t s;
        std::memcpy(&s, &plane[i], 2);
        s = static_cast<uint16_t>(s >> shift);
        std::memcpy(&plane[i], &s, 2);
      }
  return out;
}

TEST(GpuSynthetic, DrawsTheCpuSourcesFramesBitForBit) {
  REQUIRE_GPU();
  for (int depth : {8, 10})
    for (auto [w, h] : {std::pair{1921, 1081}, std::pair{640, 360}, std::pair{2, 2}}) {
      video::SyntheticOptions o;
      o.width = w;
      o.height = h;
      o.bit_depth = depth;
      o.fps = 4;  // 32 frames over 8 s: the fade to one value (4.5 .. 6 s) included
      o.duration_s = 8;
      auto cpu = video::open_synthetic(o);
      o.on_gpu = true;
      auto gpu = video::open_synthetic(o);
      ASSERT_TRUE(cpu.is_ok() && gpu.is_ok()) << gpu.status().to_string();
      EXPECT_NE((*gpu)->info().decoder.find("GPU"), std::string::npos) << (*gpu)->info().decoder;
      auto pool = video::FramePool::create((*cpu)->info().format, MemoryKind::host);
      ASSERT_TRUE(pool.is_ok());
      for (int n = 0;; ++n) {
        auto a = (*cpu)->next(**pool);
        auto b = (*gpu)->next(**pool);
        ASSERT_TRUE(a.is_ok() && b.is_ok());
        ASSERT_EQ(a.value() == nullptr, b.value() == nullptr);
        if (!a.value()) break;
        ASSERT_TRUE((*b)->on_device());
        EXPECT_EQ((*a)->time_s, (*b)->time_s);
        for (int i = 0; i < 3; ++i)
          ASSERT_EQ(bytes_of((*a)->plane(i)), bytes_of((*b)->plane(i)))
              << w << "x" << h << " " << depth << "-bit frame " << n << " plane " << i;
      }
    }
}

// P010 (values in the high bits) equalizes to the planar 10-bit result shifted up: the GPU on device
// P010 frames and the CPU on host P010 frames give the same frames.
TEST(GpuPipeline, EqualizesP010AsPlanarTenBit) {
  REQUIRE_GPU();
  const int w = 642, h = 362;
  video::SyntheticOptions o;
  o.width = w;
  o.height = h;
  o.bit_depth = 10;
  o.fps = 30;
  o.duration_s = 0.2;
  auto src = video::open_synthetic(o);
  ASSERT_TRUE(src.is_ok());
  auto pool = video::FramePool::create((*src)->info().format, MemoryKind::host);
  video::FrameFormat p010{w, h, 10, 1, 1, video::PlaneLayout::semi_planar};
  auto host_pool = video::FramePool::create(p010, MemoryKind::host);
  auto dev_pool = video::FramePool::create(p010, MemoryKind::device);
  ASSERT_TRUE(pool.is_ok() && host_pool.is_ok() && dev_pool.is_ok());
  pipeline::EqualizerOptions gpu_opts;
  gpu_opts.download = false;
  gpu_opts.keep_on_device = false;
  pipeline::EqualizerOptions cpu_opts;
  cpu_opts.cpu = true;
  auto geq = pipeline::Equalizer::create(gpu_opts, p010);
  auto ceq = pipeline::Equalizer::create(cpu_opts, p010);
  auto ref = pipeline::Equalizer::create(cpu_opts, (*src)->info().format);
  ASSERT_TRUE(geq.is_ok()) << geq.status().to_string();
  ASSERT_TRUE(ceq.is_ok() && ref.is_ok());
  for (;;) {
    auto f = (*src)->next(**pool);
    ASSERT_TRUE(f.is_ok());
    if (!f.value()) break;
    // The same picture as P010, on the host and on the device.
    auto hp = (*host_pool)->get();
    auto dp = (*dev_pool)->get();
    ASSERT_TRUE(hp.is_ok() && dp.is_ok());
    const auto Y = (*f)->plane16(0), U = (*f)->plane16(1), V = (*f)->plane16(2);
    const auto HY = (*hp)->plane16(0), HUV = (*hp)->plane16(1);
    for (int y = 0; y < h; ++y)
      for (int x = 0; x < w; ++x) HY.row(y)[x] = static_cast<uint16_t>(Y.row(y)[x] << 6);
    for (int y = 0; y < U.height; ++y)
      for (int x = 0; x < U.width; ++x) {
        HUV.row(y)[2 * x] = static_cast<uint16_t>(U.row(y)[x] << 6);
        HUV.row(y)[2 * x + 1] = static_cast<uint16_t>(V.row(y)[x] << 6);
      }
    for (int i = 0; i < 2; ++i) {
      const PlaneRef s = (*hp)->plane(i), d = (*dp)->plane(i);
      ASSERT_EQ(cudaMemcpy2D(const_cast<void*>(d.data), d.pitch, s.data, s.pitch, s.row_bytes(), s.height, cudaMemcpyHostToDevice),
                cudaSuccess);
    }
    std::vector<pipeline::PipelineFrame> g, c, r;
    ASSERT_OK((*geq)->submit(std::move(dp.value()), g));
    ASSERT_OK((*geq)->flush(g));
    ASSERT_OK((*ceq)->submit(std::move(hp.value()), c));
    ASSERT_OK((*ref)->submit(std::move(f.value()), r));
    ASSERT_EQ(g.size(), 1u);
    ASSERT_EQ(c.size(), 1u);
    ASSERT_EQ(r.size(), 1u);
    ASSERT_TRUE(g[0].frame->on_device());
    const auto gp = planar_bytes(*g[0].frame), cp = planar_bytes(*c[0].frame), rp = planar_bytes(*r[0].frame);
    EXPECT_EQ(gp, cp) << "GPU and CPU differ on P010";
    EXPECT_EQ(cp, rp) << "P010 does not equalize as planar 10-bit";
  }
}

// An H.264 clip of our own (libx264), or the real clip the device script names.
class Nvdec : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!cuda::have_device()) GTEST_SKIP() << "no CUDA device on this machine";
    video::SyntheticOptions o;
    o.width = 642;
    o.height = 360;
    o.fps = 30;
    o.duration_s = 1;
    clip_ = temp_path("nvdec.mp4");
    ASSERT_OK(write_synthetic_clip(clip_, o, "libx264"));
    video::FileSourceOptions fo;
    fo.hwdec = video::HwDecode::nvdec;
    auto s = video::FileSource::open(clip_, fo);
    ASSERT_TRUE(s.is_ok()) << s.status().to_string();
    if ((*s)->info().decoder.rfind("NVDEC", 0) != 0) GTEST_SKIP() << "no NVDEC here: " << (*s)->info().decode_note;
  }
  void TearDown() override {
    if (!clip_.empty()) ::unlink(clip_.c_str());
  }
  std::string clip_;
};

void expect_same_decode(const std::string& clip, bool expect_gpu) {
  video::FileSourceOptions hw;
  hw.hwdec = video::HwDecode::nvdec;
  auto a = video::FileSource::open(clip, hw);
  auto b = video::FileSource::open(clip);
  ASSERT_TRUE(a.is_ok() && b.is_ok()) << a.status().to_string();
  const video::SourceInfo& ai = (*a)->info();
  EXPECT_EQ(ai.decoder.rfind("NVDEC", 0) == 0, expect_gpu) << ai.decoder << "; " << ai.decode_note;
  if (expect_gpu) {
    EXPECT_EQ(ai.format.layout, video::PlaneLayout::semi_planar);
  } else {
    EXPECT_FALSE(ai.decode_note.empty()) << "a fallback must say why";
  }
  auto pa = video::FramePool::create(ai.format, MemoryKind::pinned);
  auto pb = video::FramePool::create((*b)->info().format, MemoryKind::host);
  ASSERT_TRUE(pa.is_ok() && pb.is_ok());
  int n = 0;
  for (;; ++n) {
    auto fa = (*a)->next(**pa);
    auto fb = (*b)->next(**pb);
    ASSERT_TRUE(fa.is_ok()) << fa.status().to_string();
    ASSERT_TRUE(fb.is_ok());
    ASSERT_EQ(fa.value() == nullptr, fb.value() == nullptr) << "frame " << n;
    if (!fa.value()) break;
    EXPECT_EQ((*fa)->on_device(), expect_gpu);
    EXPECT_EQ((*fa)->pts, (*fb)->pts);
    // H.264 decoding is exact: NVDEC gives the software decoder's samples.
    EXPECT_EQ(planar_bytes(**fa), planar_bytes(**fb)) << clip << " frame " << n;
  }
  EXPECT_GT(n, 0);
}

TEST_F(Nvdec, DecodesOnTheGpuTheSoftwareDecodersFrames) {
  expect_same_decode(clip_, true);
  if (const char* real = std::getenv("HISTEQ_TEST_CLIP")) expect_same_decode(real, true);
  // 10-bit: HEVC Main 10 comes out of NVDEC as P010 (tools/device/prepare_device.sh makes the clip).
  if (const char* hevc10 = std::getenv("HISTEQ_TEST_HEVC10")) expect_same_decode(hevc10, true);
}

TEST_F(Nvdec, FallsBackToSoftwareWithANoteForWhatNvdecCannotDecode) {
  video::SyntheticOptions o;
  o.width = 320;
  o.height = 240;
  o.fps = 30;
  o.duration_s = 0.5;
  // H.264 4:4:4 and H.264 High 10: NVDEC takes neither.
  video::FrameFormat yuv444{320, 240, 8, 0, 0};
  const std::string c444 = temp_path("444.mp4"), c10 = temp_path("high10.mp4");
  ASSERT_OK(write_synthetic_clip(c444, o, "libx264", &yuv444));
  o.bit_depth = 10;
  ASSERT_OK(write_synthetic_clip(c10, o, "libx264"));
  expect_same_decode(c444, false);
  expect_same_decode(c10, false);
  ::unlink(c444.c_str());
  ::unlink(c10.c_str());
}

// An export from NVDEC frames (equalized on the GPU, downloaded, converted for the encoder) writes
// the frames of the software path, bit for bit (ffv1 is lossless).
TEST_F(Nvdec, ExportsFromGpuFramesTheSameFramesAsFromSoftwareDecoding) {
  std::string out[2];
  for (int i = 0; i < 2; ++i) {
    pipeline::ExportOptions eo;
    eo.input = clip_;
    eo.output = out[i] = temp_path(i == 0 ? "sw.mkv" : "hw.mkv");
    eo.codec = "ffv1";
    eo.hwdec = i == 0 ? video::HwDecode::none : video::HwDecode::nvdec;
    auto x = pipeline::Exporter::open(eo);
    ASSERT_TRUE(x.is_ok()) << x.status().to_string();
    EXPECT_EQ((*x)->plan().decoder.rfind("NVDEC", 0) == 0, i == 1) << (*x)->plan().decoder;
    std::atomic<bool> stop{false};
    auto r = (*x)->run(stop, nullptr, {});
    ASSERT_TRUE(r.is_ok()) << r.status().to_string();
    EXPECT_EQ(r->frames_in, r->frames_out);
  }
  auto a = read_frames(out[0]);
  auto b = read_frames(out[1]);
  ASSERT_TRUE(a.is_ok() && b.is_ok());
  ASSERT_EQ(a->size(), b->size());
  for (size_t i = 0; i < a->size(); ++i) EXPECT_TRUE((*a)[i] == (*b)[i]) << "frame " << i;
  for (auto& p : out) ::unlink(p.c_str());
}

TEST_F(Nvdec, PlaysFromGpuFramesWithoutAnUpload) {
  video::FileSourceOptions fo;
  fo.hwdec = video::HwDecode::nvdec;
  auto s = video::FileSource::open(clip_, fo);
  ASSERT_TRUE(s.is_ok());
  pipeline::PipelineOptions po;
  po.equalizer.download = false;
  po.equalizer.keep_on_device = true;
  po.equalizer.keep_input_luma = true;
  auto run = run_pipeline(**s, po);
  ASSERT_TRUE(run.is_ok()) << run.status().to_string();
  ASSERT_FALSE(run->records.empty());
  for (const auto& r : run->records) {
    EXPECT_FALSE(r.timing.has(video::stage::upload));
    EXPECT_TRUE(r.timing.has(video::stage_id("equalize")));  // the default kernel: one fused launch
  }
  EXPECT_EQ(run->device_frames.size(), run->frames.size());
}

// NVENC: encodes where the GPU has the engine; elsewhere (the H100/H200 have none) one clear line.
TEST(Nvenc, EncodesOrRefusesInOneLine) {
  REQUIRE_GPU();
  video::SyntheticOptions o;
  o.width = 320;
  o.height = 240;
  o.fps = 30;
  o.duration_s = 0.5;
  const std::string in = temp_path("nvenc_in.mkv");
  ASSERT_OK(write_synthetic_clip(in, o, "ffv1"));
  for (const char* codec : {"h264_nvenc", "hevc_nvenc"}) {
    pipeline::ExportOptions eo;
    eo.input = in;
    eo.output = temp_path(std::string(codec) + ".mp4");
    eo.codec = codec;
    auto x = pipeline::Exporter::open(eo);
    if (x.is_ok()) {
      std::atomic<bool> stop{false};
      auto r = (*x)->run(stop, nullptr, {});
      EXPECT_TRUE(r.is_ok()) << r.status().to_string();
      ::unlink(eo.output.c_str());
      continue;
    }
    const std::string m = x.status().to_string();
    EXPECT_EQ(m.find('\n'), std::string::npos) << m;
    EXPECT_NE(m.find(codec), std::string::npos) << m;
    EXPECT_TRUE(m.find("NVENC") != std::string::npos || m.find("no encoder named") != std::string::npos) << m;
    EXPECT_NE(::access(eo.output.c_str(), F_OK), 0) << "no output after a refusal";
    std::printf("  %s: %s\n", codec, m.c_str());
  }
  ::unlink(in.c_str());
}

// Whether this process holds device 0's primary context, asked of the driver (loaded here: the
// tests link the runtime only); nothing where the driver does not answer.
std::optional<bool> primary_context_active() {
  void* lib = dlopen("libcuda.so.1", RTLD_NOW);
  if (lib == nullptr) return std::nullopt;
  using Init = int (*)(unsigned);
  using Get = int (*)(int*, int);
  using State = int (*)(int, unsigned*, int*);
  auto init = reinterpret_cast<Init>(dlsym(lib, "cuInit"));
  auto get = reinterpret_cast<Get>(dlsym(lib, "cuDeviceGet"));
  auto state = reinterpret_cast<State>(dlsym(lib, "cuDevicePrimaryCtxGetState"));
  int dev = 0, active = 0;
  unsigned flags = 0;
  if (init == nullptr || get == nullptr || state == nullptr || init(0) != 0 || get(&dev, 0) != 0 || state(dev, &flags, &active) != 0)
    return std::nullopt;
  return active != 0;
}

// The CPU path on a machine with a GPU: a CPU pipeline (export --cpu, play --cpu) never creates a
// CUDA context, which costs 0.4 s on an H200 host (its destructor once synchronized a stream it
// never made, at the end of every CPU export). Checked in a process of its own (the death test's
// threadsafe style runs this test again alone), so that no earlier test's context counts.
// Not REQUIRE_GPU: the runtime's first question about devices sets the context's flags, which
// activates it; the driver alone is asked whether there is a device.
TEST(CpuPathOnAGpuMachine, ACpuPipelineCreatesNoCudaContext) {
  if (!primary_context_active().has_value()) GTEST_SKIP() << "no CUDA device on this machine";
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        if (primary_context_active() != std::optional<bool>(false)) std::_Exit(2);  // the check cannot tell here
        video::SyntheticOptions o = synthetic_clip(640, 360, 6);
        auto src = video::open_synthetic(o);
        if (!src.is_ok()) std::_Exit(3);
        pipeline::PipelineOptions po;
        po.equalizer.cpu = true;
        auto run = run_pipeline(**src, po);
        if (!run.is_ok() || run->frames.size() != 6) std::_Exit(4);
        std::_Exit(primary_context_active() == std::optional<bool>(false) ? 0 : 1);
      },
      ::testing::ExitedWithCode(0), "");
}

}  // namespace
}  // namespace histeq::test
