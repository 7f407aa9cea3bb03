// The temporal denoiser on the CPU (core/equalize/ops/denoise/denoise.h): the formula on planes (static noise
// reduced, a moving edge passed unchanged, starting over, scene cuts, 10-bit, P010, odd sizes and
// pitches), and the operation through the equalizer (before the histogram, live changes, a reset,
// the comparison's own state). tests/gpu/test_denoise_gpu.cpp checks that the GPU gives the same.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "core/equalize/ops/denoise/denoise.h"
#include "core/equalize/operation.h"
#include "core/equalize/quality.h"
#include "tests/common/gtest_status.h"
#include "tests/common/quality_cases.h"

namespace histeq::test {
namespace {

// A host plane with its own pitch (pad samples after each row, filled with a marker) and the
// denoiser's state and sums beside it.
template <class T>
struct Filtered {
  int w, h, pad;
  std::vector<T> samples;
  std::vector<uint16_t> state;
  std::vector<unsigned long long> sums{0, 0};
  int parity = 0;
  bool started = false;
  Filtered(int width, int height, int pad_samples = 0)
      : w(width), h(height), pad(pad_samples), samples(static_cast<size_t>(width + pad_samples) * height, T(0xAB)),
        state(eq::kStatePlanes * static_cast<size_t>(width) * height) {}
  T& at(int x, int y) { return samples[static_cast<size_t>(y) * (w + pad) + x]; }
  PlaneRef ref(int depth) {
    return PlaneView<T>{samples.data(), w, h, sizeof(T) * static_cast<size_t>(w + pad), depth, MemoryKind::host};
  }
  // Puts frame `paint` through the filter (sigma in levels of 255) and returns its status.
  Status run(const std::function<uint32_t(int, int)>& paint, double sigma, int depth = 8, int shift = 0, bool restart = false) {
    for (int y = 0; y < h; ++y)
      for (int x = 0; x < w; ++x) at(x, y) = static_cast<T>(paint(x, y));
    eq::DenoiseArgs a;
    a.luma = ref(depth + shift);
    a.state = state.data();
    a.sums = sums.data();
    a.parity = parity;
    a.restart = restart || !started;
    a.params = eq::denoise_params(sigma, depth, shift);
    Status s = eq::denoise_frame(a);
    parity ^= 1;
    started = true;
    return s;
  }
};

// Gaussian noise of sigma levels around `level`, fresh for each frame (seeded by frame and pixel).
uint32_t noisy(double level, double sigma, int x, int y, int n) {
  // Unsigned: the seed wraps (the same seeds as two's complement int arithmetic gave, without its overflow).
  std::mt19937 g((static_cast<uint32_t>(n) * 7919u + static_cast<uint32_t>(y)) * 104729u + static_cast<uint32_t>(x));
  std::normal_distribution<double> d(0, sigma);
  return static_cast<uint32_t>(std::clamp(std::lround(level + d(g)), 0L, 255L));
}

template <class T>
double stddev(Filtered<T>& f, int x0, int x1) {
  double s = 0, s2 = 0, n = 0;
  for (int y = 0; y < f.h; ++y)
    for (int x = x0; x < x1; ++x) {
      s += f.at(x, y);
      s2 += static_cast<double>(f.at(x, y)) * f.at(x, y);
      ++n;
    }
  return std::sqrt(std::max(0.0, s2 / n - (s / n) * (s / n)));
}

TEST(Denoise, StaticNoiseIsReducedAndTheLevelKept) {
  Filtered<uint8_t> f(64, 48);
  double mean = 0;
  for (int n = 0; n < 24; ++n) {
    ASSERT_OK(f.run([&](int x, int y) { return noisy(40, 4, x, y, n); }, 4));
    if (n == 0) {
      EXPECT_GT(stddev(f, 0, 64), 3.5) << "the first frame starts over: unchanged";
    }
  }
  for (uint8_t v : f.samples) mean += v;
  mean /= static_cast<double>(f.samples.size());
  EXPECT_LT(stddev(f, 0, 64), 4 * 0.5) << "static noise at least halved";
  EXPECT_NEAR(mean, 40, 0.5);
}

TEST(Denoise, AMovingEdgePassesUnchanged) {
  // A step of 40 levels moving 2 samples a frame, with noise of sigma 3 (control 3): wherever the
  // edge moved, the frame passes as it came; away from it the noise is smoothed.
  Filtered<uint8_t> f(96, 32);
  for (int n = 0; n < 12; ++n) {
    const int edge = 20 + 2 * n;
    auto paint = [&](int x, int y) { return noisy(x < edge ? 60 : 20, 3, x, y, n); };
    ASSERT_OK(f.run(paint, 3));
    if (n < 4) continue;
    for (int y = 0; y < f.h; ++y)
      for (int x = edge - 2; x < edge; ++x) ASSERT_EQ(f.at(x, y), paint(x, y)) << "frame " << n << " at " << x << "," << y;
  }
  EXPECT_LT(stddev(f, 70, 96), 3 * 0.6) << "the static side is smoothed";
  // Without noise the whole frame is the input, bit for bit (static: the state is the frame).
  Filtered<uint8_t> clean(96, 32);
  for (int n = 0; n < 6; ++n) {
    const int edge = 20 + 2 * n;
    ASSERT_OK(clean.run([&](int x, int) { return x < edge ? 60u : 20u; }, 3));
    for (int x = 0; x < 96; ++x) ASSERT_EQ(clean.at(x, 5), x < edge ? 60 : 20) << "frame " << n << " x " << x;
  }
}

TEST(Denoise, RestartAndSceneCutsTakeTheFrameAsItIs) {
  Filtered<uint8_t> f(64, 32);
  auto base = [](int n) { return [n](int x, int y) { return noisy(40, 4, x, y, n); }; };
  for (int n = 0; n < 6; ++n) ASSERT_OK(f.run(base(n), 4));
  ASSERT_OK(f.run(base(6), 4, 8, 0, true));
  for (int y = 0; y < 32; ++y)
    for (int x = 0; x < 64; ++x) ASSERT_EQ(f.at(x, y), base(6)(x, y)) << "restart";
  // A cut: three quarters of the frame change by 160 levels; the last quarter looks like before
  // (the same level, fresh noise). The global test starts over, so that quarter is not blended.
  auto cut = [](int x, int y) { return x < 48 ? 200u : noisy(40, 4, x, y, 99); };
  Filtered<uint8_t> g = f;
  ASSERT_OK(g.run(base(7), 4));
  ASSERT_OK(g.run(cut, 4));
  for (int y = 0; y < 32; ++y)
    for (int x = 48; x < 64; ++x) ASSERT_EQ(g.at(x, y), cut(x, y)) << "cut " << x << "," << y;
  // Without the cut (an eighth changed: a mean difference of about 24 levels): the rest is filtered.
  auto quarter = [](int x, int y) { return x < 8 ? 200u : noisy(40, 4, x, y, 99); };
  ASSERT_OK(f.run(base(7), 4));
  ASSERT_OK(f.run(quarter, 4));
  int changed = 0;
  for (int y = 0; y < 32; ++y)
    for (int x = 48; x < 64; ++x) changed += f.at(x, y) != quarter(x, y);
  EXPECT_GT(changed, 16 * 32 / 4);
}

TEST(Denoise, TenBitIsTheEightBitResultScaledAndP010KeepsItsLowBits) {
  Filtered<uint8_t> f8(33, 17);
  Filtered<uint16_t> f10(33, 17), p010(33, 17, 5);
  double off = 0;
  for (int n = 0; n < 10; ++n) {
    auto paint = [&](int x, int y) { return noisy(30 + (x > 16 ? 20 : 0), 4, x, y, n); };
    ASSERT_OK(f8.run(paint, 4));
    ASSERT_OK(f10.run([&](int x, int y) { return paint(x, y) * 4; }, 4, 10));
    ASSERT_OK(p010.run([&](int x, int y) { return paint(x, y) * 4 << 6 | (x & 63); }, 4, 10, 6));
    for (int y = 0; y < 17; ++y)
      for (int x = 0; x < 33; ++x) {
        // The same motion test at 4x the levels; the rounding of the finer state differs.
        ASSERT_NEAR(f10.at(x, y), 4 * f8.at(x, y), 4) << "frame " << n;
        off += std::abs(f10.at(x, y) - 4.0 * f8.at(x, y));
        ASSERT_EQ(p010.at(x, y) >> 6, f10.at(x, y)) << "frame " << n;
        ASSERT_EQ(p010.at(x, y) & 63, x & 63) << "low bits";
      }
  }
  EXPECT_LT(off / (10 * 33 * 17), 1.0) << "the 10-bit frames drift from the 8-bit ones";
}

TEST(Denoise, OddSizesAndPitchesGiveTheSameFramesAndLeaveThePaddingAlone) {
  for (auto [w, h] : {std::pair{1, 1}, std::pair{3, 2}, std::pair{37, 19}}) {
    Filtered<uint8_t> tight(w, h), padded(w, h, 7);
    for (int n = 0; n < 6; ++n) {
      auto paint = [&](int x, int y) { return noisy(35 + 3 * ((x + n) % 5), 4, x, y, n); };
      ASSERT_OK(tight.run(paint, 4));
      ASSERT_OK(padded.run(paint, 4));
      for (int y = 0; y < h; ++y) {
        for (int x = 0; x < w; ++x) ASSERT_EQ(tight.at(x, y), padded.at(x, y)) << w << "x" << h << " frame " << n;
        for (int x = w; x < w + 7; ++x) ASSERT_EQ(padded.at(x, y), 0xAB) << "padding";
      }
    }
    EXPECT_EQ(tight.state, padded.state);
  }
}

TEST(Denoise, TheArgumentsAndTheSettingsAreChecked) {
  eq::DenoiseArgs a;
  EXPECT_FALSE(eq::denoise_frame(a).is_ok());
  eq::Quality q = eq::default_quality();
  EXPECT_EQ(q.denoise, 0) << "off by default (docs/quality.md, Denoiser)";
  q.denoise = 4;
  EXPECT_TRUE(eq::validate(q).is_ok());
  EXPECT_FALSE(q.plain());
  EXPECT_NE(q, eq::default_quality());
  EXPECT_NE(eq::describe(q).find("denoise 4"), std::string::npos);
  eq::Quality p = eq::plain_quality();
  p.denoise = 2;
  EXPECT_FALSE(p.plain()) << "the fused path serves plain settings only";
  for (double bad : {-1.0, 0.2, 21.0, std::nan("")}) {
    q.denoise = bad;
    EXPECT_FALSE(eq::validate(q).is_ok()) << bad;
  }
  const eq::denoise::Params p8 = eq::denoise_params(4, 8, 0), p10 = eq::denoise_params(4, 10, 0);
  EXPECT_EQ(p10.lo, 4 * p8.lo);
  EXPECT_EQ(p10.cut_q4, 4 * p8.cut_q4);
  EXPECT_EQ(eq::denoise::gain(p8.lo, p8), eq::denoise::kFloor);
  EXPECT_EQ(eq::denoise::gain(p8.lo + p8.span, p8), 256u);
}

// --- through the equalizer ------------------------------------------------------------------------

// The frames of `paint` through the filter alone (the reference of the operation).
std::vector<FrameCopy> denoised(const video::FrameFormat& fmt, int frames, const Painter& paint, double sigma) {
  auto pool = video::FramePool::create(fmt, MemoryKind::host);
  std::vector<uint16_t> state(eq::kStatePlanes * static_cast<size_t>(fmt.width) * fmt.height);
  std::vector<unsigned long long> sums(2);
  std::vector<FrameCopy> out;
  for (int n = 0; n < frames; ++n) {
    video::FramePtr f = painted_frame(**pool, n, 30, paint);
    eq::DenoiseArgs a;
    a.luma = f->plane(0);
    a.state = state.data();
    a.sums = sums.data();
    a.parity = n & 1;
    a.restart = n == 0;
    a.params = eq::denoise_params(sigma, fmt.bit_depth, fmt.sample_shift());
    EXPECT_TRUE(eq::denoise_frame(a).is_ok());
    out.push_back(copy_frame(*f));
  }
  return out;
}

TEST(DenoisePipeline, TheLumaIsDenoisedBeforeTheHistogram) {
  const video::FrameFormat fmt{161, 91, 8, 1, 1};
  eq::Quality q = eq::plain_quality();
  q.denoise = 3;
  auto run = drive(cpu_options(q), fmt, 8, dim_scene(fmt, 5));
  ASSERT_TRUE(run.is_ok()) << run.status().to_string();
  std::vector<FrameCopy> want = denoised(fmt, 8, dim_scene(fmt, 5), 3);
  for (int n = 0; n < 8; ++n) {
    reference_equalize(want[n], eq::kWeightOne);
    EXPECT_EQ(run->frames[n].planes, want[n].planes) << "frame " << n;
  }
  auto off = drive(cpu_options(eq::plain_quality()), fmt, 8, dim_scene(fmt, 5));
  ASSERT_TRUE(off.is_ok());
  EXPECT_EQ(off->frames[0].planes, run->frames[0].planes) << "the first frame starts over";
  EXPECT_NE(off->frames[3].planes, run->frames[3].planes);
}

TEST(DenoisePipeline, EveryLayoutRuns) {
  for (video::FrameFormat fmt : {video::FrameFormat{161, 91, 10, 1, 1}, video::FrameFormat{160, 90, 8, 1, 1, video::PlaneLayout::semi_planar},
                                 video::FrameFormat{160, 90, 10, 1, 1, video::PlaneLayout::semi_planar}, video::FrameFormat{63, 47, 8, 0, 0}}) {
    eq::Quality q = eq::default_quality();
    q.temporal_s = 0;  // the curve of each frame its own: frames with the same luma are the same
    q.denoise = 3;
    auto a = drive(cpu_options(q), fmt, 6, dim_scene(fmt, 4));
    ASSERT_TRUE(a.is_ok()) << fmt.describe() << ": " << a.status().to_string();
    q.denoise = 0;
    auto b = drive(cpu_options(q), fmt, 6, dim_scene(fmt, 4));
    ASSERT_TRUE(b.is_ok());
    EXPECT_EQ(a->frames[0].planes[0], b->frames[0].planes[0]) << fmt.describe();
    EXPECT_NE(a->frames[2].planes[0], b->frames[2].planes[0]) << fmt.describe();
    EXPECT_EQ(a->frames[4].planes[0], b->frames[4].planes[0]) << fmt.describe() << ": the cut (frame 4) starts over";
  }
}

// On at frame 3, its sigma changed at frame 6, a reset before frame 9: each starts the filter over
// (that frame is the unfiltered one) and the frames after it are filtered.
TEST(DenoisePipeline, LiveChangesAndAResetStartOver) {
  const video::FrameFormat fmt{96, 54, 8, 1, 1};
  const int frames = 12;
  eq::Quality base = eq::default_quality();
  base.temporal_s = 0;  // the curve of each frame its own: frames with the same luma are the same
  eq::Quality on = base, on2 = base;
  on.denoise = 3;
  on2.denoise = 5;
  auto live = drive(cpu_options(base), fmt, frames, dim_scene(fmt), [&](int n, pipeline::Equalizer& e) {
    if (n == 3) {
      EXPECT_TRUE(e.set_quality(on).is_ok());
    }
    if (n == 6) {
      EXPECT_TRUE(e.set_quality(on2).is_ok());
    }
    if (n == 9) e.reset();
  });
  auto off = drive(cpu_options(base), fmt, frames, dim_scene(fmt));
  ASSERT_TRUE(live.is_ok() && off.is_ok());
  for (int n : {0, 1, 2, 3, 6, 9}) EXPECT_EQ(live->frames[n].planes[0], off->frames[n].planes[0]) << "frame " << n;
  for (int n : {4, 5, 7, 8, 10, 11}) EXPECT_NE(live->frames[n].planes[0], off->frames[n].planes[0]) << "frame " << n;
}

// Settings B of the split view with the denoiser, A without (and the other way round): each side
// is what an equalizer of its own settings makes, so the two filters keep separate states.
TEST(DenoisePipeline, TheComparisonHasItsOwnDenoiser) {
  const video::FrameFormat fmt{96, 54, 8, 1, 1};
  eq::Quality with = eq::default_quality(), without = with;
  with.denoise = 4;
  for (const auto& [a, b] : {std::pair{without, with}, std::pair{with, without}}) {
    pipeline::EqualizerOptions o = cpu_options(a);
    o.compare = {true, pipeline::Look{1.0, b}};
    auto both = drive(o, fmt, 8, dim_scene(fmt));
    auto only_a = drive(cpu_options(a), fmt, 8, dim_scene(fmt));
    auto only_b = drive(cpu_options(b), fmt, 8, dim_scene(fmt));
    ASSERT_TRUE(both.is_ok() && only_a.is_ok() && only_b.is_ok());
    for (int n = 0; n < 8; ++n) {
      EXPECT_EQ(both->frames[n].planes, only_a->frames[n].planes) << "A, frame " << n;
      EXPECT_EQ(both->compare[n].planes, only_b->frames[n].planes) << "B, frame " << n;
    }
  }
}

// The split view off for frames 3..5: the comparison's denoiser did not see them, so at frame 6 it
// starts over (with settings B plain + denoise, its frame is then the plain equalization of the
// input) instead of following frame 2.
TEST(DenoisePipeline, TheComparisonStartsOverAfterTheSplitWasOff) {
  const video::FrameFormat fmt{96, 54, 8, 1, 1};
  eq::Quality b = eq::plain_quality();
  b.denoise = 4;
  pipeline::EqualizerOptions o = cpu_options(eq::default_quality());
  o.compare = {true, pipeline::Look{1.0, b}};
  auto run = drive(o, fmt, 8, dim_scene(fmt), [&](int n, pipeline::Equalizer& e) {
    if (n == 3 || n == 6) {
      EXPECT_TRUE(e.set_compare({n == 6, pipeline::Look{1.0, b}}).is_ok());
    }
  });
  ASSERT_TRUE(run.is_ok()) << run.status().to_string();
  ASSERT_EQ(run->compare.size(), 5u) << "frames 0-2 and 6-7";
  auto pool = video::FramePool::create(fmt, MemoryKind::host);
  FrameCopy in = copy_frame(*painted_frame(**pool, 6, 30, dim_scene(fmt)));
  reference_equalize(in, eq::kWeightOne);
  EXPECT_EQ(run->compare[3].planes, in.planes) << "frame 6: the comparison's denoiser went on from frame 2";
  FrameCopy in7 = copy_frame(*painted_frame(**pool, 7, 30, dim_scene(fmt)));
  reference_equalize(in7, eq::kWeightOne);
  EXPECT_NE(run->compare[4].planes, in7.planes) << "frame 7 is filtered again";
}

}  // namespace
}  // namespace histeq::test
