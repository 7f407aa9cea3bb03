// The public C++ API on the device (each test skips itself without one): device images of every
// format equalized where they are, bit-identical to the CPU's (and so to `histeq export`'s);
// ordered after the caller's work on its stream, with no host round trip; histograms on the device
// equal to the CPU's.
#include <gtest/gtest.h>

#include <cuda_runtime.h>

#include <chrono>
#include <cstring>
#include <memory>

#include "core/cuda/device.h"
#include "core/histogram/histogram.h"
#include "histeq/histeq.hpp"
#include "tests/common/api_cases.h"
#include "tests/common/gtest_status.h"

namespace histeq::test {
namespace {

using api::PixelFormat;

// An ApiFrame's planes in device memory, each with its own pitch (the host pitch plus `extra`).
struct DeviceFrame {
  ApiFrame host;  // the layout and, after download(), the samples
  std::vector<void*> planes;
  std::vector<size_t> pitch;

  DeviceFrame(const ApiFrame& f, size_t extra) : host(f) {
    for (size_t i = 0; i < f.planes.size(); ++i) {
      void* p = nullptr;
      pitch.push_back(f.row_bytes(static_cast<int>(i)) + extra);
      EXPECT_EQ(cudaMalloc(&p, pitch[i] * static_cast<size_t>(f.rows(static_cast<int>(i)))), cudaSuccess);
      planes.push_back(p);
    }
    upload();
  }
  ~DeviceFrame() {
    for (void* p : planes) cudaFree(p);
  }
  DeviceFrame(const DeviceFrame&) = delete;
  DeviceFrame& operator=(const DeviceFrame&) = delete;

