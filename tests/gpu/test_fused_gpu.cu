// The fused equalizer (core/equalize/ops/equalize/fused_gpu.h): one launch per frame, bit-identical to the CPU
// equalizer and to the unfused GPU path, on every shape, pitch, alignment, bit depth, strength and
// content (one-value frames too), with one instance (one scratch) serving many frames and sizes;
// and a caller's LUT builder plugged in through run_with(). Without a CUDA device every test here
// reports itself SKIPPED.
#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <vector>

#include "core/cuda/check.h"
#include "core/cuda/device.h"
#include "core/cuda/resources.h"
#include "core/equalize/equalize.h"
#include "core/equalize/ops/equalize/fused_gpu.cuh"
#include "core/histogram/histogram.h"
#include "core/image/synthetic.h"
#include "tests/common/gtest_status.h"

namespace histeq::test {
namespace {

struct Shape {
  int width, height;
  int bytes;           // 1 or 2 (16-bit planes hold 10-bit data)
  size_t extra_pitch;  // bytes past the row
  size_t offset;       // bytes from the allocation's start: > 0 misaligns the rows
};

void PrintTo(const Shape& c, std::ostream* os) {
  *os << c.width << "x" << c.height << " " << 8 * c.bytes << "-bit, pitch +" << c.extra_pitch << ", offset " << c.offset;
}

// A host allocation: the plane at `offset`, every other byte poison.
struct HostFrame {
  Shape s;
  size_t pitch = 0;
  std::vector<uint8_t> bytes;
  int depth() const { return s.bytes == 1 ? 8 : 10; }
  int bins() const { return 1 << depth(); }
  uint8_t* plane() { return bytes.data() + s.offset; }
};

// content: 0 natural, 1 uniform, 2 one value (`value`), 3 gaussian (sigma 8 in 8-bit units).
HostFrame make_frame(const Shape& s, int content, uint32_t seed, uint32_t value = 0) {
  HostFrame f;
  f.s = s;
  f.pitch = static_cast<size_t>(s.width) * s.bytes + s.extra_pitch;
  f.bytes.assign(s.offset + f.pitch * s.height + 64, 0xC3);
  const synth::Pattern p = content == 0   ? synth::Pattern::natural
                           : content == 1 ? synth::Pattern::uniform
                           : content == 2 ? synth::Pattern::degenerate
                                          : synth::Pattern::gaussian;
  const uint32_t v = content == 3 ? 8u << (f.depth() - 8) : value;
  if (s.bytes == 1) {
    EXPECT_TRUE(synth::fill_host(PlaneView<uint8_t>{f.plane(), s.width, s.height, f.pitch, 8, MemoryKind::host}, p, seed, v).is_ok());
  } else {
    PlaneView<uint16_t> pv{reinterpret_cast<uint16_t*>(f.plane()), s.width, s.height, f.pitch, 10, MemoryKind::host};
    EXPECT_TRUE(synth::fill_host(pv, p, seed, v).is_ok());
    if (content != 2)  // a few samples past 10 bits: neither counted nor changed
      for (int y = 0; y < s.height; ++y)
        for (int x = y % 11; x < s.width; x += 11) pv.row(y)[x] = static_cast<uint16_t>(1024 + synth::hash_xy(x, y, seed) % 64000);
    // The padding must not be read either: 16-bit synth fill leaves it poisoned (0xC3C3 is out of range).
  }
  return f;
}

// The CPU equalizer on the host frame: expected frame, histogram, LUT.
void cpu_equalize(HostFrame& f, uint32_t weight, const eq::Levels& levels, std::vector<uint32_t>& hist, std::vector<uint16_t>& lut) {
  const int bins = f.bins();
  hist.assign(bins, 0);
  for (int y = 0; y < f.s.height; ++y)
    for (int x = 0; x < f.s.width; ++x) {
      const uint8_t* p = f.plane() + y * f.pitch + x * f.s.bytes;
      uint32_t v = p[0];
      if (f.s.bytes == 2) std::memcpy(&v, p, 2), v &= 0xFFFF;
      if (v < static_cast<uint32_t>(bins)) ++hist[v];
    }
  lut.assign(bins, 0);
  ASSERT_OK(eq::build_lut(hist.data(), bins, weight, levels, lut.data()));
  if (f.s.bytes == 1)
    ASSERT_OK(eq::apply_lut(PlaneView<uint8_t>{f.plane(), f.s.width, f.s.height, f.pitch, 8, MemoryKind::host}, lut.data(), bins));
  else
    ASSERT_OK(eq::apply_lut(PlaneView<uint16_t>{reinterpret_cast<uint16_t*>(f.plane()), f.s.width, f.s.height, f.pitch, 10,
                                                MemoryKind::host},
                            lut.data(), bins));
}

// A device copy of a host frame, equalized by `fe` (outputs poisoned first), copied back.
struct DeviceRun {
  std::vector<uint8_t> bytes;
  std::vector<uint32_t> hist;
  std::vector<uint16_t> lut;
};

template <class Run>
DeviceRun run_on_device(const HostFrame& f, cudaStream_t stream, Run&& run) {
  DeviceRun out;
  auto buf = cuda::Buffer::allocate(MemoryKind::device, f.bytes.size());
  auto dh = cuda::DeviceArray<uint32_t>::allocate(1024);
  auto dl = cuda::DeviceArray<uint16_t>::allocate(1024);
  EXPECT_TRUE(buf.is_ok() && dh.is_ok() && dl.is_ok());
  // All on the kernel's stream: a legacy-stream copy or memset is not ordered with it.
  EXPECT_TRUE(HISTEQ_CUDA_STATUS(cudaMemcpyAsync(buf->data(), f.bytes.data(), f.bytes.size(), cudaMemcpyHostToDevice, stream)).is_ok());
  EXPECT_TRUE(HISTEQ_CUDA_STATUS(cudaMemsetAsync(dh->data(), 0xA5, dh->bytes(), stream)).is_ok());
  EXPECT_TRUE(HISTEQ_CUDA_STATUS(cudaMemsetAsync(dl->data(), 0xA5, dl->bytes(), stream)).is_ok());
  uint8_t* plane = static_cast<uint8_t*>(buf->data()) + f.s.offset;
  const Status s = run(plane, dh->data(), dl->data());
  EXPECT_TRUE(s.is_ok()) << s.to_string();
  out.bytes.resize(f.bytes.size());
  out.hist.resize(f.bins());
  out.lut.resize(f.bins());
  EXPECT_TRUE(HISTEQ_CUDA_STATUS(cudaMemcpyAsync(out.bytes.data(), buf->data(), out.bytes.size(), cudaMemcpyDeviceToHost, stream)).is_ok());
  EXPECT_TRUE(HISTEQ_CUDA_STATUS(cudaMemcpyAsync(out.hist.data(), dh->data(), 4 * f.bins(), cudaMemcpyDeviceToHost, stream)).is_ok());
  EXPECT_TRUE(HISTEQ_CUDA_STATUS(cudaMemcpyAsync(out.lut.data(), dl->data(), 2 * f.bins(), cudaMemcpyDeviceToHost, stream)).is_ok());
  EXPECT_TRUE(HISTEQ_CUDA_STATUS(cudaStreamSynchronize(stream)).is_ok());
  return out;
}

Status fused_run(eq::FusedEqualizer& fe, const HostFrame& f, uint8_t* plane, uint32_t weight, const eq::Levels& levels, uint32_t* dh,
                 uint16_t* dl, cudaStream_t stream) {
  if (f.s.bytes == 1)
    return fe.run(PlaneView<uint8_t>{plane, f.s.width, f.s.height, f.pitch, 8, MemoryKind::device}, weight, levels, stream, {dh, dl});
  return fe.run(PlaneView<uint16_t>{reinterpret_cast<uint16_t*>(plane), f.s.width, f.s.height, f.pitch, 10, MemoryKind::device},
                weight, levels, stream, {dh, dl});
}

// Limited, full and textbook levels (lut.h) of a frame's depth.
std::vector<eq::Levels> levels_of(const HostFrame& f) {
  const int depth = f.s.bytes == 1 ? 8 : 10;
  return {eq::nominal_levels(depth, false, false), eq::nominal_levels(depth, true, false), eq::nominal_levels(depth, false, true)};
}

size_t first_difference(const std::vector<uint8_t>& a, const std::vector<uint8_t>& b) {
  for (size_t i = 0; i < a.size(); ++i)
    if (a[i] != b[i]) return i;
  return a.size();
}

class FusedShapes : public ::testing::TestWithParam<Shape> {};

// Every content and three strengths, all on one instance: frame (padding and the bytes around the
// plane untouched), histogram and LUT equal to the CPU equalizer's.
TEST_P(FusedShapes, MatchesCpuOnEveryContentAndStrength) {
  REQUIRE_GPU();
  const Shape sh = GetParam();
  auto fe = eq::FusedEqualizer::create();
  ASSERT_TRUE(fe.is_ok()) << fe.status().to_string();
  auto stream = cuda::Stream::create();
  ASSERT_TRUE(stream.is_ok());
  uint32_t seed = 40;
  for (int content : {0, 1, 2, 3}) {
    for (uint32_t weight : {eq::kWeightOne, 24248u, 0u}) {
      const HostFrame in = make_frame(sh, content, ++seed, content == 2 ? 200u : 0u);
      for (const eq::Levels& lv : levels_of(in)) {
        HostFrame f = in;
        const auto dev = run_on_device(f, stream->get(), [&](uint8_t* plane, uint32_t* dh, uint16_t* dl) {
          return fused_run(*fe, f, plane, weight, lv, dh, dl, stream->get());
        });
        std::vector<uint32_t> hist;
        std::vector<uint16_t> lut;
        cpu_equalize(f, weight, lv, hist, lut);
        const std::string where = "content " + std::to_string(content) + " weight " + std::to_string(weight) + " levels " +
                                  std::to_string(lv.lo) + ".." + std::to_string(lv.hi);
        ASSERT_EQ(dev.hist, hist) << where;
        ASSERT_EQ(dev.lut, lut) << where;
        const size_t d = first_difference(dev.bytes, f.bytes);
        ASSERT_EQ(d, f.bytes.size()) << "byte " << d << ", " << where;
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Shapes, FusedShapes,
                         ::testing::Values(Shape{1, 1, 1, 0, 0}, Shape{1, 1, 2, 0, 0}, Shape{17, 3, 1, 0, 0}, Shape{31, 17, 1, 0, 0},
                                           Shape{1920, 1080, 1, 0, 0}, Shape{1920, 1080, 1, 128, 0}, Shape{1921, 1081, 1, 15, 0},
                                           Shape{1921, 1081, 1, 0, 1}, Shape{4099, 2, 1, 13, 3}, Shape{1, 4097, 1, 63, 0},
                                           Shape{1920, 1080, 2, 0, 0}, Shape{1921, 1081, 2, 30, 2}, Shape{33, 7, 2, 2, 6},
                                           Shape{3840, 2160, 1, 0, 0}, Shape{3840, 2160, 2, 256, 0}));

// The fused path and the unfused one (method2_tuned histogram, build_lut_gpu, apply_lut_gpu) give
// the same bytes.
TEST(FusedGpu, BitIdenticalToTheUnfusedGpuPath) {
  REQUIRE_GPU();
  auto fe = eq::FusedEqualizer::create();
  auto k = hist::create_kernel("method2_tuned");
  auto stream = cuda::Stream::create();
  ASSERT_TRUE(fe.is_ok() && k.is_ok() && stream.is_ok());
  const cudaStream_t s = stream->get();
  for (const Shape sh : {Shape{1920, 1080, 1, 0, 0}, Shape{1921, 1081, 2, 30, 2}, Shape{3840, 2160, 1, 64, 0}}) {
    for (uint32_t weight : {eq::kWeightOne, 40000u})
    for (const eq::Levels& lv : levels_of(make_frame(sh, 0, 7))) {
      HostFrame f = make_frame(sh, 0, 7);
      const auto fused = run_on_device(f, s, [&](uint8_t* plane, uint32_t* dh, uint16_t* dl) {
        return fused_run(*fe, f, plane, weight, lv, dh, dl, s);
      });
      const auto unfused = run_on_device(f, s, [&](uint8_t* plane, uint32_t* dh, uint16_t* dl) -> Status {
        const int bins = f.bins();
        if (sh.bytes == 1) {
          const PlaneView<uint8_t> v{plane, sh.width, sh.height, f.pitch, 8, MemoryKind::device};
          HISTEQ_TRY(hist::compute(**k, PlaneRef(v), {dh, bins, MemoryKind::device}, s));
          HISTEQ_TRY(eq::build_lut_gpu(dh, bins, weight, lv, dl, s));
          return eq::apply_lut_gpu(v, dl, bins, s);
        }
        const PlaneView<uint16_t> v{reinterpret_cast<uint16_t*>(plane), sh.width, sh.height, f.pitch, 10, MemoryKind::device};
        HISTEQ_TRY(hist::compute(**k, PlaneRef(v), {dh, bins, MemoryKind::device}, s));
        HISTEQ_TRY(eq::build_lut_gpu(dh, bins, weight, lv, dl, s));
        return eq::apply_lut_gpu(v, dl, bins, s);
      });
      EXPECT_EQ(fused.hist, unfused.hist);
      EXPECT_EQ(fused.lut, unfused.lut);
      EXPECT_EQ(first_difference(fused.bytes, unfused.bytes), fused.bytes.size());
    }
  }
}

// One-value frames (fades, black): the LUT is the identity (clamped to the levels) and the frame
// stays as it was when its value lies within them.
TEST(FusedGpu, OneValueFramesStayUnchanged) {
  REQUIRE_GPU();
  auto fe = eq::FusedEqualizer::create();
  auto stream = cuda::Stream::create();
  ASSERT_TRUE(fe.is_ok() && stream.is_ok());
  for (const Shape sh : {Shape{1920, 1080, 1, 0, 0}, Shape{1921, 1081, 2, 2, 0}}) {
    const uint32_t top = sh.bytes == 1 ? 255u : 1023u;
    for (uint32_t value : {0u, top / 2, top})
    for (const eq::Levels& lv : levels_of(make_frame(sh, 2, 1, value))) {
      HostFrame f = make_frame(sh, 2, 1, value);
      const std::vector<uint8_t> before = f.bytes;
      const auto dev = run_on_device(f, stream->get(), [&](uint8_t* plane, uint32_t* dh, uint16_t* dl) {
        return fused_run(*fe, f, plane, eq::kWeightOne, lv, dh, dl, stream->get());
      });
      if (eq::clamp_level(value, lv) == value) {
        EXPECT_EQ(first_difference(dev.bytes, before), before.size()) << "value " << value;
      }
      for (int v = 0; v < f.bins(); ++v) ASSERT_EQ(dev.lut[v], eq::clamp_level(static_cast<uint32_t>(v), lv)) << "value " << value;
      EXPECT_EQ(dev.hist[value], static_cast<uint32_t>(sh.width) * sh.height);
    }
  }
}

// One instance, frames of changing size and depth back to back on one stream, without
// synchronizing in between: the scratch (accumulator, ticket, LUT generation) must be ready for
// each next launch.
TEST(FusedGpu, OneInstanceServesChangingFrames) {
  REQUIRE_GPU();
  auto fe = eq::FusedEqualizer::create();
  auto stream = cuda::Stream::create();
  ASSERT_TRUE(fe.is_ok() && stream.is_ok());
  const cudaStream_t s = stream->get();
  const std::vector<Shape> seq = {Shape{64, 36, 1, 0, 0},     Shape{1921, 1081, 2, 0, 0}, Shape{1, 1, 1, 0, 0},
                                  Shape{3840, 2160, 1, 0, 0}, Shape{31, 17, 2, 0, 0},     Shape{1920, 1080, 1, 0, 0}};
  std::vector<HostFrame> frames;
  std::vector<cuda::Buffer> bufs;
  for (size_t i = 0; i < seq.size(); ++i) {
    frames.push_back(make_frame(seq[i], static_cast<int>(i % 4), static_cast<uint32_t>(100 + i), 77));
    auto b = cuda::Buffer::allocate(MemoryKind::device, frames.back().bytes.size());
    ASSERT_TRUE(b.is_ok());
    ASSERT_OK(HISTEQ_CUDA_STATUS(cudaMemcpyAsync(b->data(), frames.back().bytes.data(), frames.back().bytes.size(),
                                                 cudaMemcpyHostToDevice, s)));
    bufs.push_back(std::move(b.value()));
  }
  for (int round = 0; round < 3; ++round)  // three frames per buffer: equalized, then equalized again
    for (size_t i = 0; i < seq.size(); ++i)
      ASSERT_OK(fused_run(*fe, frames[i], static_cast<uint8_t*>(bufs[i].data()) + seq[i].offset, eq::kWeightOne,
                          levels_of(frames[i])[i % 3], nullptr, nullptr, s));
  ASSERT_OK(HISTEQ_CUDA_STATUS(cudaStreamSynchronize(s)));
  for (size_t i = 0; i < seq.size(); ++i) {
    std::vector<uint32_t> h;
    std::vector<uint16_t> l;
    for (int round = 0; round < 3; ++round) cpu_equalize(frames[i], eq::kWeightOne, levels_of(frames[i])[i % 3], h, l);
    std::vector<uint8_t> got(frames[i].bytes.size());
    ASSERT_OK(HISTEQ_CUDA_STATUS(cudaMemcpy(got.data(), bufs[i].data(), got.size(), cudaMemcpyDeviceToHost)));
    EXPECT_EQ(first_difference(got, frames[i].bytes), got.size()) << "frame " << i;
  }
}

TEST(FusedGpu, EmptyPlanes) {
  REQUIRE_GPU();
  auto fe = eq::FusedEqualizer::create();
  ASSERT_TRUE(fe.is_ok());
  auto dh = cuda::DeviceArray<uint32_t>::allocate(256);
  auto dl = cuda::DeviceArray<uint16_t>::allocate(256);
  ASSERT_TRUE(dh.is_ok() && dl.is_ok());
  // No outputs: nothing to do.
  EXPECT_TRUE(fe->run(PlaneView<uint8_t>{nullptr, 0, 0, 0, 8, MemoryKind::device}, eq::kWeightOne, nullptr).is_ok());
  // With outputs: an empty histogram and the identity LUT.
  ASSERT_OK(HISTEQ_CUDA_STATUS(cudaMemset(dh->data(), 0xA5, dh->bytes())));
  ASSERT_OK(HISTEQ_CUDA_STATUS(cudaMemset(dl->data(), 0xA5, dl->bytes())));
  ASSERT_OK(HISTEQ_CUDA_STATUS(cudaDeviceSynchronize()));
  ASSERT_OK(fe->run(PlaneView<uint8_t>{nullptr, 5, 0, 5, 8, MemoryKind::device}, eq::kWeightOne, nullptr, {dh->data(), dl->data()}));
  std::vector<uint32_t> h(256);
  std::vector<uint16_t> l(256);
  ASSERT_OK(HISTEQ_CUDA_STATUS(cudaMemcpy(h.data(), dh->data(), 1024, cudaMemcpyDeviceToHost)));
  ASSERT_OK(HISTEQ_CUDA_STATUS(cudaMemcpy(l.data(), dl->data(), 512, cudaMemcpyDeviceToHost)));
  for (int v = 0; v < 256; ++v) {
    ASSERT_EQ(h[v], 0u);
    ASSERT_EQ(l[v], v);
  }
}

TEST(FusedGpu, RejectsBadArguments) {
  REQUIRE_GPU();
  auto fe = eq::FusedEqualizer::create();
  ASSERT_TRUE(fe.is_ok());
  auto d = Plane8::allocate(MemoryKind::device, 64, 8);
  auto d16 = Plane16::allocate(MemoryKind::device, 64, 8, 0, 12);
  ASSERT_TRUE(d.is_ok() && d16.is_ok());
  std::vector<uint8_t> host(512, 1);
  EXPECT_EQ(fe->run(PlaneView<uint8_t>{host.data(), 64, 8, 64, 8, MemoryKind::host}, eq::kWeightOne, nullptr).code(),
            Code::invalid_argument);
  EXPECT_EQ(fe->run(d->view(), eq::kWeightOne + 1, nullptr).code(), Code::invalid_argument);
  EXPECT_EQ(fe->run(d16->view(), eq::kWeightOne, nullptr).code(), Code::invalid_argument);  // 12-bit: > 1024 bins
  PlaneView<uint8_t> bad_pitch = d->view();
  bad_pitch.pitch = 10;
  EXPECT_EQ(fe->run(bad_pitch, eq::kWeightOne, nullptr).code(), Code::invalid_argument);
  PlaneView<uint8_t> bad_depth = d->view();
  bad_depth.bit_depth = 7;
  EXPECT_EQ(fe->run(bad_depth, eq::kWeightOne, nullptr).code(), Code::invalid_argument);
  eq::FusedEqualizer unset;
  EXPECT_EQ(unset.run(d->view(), eq::kWeightOne, nullptr).code(), Code::invalid_argument);
}

// A caller's builder through the hook: the LUT inverts the picture (maxval - v), and the builder
// counts its calls in device memory it owns (state across frames, as a temporal filter would keep):
// exactly one call per frame.
struct InvertingBuilder {
  uint32_t* calls;
  __device__ void operator()(const eq::LutBuildArgs& a) const {
    if (threadIdx.x == 0) ++*calls;
    for (uint32_t v = threadIdx.x; v < a.bins; v += blockDim.x) a.lut[v] = static_cast<uint16_t>(a.bins - 1 - v);
  }
};

TEST(FusedGpu, CustomLutBuilderRunsOncePerFrame) {
  REQUIRE_GPU();
  auto fe = eq::FusedEqualizer::create();
  auto calls = cuda::DeviceArray<uint32_t>::allocate(1);
  auto stream = cuda::Stream::create();
  ASSERT_TRUE(fe.is_ok() && calls.is_ok() && stream.is_ok());
  const cudaStream_t s = stream->get();
  ASSERT_OK(HISTEQ_CUDA_STATUS(cudaMemsetAsync(calls->data(), 0, 4, s)));
  int frames = 0;
  for (const Shape sh : {Shape{1921, 1081, 1, 7, 0}, Shape{3840, 2160, 2, 0, 0}, Shape{5, 3, 1, 0, 0}}) {
    HostFrame f = make_frame(sh, 0, 9);
    const auto dev = run_on_device(f, s, [&](uint8_t* plane, uint32_t* dh, uint16_t* dl) -> Status {
      ++frames;
      if (sh.bytes == 1)
        return fe->run_with(PlaneView<uint8_t>{plane, sh.width, sh.height, f.pitch, 8, MemoryKind::device}, eq::kWeightOne,
                            InvertingBuilder{calls->data()}, s, {dh, dl});
      return fe->run_with(PlaneView<uint16_t>{reinterpret_cast<uint16_t*>(plane), sh.width, sh.height, f.pitch, 10, MemoryKind::device},
                          eq::kWeightOne, InvertingBuilder{calls->data()}, s, {dh, dl});
    });
    std::vector<uint16_t> lut(f.bins());
    for (int v = 0; v < f.bins(); ++v) lut[v] = static_cast<uint16_t>(f.bins() - 1 - v);
    if (sh.bytes == 1)
      ASSERT_OK(eq::apply_lut(PlaneView<uint8_t>{f.plane(), sh.width, sh.height, f.pitch, 8, MemoryKind::host}, lut.data(), f.bins()));
    else
      ASSERT_OK(eq::apply_lut(PlaneView<uint16_t>{reinterpret_cast<uint16_t*>(f.plane()), sh.width, sh.height, f.pitch, 10,
                                                  MemoryKind::host},
                              lut.data(), f.bins()));
    EXPECT_EQ(dev.lut, lut);
    EXPECT_EQ(first_difference(dev.bytes, f.bytes), f.bytes.size());
  }
  uint32_t n = 0;
  ASSERT_OK(HISTEQ_CUDA_STATUS(cudaMemcpyAsync(&n, calls->data(), 4, cudaMemcpyDeviceToHost, s)));
  ASSERT_OK(HISTEQ_CUDA_STATUS(cudaStreamSynchronize(s)));
  EXPECT_EQ(n, static_cast<uint32_t>(frames));
}

// The launch fills the GPU at video sizes and stays within one block for tiny planes.
TEST(FusedGpu, LaunchGeometry) {
  REQUIRE_GPU();
  auto fe = eq::FusedEqualizer::create();
  auto d = Plane8::allocate(MemoryKind::device, 3840, 2160);
  auto t = Plane8::allocate(MemoryKind::device, 7, 5);
  auto dev = cuda::device_info();
  ASSERT_TRUE(fe.is_ok() && d.is_ok() && t.is_ok() && dev.is_ok());
  ASSERT_TRUE(synth::fill_device(d->view(), synth::Pattern::natural, 1).is_ok());
  ASSERT_TRUE(synth::fill_device(t->view(), synth::Pattern::natural, 1).is_ok());
  ASSERT_OK(fe->run(d->view(), eq::kWeightOne, nullptr));
  EXPECT_EQ(fe->last_launch().blocks, dev->sm_count);
  EXPECT_GE(fe->last_launch().warps, 1);
  ASSERT_OK(fe->run(t->view(), eq::kWeightOne, nullptr));
  EXPECT_EQ(fe->last_launch().blocks, 1);
  ASSERT_OK(HISTEQ_CUDA_STATUS(cudaDeviceSynchronize()));
}

}  // namespace
}  // namespace histeq::test
