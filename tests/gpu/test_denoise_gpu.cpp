// The temporal denoiser on the GPU against the CPU (tests/unit/test_denoise.cpp has the formula's
// own tests): the filter alone on pitched planes over a sequence with motion, noise, a scene cut
// and a restart, and an equalizer whose denoiser is switched live, with settings B denoising too,
// three frames in flight. (Whole equalizers with the denoiser in every layout: the denoise_* cases
// of GpuQualityPipeline, test_quality_gpu.cpp.) Zero tolerance: integer arithmetic. Without a CUDA
// device every test is SKIPPED.
#include <gtest/gtest.h>

#include <random>

#include "core/cuda/check.h"
#include "core/cuda/device.h"
#include "core/cuda/resources.h"
#include "core/equalize/ops/denoise/denoise.h"
#include "core/equalize/quality.h"
#include "tests/common/gtest_status.h"
#include "tests/common/quality_cases.h"

namespace histeq::test {
namespace {

// One sequence through denoise_frame and denoise_frame_gpu: frames, states and sums identical.
template <class T>
void filter_matches(int w, int h, int pad, int depth, int shift) {
  auto s = cuda::Stream::create();
  ASSERT_TRUE(s.is_ok());
  const size_t pitch = sizeof(T) * static_cast<size_t>(w + pad), bytes = pitch * h;
  const size_t states = eq::kStatePlanes * static_cast<size_t>(w) * h;
  auto d_plane = cuda::Buffer::allocate(MemoryKind::device, bytes);
  auto d_state = cuda::Buffer::allocate(MemoryKind::device, states * sizeof(uint16_t));
  auto d_sums = cuda::Buffer::allocate(MemoryKind::device, 2 * sizeof(unsigned long long));
  ASSERT_TRUE(d_plane.is_ok() && d_state.is_ok() && d_sums.is_ok());
  std::vector<T> host(bytes / sizeof(T)), got(bytes / sizeof(T));
  std::vector<uint16_t> state(states), got_state(states);
  std::vector<unsigned long long> sums(2);
  std::mt19937 rng(7);
  std::normal_distribution<double> noise(0, 4);
  const uint32_t maxval = (1u << depth) - 1;
  for (int n = 0; n < 14; ++n) {
    // A textured picture panning 1 sample a frame, noise of sigma 4 levels, a cut at frame 8.
    for (int y = 0; y < h; ++y)
      for (int x = 0; x < w + pad; ++x) {
        const int u = x + n;
        double v = n >= 8 ? 150 + 40 * ((u / 9 + y / 7) % 2) : 25 + 30 * ((u / 13 + y / 11) % 2) + 0.5 * (y % 17);
        v = std::clamp(v + noise(rng), 0.0, 255.0) * (1 << (depth - 8));
        host[static_cast<size_t>(y) * (w + pad) + x] = static_cast<T>(std::min<uint32_t>(static_cast<uint32_t>(v), maxval) << shift);
      }
    ASSERT_OK(HISTEQ_CUDA_STATUS(cudaMemcpyAsync(d_plane->data(), host.data(), bytes, cudaMemcpyHostToDevice, s->get())));
    eq::DenoiseArgs a;
    a.luma = PlaneView<T>{host.data(), w, h, pitch, depth + shift, MemoryKind::host};
    a.state = state.data();
    a.sums = sums.data();
    a.parity = n & 1;
    a.restart = n == 0 || n == 11;
    a.params = eq::denoise_params(4, depth, shift);
    ASSERT_OK(eq::denoise_frame(a));
    eq::DenoiseArgs g = a;
    g.luma = PlaneView<T>{static_cast<T*>(d_plane->data()), w, h, pitch, depth + shift, MemoryKind::device};
    g.state = static_cast<uint16_t*>(d_state->data());
    g.sums = static_cast<unsigned long long*>(d_sums->data());
    ASSERT_OK(eq::denoise_frame_gpu(g, s->get()));
    ASSERT_OK(HISTEQ_CUDA_STATUS(cudaMemcpyAsync(got.data(), d_plane->data(), bytes, cudaMemcpyDeviceToHost, s->get())));
    ASSERT_OK(HISTEQ_CUDA_STATUS(cudaMemcpyAsync(got_state.data(), d_state->data(), states * 2, cudaMemcpyDeviceToHost, s->get())));
    ASSERT_OK(s->synchronize());
    ASSERT_EQ(got, host) << w << "x" << h << " depth " << depth << " frame " << n;
    const size_t plane = static_cast<size_t>(w) * h, next = static_cast<size_t>(a.parity ^ 1) * plane;
    ASSERT_TRUE(std::equal(state.begin() + next, state.begin() + next + plane, got_state.begin() + next)) << "state, frame " << n;
  }
}

TEST(GpuDenoise, TheFilterMatchesTheCpuOnEveryDepthSizeAndPitch) {
  REQUIRE_GPU();
  filter_matches<uint8_t>(1920, 1080, 0, 8, 0);
  filter_matches<uint8_t>(1921, 1081, 13, 8, 0);
  filter_matches<uint8_t>(1, 1, 0, 8, 0);
  filter_matches<uint8_t>(33, 9, 3, 8, 0);  // one block column and a partial one
  filter_matches<uint16_t>(1283, 721, 5, 10, 0);
  filter_matches<uint16_t>(640, 360, 0, 10, 6);  // P010
}

// The denoiser switched on, its sigma changed, off and on again, with settings B denoising too:
// frame for frame the CPU's frames and comparisons.
TEST(GpuDenoiseLive, LiveChangesAndTheComparisonMatchCpu) {
  REQUIRE_GPU();
  const video::FrameFormat fmt{1280, 720, 8, 1, 1};
  eq::Quality b = eq::default_quality();
  b.mode = eq::Mode::clahe;
  b.denoise = 5;
  auto schedule = [](int n, pipeline::Equalizer& e) {
    eq::Quality q = eq::default_quality();
    switch (n) {
      case 3: q.denoise = 3; break;
      case 8: q.denoise = 6; break;
      case 12: q.denoise = 0; break;
      case 14: q.denoise = 3; break;
      default: return;
    }
    EXPECT_TRUE(e.set_quality(q).is_ok());
  };
  pipeline::EqualizerOptions cpu;
  cpu.cpu = true;
  cpu.quality = eq::default_quality();
  cpu.compare = {true, pipeline::Look{1.0, b}};
  auto want = drive(cpu, fmt, 20, dim_scene(fmt, 17), schedule);
  ASSERT_TRUE(want.is_ok()) << "CPU: " << want.status().message();
  pipeline::EqualizerOptions gpu = cpu;
  gpu.cpu = false;
  gpu.download = false;
  gpu.keep_on_device = true;  // the comparison runs on frames kept on the device
  gpu.frames_in_flight = 3;
  auto got = drive(gpu, fmt, 20, dim_scene(fmt, 17), schedule);
  ASSERT_TRUE(got.is_ok()) << "GPU: " << got.status().message();
  ASSERT_EQ(got->frames.size(), want->frames.size());
  for (size_t i = 0; i < want->frames.size(); ++i) {
    ASSERT_TRUE(got->frames[i] == want->frames[i]) << "frame " << i;
    ASSERT_TRUE(got->compare[i] == want->compare[i]) << "comparison, frame " << i;
  }
}

}  // namespace
}  // namespace histeq::test