  void upload() {
    for (size_t i = 0; i < planes.size(); ++i)
      EXPECT_EQ(cudaMemcpy2D(planes[i], pitch[i], host.planes[i].data(), host.pitch[i], host.row_bytes(static_cast<int>(i)),
                             static_cast<size_t>(host.rows(static_cast<int>(i))), cudaMemcpyHostToDevice),
                cudaSuccess);
  }
  // The device samples, rows packed, per plane.
  std::vector<std::vector<uint8_t>> download() {
    for (size_t i = 0; i < planes.size(); ++i)
      EXPECT_EQ(cudaMemcpy2D(host.planes[i].data(), host.pitch[i], planes[i], pitch[i], host.row_bytes(static_cast<int>(i)),
                             static_cast<size_t>(host.rows(static_cast<int>(i))), cudaMemcpyDeviceToHost),
                cudaSuccess);
    std::vector<std::vector<uint8_t>> v;
    for (size_t i = 0; i < planes.size(); ++i) v.push_back(host.packed(static_cast<int>(i)));
    return v;
  }
  api::Image image() {
    api::Image im = host.image();
    im.memory = api::Memory::device;
    for (size_t i = 0; i < planes.size(); ++i) im.planes[i] = {planes[i], pitch[i]};
    return im;
  }
};

api::Settings on_gpu(EngineSettings s) {
  api::Settings a = s.api();
  EXPECT_TRUE(a.set("backend", "gpu").ok());
  return a;
}

std::vector<ApiFrame> clip(PixelFormat f, int w, int h, int frames, size_t padding) {
  std::vector<ApiFrame> v;
  for (int n = 0; n < frames; ++n) v.push_back(make_frame(f, w, h, n, padding));
  return v;
}

// For every format and a few settings: a GPU equalizer on device frames (a stream of the caller's),
// one on host frames, and core/pipeline on the CPU give the same planes.
TEST(ApiGpu, DeviceImagesOfEveryFormatEqualTheCpu) {
  REQUIRE_GPU();
  const EngineSettings settings[] = {{}, {{}, true}, {{{"mode", "clahe"}, {"tiles", "4x3"}}, false}, {{{"denoise", "4"}}, false}};
  cudaStream_t st = nullptr;
  ASSERT_EQ(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking), cudaSuccess);
  for (const EngineSettings& s : settings) {
    for (PixelFormat f : all_formats()) {
      SCOPED_TRACE(format_name(f));
      const auto frames = clip(f, 61, 37, 6, 3);
      auto want = pipeline_reference(frames, s);
      ASSERT_TRUE(want.is_ok()) << want.status().to_string();
      auto dev = api::Equalizer::create(on_gpu(s)), host = api::Equalizer::create(on_gpu(s));
      ASSERT_TRUE(dev.ok() && host.ok()) << dev.status().message();
      EXPECT_EQ(dev.value().info().backend, "gpu");
      for (size_t n = 0; n < frames.size(); ++n) {
        DeviceFrame d(frames[n], 32 + 2 * n);  // a pitch of its own for each frame
        ASSERT_TRUE(dev.value().process(d.image(), reinterpret_cast<api::Stream>(st)).ok());
        ASSERT_EQ(cudaStreamSynchronize(st), cudaSuccess);
        EXPECT_EQ(d.download(), (*want)[n]) << "device frame " << n;
        ApiFrame h = frames[n];
        ASSERT_TRUE(host.value().process(h.image()).ok());
        for (size_t i = 0; i < h.planes.size(); ++i) EXPECT_EQ(h.packed(static_cast<int>(i)), (*want)[n][i]) << "host frame " << n;
      }
    }
  }
  cudaStreamDestroy(st);
}

// A device frame into device planes elsewhere, and device frames on a CPU equalizer, give the same.
TEST(ApiGpu, OtherOutputsAndTheCpuBackendOnDeviceFrames) {
  REQUIRE_GPU();
  const auto frames = clip(PixelFormat::nv12, 64, 36, 4, 0);
  auto want = pipeline_reference(frames, {});
  ASSERT_TRUE(want.is_ok());
  auto gpu = api::Equalizer::create(on_gpu({})), cpu = api::Equalizer::create(EngineSettings{}.api());
  ASSERT_TRUE(gpu.ok() && cpu.ok());
  for (size_t n = 0; n < frames.size(); ++n) {
    DeviceFrame in(frames[n], 0), out(frames[0], 64), in2(frames[n], 16);
    ASSERT_TRUE(gpu.value().process(in.image(), out.image()).ok());
    ASSERT_TRUE(cpu.value().process(in2.image()).ok());
    EXPECT_EQ(out.download(), (*want)[n]);
    EXPECT_EQ(in.download()[0], frames[n].packed(0)) << "the input was written";
    EXPECT_EQ(in2.download(), (*want)[n]);
  }
}

// The device's nanosecond clock (independent of the SM clock, which boosts and throttles).
__device__ unsigned long long global_ns() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

// Spins for `ns` nanoseconds, then writes frame content derived from `seed` into the plane:
// work of the caller's that process() must wait for on the device.
__global__ void slow_writer(uint8_t* p, size_t pitch, int width, int height, uint32_t seed, unsigned long long ns) {
  const unsigned long long start = global_ns();
  while (global_ns() - start < ns) {
  }
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < width * height; i += gridDim.x * blockDim.x) {
    const int x = i % width, y = i / width;
    p[static_cast<size_t>(y) * pitch + x] = static_cast<uint8_t>(40 + ((x * 3 + y * 7 + seed * 11) % 120));
  }
}

uint8_t written(int x, int y, uint32_t seed) { return static_cast<uint8_t>(40 + ((x * 3 + y * 7 + seed * 11) % 120)); }

