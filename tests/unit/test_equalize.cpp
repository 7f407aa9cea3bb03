// The equalization formula (lut.h) and the CPU LUT/apply: hand-computed tables, rounding, the
// degenerate cases, strength, and a check against the formula in floating point.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "core/equalize/equalize.h"

namespace histeq::eq {
namespace {

std::vector<uint16_t> lut_of(const std::vector<uint32_t>& h, uint32_t weight = kWeightOne) {
  std::vector<uint16_t> lut(h.size(), 0xBEEF);
  Status s = build_lut(h.data(), static_cast<int>(h.size()), weight, lut.data());
  EXPECT_TRUE(s.is_ok()) << s.to_string();
  return lut;
}

TEST(Lut, HandComputed) {
  std::vector<uint32_t> h(256, 0);
  h[10] = 1;
  h[20] = 2;
  h[30] = 1;  // N = 4, cdf_min = 1
  const auto lut = lut_of(h);
  EXPECT_EQ(lut[0], 0);    // below the darkest value
  EXPECT_EQ(lut[10], 0);   // the darkest value goes to 0
  EXPECT_EQ(lut[15], 0);
  EXPECT_EQ(lut[20], 170); // (3 - 1) / (4 - 1) * 255 = 170
  EXPECT_EQ(lut[25], 170);
  EXPECT_EQ(lut[30], 255); // the brightest goes to maxval
  EXPECT_EQ(lut[255], 255);
}

TEST(Lut, RoundsHalfUp) {
  std::vector<uint32_t> h(256, 0);
  h[0] = 1;
  h[1] = 1;
  h[2] = 1;  // N - cdf_min = 2: value 1 maps to 255 / 2 = 127.5
  EXPECT_EQ(lut_of(h)[1], 128);
  // Blend: v = 3, eq = 0 at weight 1/2 is 1.5 -> 2.
  std::vector<uint32_t> g(256, 0);
  g[3] = 5;
  g[200] = 5;
  EXPECT_EQ(lut_of(g, kWeightOne / 2)[3], 2);
  EXPECT_EQ(lut_of(g, kWeightOne / 2)[200], 228);  // (255 + 200) / 2 = 227.5 -> 228
}

TEST(Lut, DegenerateFramesAreLeftAsTheyAre) {
  std::vector<uint32_t> one(256, 0);
  one[77] = 1920 * 1080;
  const auto lut = lut_of(one);
  for (int v = 0; v < 256; ++v) EXPECT_EQ(lut[v], v) << "one-value frame: identity";
  const auto empty = lut_of(std::vector<uint32_t>(1024, 0));
  for (int v = 0; v < 1024; ++v) EXPECT_EQ(empty[v], v) << "nothing counted: identity";
}

TEST(Lut, StrengthZeroIsIdentityAndOneIsFull) {
  std::mt19937 rng(3);
  std::vector<uint32_t> h(256);
  for (auto& c : h) c = rng() % 1000;
  const auto id = lut_of(h, 0);
  for (int v = 0; v < 256; ++v) EXPECT_EQ(id[v], v);
  const auto full = lut_of(h, kWeightOne);
  const auto half = lut_of(h, kWeightOne / 2);
  for (int v = 0; v < 256; ++v) {
    EXPECT_GE(half[v], std::min<int>(v, full[v]));
    EXPECT_LE(half[v], std::max<int>(v, full[v]));
  }
}

// The integer table equals round_half_up of the exact formula, checked in long double away from
// ties, on random histograms of 8-bit and 10-bit frames.
TEST(Lut, MatchesTheFormula) {
  std::mt19937 rng(11);
  for (int bins : {256, 1024}) {
    for (int trial = 0; trial < 50; ++trial) {
      std::vector<uint32_t> h(bins, 0);
      const int used = 1 + rng() % bins;
      for (int k = 0; k < used; ++k) h[rng() % bins] += 1 + rng() % 5000;
      const auto lut = lut_of(h);
      uint64_t total = 0, cdf_min = 0;
      for (uint32_t c : h) {
        if (cdf_min == 0 && c) cdf_min = c;
        total += c;
      }
      uint64_t cdf = 0;
      uint16_t prev = 0;
      for (int v = 0; v < bins; ++v) {
        cdf += h[v];
        EXPECT_GE(lut[v], prev) << "monotonic";
        EXPECT_LE(lut[v], bins - 1);
        prev = lut[v];
        if (total == cdf_min) {
          EXPECT_EQ(lut[v], v);
          continue;
        }
        const long double x = cdf <= cdf_min ? 0.0L : static_cast<long double>(cdf - cdf_min) * (bins - 1) / (total - cdf_min);
        if (std::abs(x - std::floor(x) - 0.5L) < 1e-9L) continue;  // a tie: covered by RoundsHalfUp
        EXPECT_EQ(lut[v], static_cast<uint16_t>(std::floor(x + 0.5L))) << "bins " << bins << " v " << v;
      }
    }
  }
}

TEST(Lut, LargestFramesDoNotOverflow) {
  std::vector<uint32_t> h(1024, 0);
  h[0] = 1;
  h[1023] = 0xFFFFFFFEu;  // N = 2^32 - 1 samples
  const auto lut = lut_of(h);
  EXPECT_EQ(lut[0], 0);
  EXPECT_EQ(lut[1023], 1023);
  std::vector<uint32_t> too_many(256, 0x01000000u);  // 2^32 samples: not a real histogram
  std::vector<uint16_t> out(256);
  EXPECT_FALSE(build_lut(too_many.data(), 256, kWeightOne, out.data()).is_ok());
}

TEST(Lut, RejectsBadArguments) {
  std::vector<uint32_t> h(256, 1);
  std::vector<uint16_t> lut(256);
  EXPECT_EQ(build_lut(h.data(), 100, kWeightOne, lut.data()).code(), Code::invalid_argument);
  EXPECT_EQ(build_lut(h.data(), 2048, kWeightOne, lut.data()).code(), Code::invalid_argument);
  EXPECT_EQ(build_lut(h.data(), 256, kWeightOne + 1, lut.data()).code(), Code::invalid_argument);
  EXPECT_EQ(build_lut(nullptr, 256, kWeightOne, lut.data()).code(), Code::invalid_argument);
  EXPECT_EQ(strength_weight(-0.1).status().code(), Code::invalid_argument);
  EXPECT_EQ(strength_weight(1.5).status().code(), Code::invalid_argument);
  EXPECT_EQ(strength_weight(std::nan("")).status().code(), Code::invalid_argument);
  EXPECT_EQ(strength_weight(0.0).value(), 0u);
  EXPECT_EQ(strength_weight(0.5).value(), kWeightOne / 2);
  EXPECT_EQ(strength_weight(1.0).value(), kWeightOne);
}

TEST(Apply, MapsSamplesAndLeavesPaddingAlone) {
  // 5x3 plane, pitch 8: the 3 padding bytes of each row must keep their poison.
  std::vector<uint8_t> px(8 * 3, 0xEE);
  for (int y = 0; y < 3; ++y)
    for (int x = 0; x < 5; ++x) px[y * 8 + x] = static_cast<uint8_t>(y * 5 + x);
  std::vector<uint16_t> lut(256);
  for (int v = 0; v < 256; ++v) lut[v] = static_cast<uint16_t>(255 - v);
  ASSERT_TRUE(apply_lut(PlaneView<uint8_t>{px.data(), 5, 3, 8, 8, MemoryKind::host}, lut.data(), 256).is_ok());
  for (int y = 0; y < 3; ++y) {
    for (int x = 0; x < 5; ++x) EXPECT_EQ(px[y * 8 + x], 255 - (y * 5 + x));
    for (int x = 5; x < 8; ++x) EXPECT_EQ(px[y * 8 + x], 0xEE);
  }
}

TEST(Apply, TenBitLeavesOutOfRangeSamples) {
  std::vector<uint16_t> px = {0, 1, 1023, 1024, 65535, 512};
  std::vector<uint16_t> lut(1024);
  for (int v = 0; v < 1024; ++v) lut[v] = static_cast<uint16_t>(1023 - v);
  ASSERT_TRUE(apply_lut(PlaneView<uint16_t>{px.data(), 6, 1, 12, 10, MemoryKind::host}, lut.data(), 1024).is_ok());
  EXPECT_EQ(px, (std::vector<uint16_t>{1023, 1022, 0, 1024, 65535, 511}));
}

TEST(Apply, RejectsDevicePlanesAndBadPitch) {
  std::vector<uint8_t> px(16);
  std::vector<uint16_t> lut(256);
  EXPECT_FALSE(apply_lut(PlaneView<uint8_t>{px.data(), 4, 4, 4, 8, MemoryKind::device}, lut.data(), 256).is_ok());
  EXPECT_FALSE(apply_lut(PlaneView<uint8_t>{px.data(), 4, 4, 2, 8, MemoryKind::host}, lut.data(), 256).is_ok());
  EXPECT_TRUE(apply_lut(PlaneView<uint8_t>{px.data(), 0, 4, 0, 8, MemoryKind::host}, lut.data(), 256).is_ok());
}

}  // namespace
}  // namespace histeq::eq