// The ordering and zero-copy contract: a kernel of the caller's writes the luma on the caller's
// stream and process() is called right after with no host synchronization; process() returns
// while that kernel still spins (so it neither waited on the host nor copied the frame to the
// host, which would have had to wait for it), and the result is the equalization of what the
// kernel wrote, in the caller's planes.
TEST(ApiGpu, OrderedOnTheCallersStreamWithNoHostRoundTrip) {
  REQUIRE_GPU();
  cudaStream_t st = nullptr;
  ASSERT_EQ(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking), cudaSuccess);
  auto e = api::Equalizer::create(on_gpu({}));
  auto ref = api::Equalizer::create(EngineSettings{}.api());
  ASSERT_TRUE(e.ok() && ref.ok());
  {  // a first frame makes what the equalizers allocate once (a cudaMalloc may wait for the device)
    ApiFrame w = make_frame(PixelFormat::yuv420p, 96, 54, 9, 0), w2 = w;
    DeviceFrame d(w, 8);
    ASSERT_TRUE(e.value().process(d.image(), reinterpret_cast<api::Stream>(st)).ok());
    ASSERT_TRUE(ref.value().process(w2.image()).ok());
    ASSERT_EQ(cudaStreamSynchronize(st), cudaSuccess);
    e.value().reset();
    ref.value().reset();
  }
  const unsigned long long spin_ns = 200ull * 1000 * 1000;  // 200 ms: far longer than process() takes to return
  for (uint32_t n = 0; n < 3; ++n) {
    ApiFrame f = make_frame(PixelFormat::yuv420p, 96, 54, static_cast<int>(n), 0);
    DeviceFrame d(f, 8);
    const void* luma = d.planes[0];
    cudaPointerAttributes a{};
    ASSERT_EQ(cudaPointerGetAttributes(&a, luma), cudaSuccess);
    ASSERT_EQ(a.type, cudaMemoryTypeDevice);
    slow_writer<<<8, 256, 0, st>>>(static_cast<uint8_t*>(d.planes[0]), d.pitch[0], 96, 54, n, spin_ns);
    const auto t0 = std::chrono::steady_clock::now();
    ASSERT_TRUE(e.value().process(d.image(), reinterpret_cast<api::Stream>(st)).ok());
    const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    EXPECT_EQ(cudaStreamQuery(st), cudaErrorNotReady) << "process() waited for the caller's stream on the host";
    EXPECT_LT(ms, 100) << "process() took as long as the caller's kernel";
    ASSERT_EQ(cudaStreamSynchronize(st), cudaSuccess);
    for (int y = 0; y < 54; ++y)
      for (int x = 0; x < 96; ++x) f.planes[0][static_cast<size_t>(y) * f.pitch[0] + x] = written(x, y, n);
    ASSERT_TRUE(ref.value().process(f.image()).ok());
    EXPECT_EQ(d.download()[0], f.packed(0)) << "frame " << n << ": not the equalization of what the kernel wrote";
    EXPECT_EQ(d.image().planes[0].data, luma);
  }
  cudaStreamDestroy(st);
}

TEST(ApiGpu, WrongDeviceAndMemoryTagsAreRefused) {
  REQUIRE_GPU();
  auto e = api::Equalizer::create(on_gpu({}));
  ASSERT_TRUE(e.ok());
  ApiFrame f = make_frame(PixelFormat::gray8, 32, 16, 0, 0);
  DeviceFrame d(f, 0);
  api::Image im = d.image();
  im.device = 1;
  api::Status s = e.value().process(im);
  EXPECT_EQ(s.code(), api::ErrorCode::invalid_argument);
  EXPECT_NE(s.message().find("tagged CUDA device 1 but is on device 0"), std::string::npos) << s.message();
  im = d.image();
  im.memory = api::Memory::host;  // device memory said to be host memory
  s = e.value().process(im);
  EXPECT_NE(s.message().find("tagged host memory but is device memory"), std::string::npos) << s.message();
  im = f.image();
  im.memory = api::Memory::device;  // and the other way round
  s = e.value().process(im);
  EXPECT_NE(s.message().find("tagged device memory but is host memory"), std::string::npos) << s.message();
}

// Every GPU kernel's histogram of a device plane equals the CPU reference's of the same samples.
TEST(ApiGpu, DeviceHistogramsEqualTheCpus) {
  REQUIRE_GPU();
  for (PixelFormat fmt : {PixelFormat::gray8, PixelFormat::gray10}) {
    const ApiFrame f = make_frame(fmt, 123, 45, 2, 5);
    DeviceFrame d(f, 6);
    const int bytes = fmt == PixelFormat::gray8 ? 1 : 2, depth = bytes == 1 ? 8 : 10;
    const api::Plane host{f.planes[0].data(), 123, 45, f.pitch[0], bytes, depth};
    const api::Plane dev{d.planes[0], 123, 45, d.pitch[0], bytes, depth, api::Memory::device, 0};
    auto want = api::histogram(host, "cpu_reference");
    ASSERT_TRUE(want.ok());
    for (const api::KernelInfo& k : api::kernels()) {
      const std::vector<int>& bins = bytes == 1 ? k.bins_8bit : k.bins_16bit;
      if (k.backend != "gpu" || std::find(bins.begin(), bins.end(), 1 << depth) == bins.end()) continue;
      auto got = api::histogram(dev, k.name);
      ASSERT_TRUE(got.ok()) << k.name << ": " << got.status().message();
      EXPECT_EQ(got.value(), want.value()) << k.name;
    }
    auto deflt = api::histogram(dev);
    ASSERT_TRUE(deflt.ok()) << deflt.status().message();
    EXPECT_EQ(deflt.value(), want.value());
  }
}

}  // namespace
}  // namespace histeq::test
