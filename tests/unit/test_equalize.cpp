// The equalization formula (lut.h) and the CPU LUT/apply: hand-computed tables, rounding, the
// degenerate cases, strength, and a check against the formula in floating point.
#include <gtest/gtest.h>

#include <algorithm>
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

// --- levels: the curve within the video's nominal range ---------------------------------

std::vector<uint16_t> lut_in(const std::vector<uint32_t>& h, const Levels& l, uint32_t weight = kWeightOne) {
  std::vector<uint16_t> lut(h.size(), 0xBEEF);
  Status s = build_lut(h.data(), static_cast<int>(h.size()), weight, l, lut.data());
  EXPECT_TRUE(s.is_ok()) << s.to_string();
  return lut;
}

// The classic formula as histeq had it before the levels (and cv2.equalizeHist has it), written
// out: the textbook levels give it bit for bit, strength included.
std::vector<uint16_t> classic_lut(const std::vector<uint32_t>& h, uint32_t weight) {
  const uint32_t maxval = static_cast<uint32_t>(h.size() - 1);
  uint64_t total = 0, cdf_min = 0;
  for (uint32_t c : h) {
    if (cdf_min == 0 && c != 0) cdf_min = c;
    total += c;
  }
  std::vector<uint16_t> lut(h.size());
  uint64_t cdf = 0;
  for (size_t v = 0; v < h.size(); ++v) {
    cdf += h[v];
    uint64_t e = v;
    if (total > cdf_min) e = cdf <= cdf_min ? 0 : (2 * (cdf - cdf_min) * maxval + (total - cdf_min)) / (2 * (total - cdf_min));
    lut[v] = static_cast<uint16_t>((weight * e + (kWeightOne - weight) * v + kWeightOne / 2) >> 16);
  }
  return lut;
}

std::vector<uint32_t> random_histogram(std::mt19937& rng, int bins) {
  std::vector<uint32_t> h(bins, 0);
  const int used = 1 + rng() % (rng() % 2 ? 4 : bins);
  for (int k = 0; k < used; ++k) h[rng() % bins] += 1 + rng() % 5000;
  if (rng() % 3 == 0) h[rng() % (bins / 16)] += rng() % 100000;  // a mass of sub-black samples
  return h;
}

TEST(Levels, NominalLevelsOfEachRange) {
  EXPECT_EQ(nominal_levels(8, false, false), (Levels{16, 235, true}));
  EXPECT_EQ(nominal_levels(10, false, false), (Levels{64, 940, true}));
  EXPECT_EQ(nominal_levels(8, true, false), (Levels{0, 255, true}));
  EXPECT_EQ(nominal_levels(10, true, false), (Levels{0, 1023, true}));
  EXPECT_EQ(nominal_levels(8, false, true), textbook_levels(255));
  EXPECT_EQ(nominal_levels(10, true, true), (Levels{0, 1023, false}));
}

TEST(Levels, TextbookIsTheClassicFormula) {
  std::mt19937 rng(5);
  for (int bins : {2, 256, 1024})
    for (int trial = 0; trial < 60; ++trial) {
      const auto h = random_histogram(rng, std::max(bins, 16));
      std::vector<uint32_t> hb(h.begin(), h.begin() + bins);
      for (uint32_t w : {0u, 1u, kWeightOne / 3, kWeightOne / 2, kWeightOne}) {
        ASSERT_EQ(lut_in(hb, textbook_levels(bins - 1), w), classic_lut(hb, w)) << "bins " << bins << " trial " << trial;
        ASSERT_EQ(lut_of(hb, w), classic_lut(hb, w));
      }
    }
}

TEST(Levels, LimitedRangeHandComputed) {
  const Levels l = nominal_levels(8, false, false);
  std::vector<uint32_t> h(256, 0);
  h[10] = 1;  // below black: counted, at black
  h[20] = 2;
  h[30] = 1;  // N = 4, cdf_min = C(16) = 1
  const auto lut = lut_in(h, l);
  for (int v = 0; v <= 16; ++v) EXPECT_EQ(lut[v], 16) << v;  // black and below: black
  EXPECT_EQ(lut[17], 17);   // C = cdf_min: black, but the guard keeps a level above black above it
  EXPECT_EQ(lut[20], 162);  // 16 + (3 - 1) / (4 - 1) * 219 = 162
  EXPECT_EQ(lut[29], 162);
  EXPECT_EQ(lut[30], 234);  // C = N: white, but the guard keeps a level below white below it
  EXPECT_EQ(lut[234], 234);
  for (int v = 235; v < 256; ++v) EXPECT_EQ(lut[v], 235) << v;  // white and above: white
  // The textbook levels stretch the same picture onto 0..255.
  const auto tb = lut_in(h, textbook_levels(255));
  EXPECT_EQ(tb[10], 0);
  EXPECT_EQ(tb[20], 170);
  EXPECT_EQ(tb[30], 255);
}

TEST(Levels, TenBitLimitedAndFullRangeHandComputed) {
  std::vector<uint32_t> h(1024, 0);
  h[40] = 1;    // below black (64)
  h[500] = 2;
  h[1000] = 1;  // above white (940)
  const auto lim = lut_in(h, nominal_levels(10, false, false));
  EXPECT_EQ(lim[0], 64);
  EXPECT_EQ(lim[40], 64);
  EXPECT_EQ(lim[500], 64 + 584);  // 64 + round(2 / 3 * 876)
  EXPECT_EQ(lim[1000], 940);
  EXPECT_EQ(lim[1023], 940);
  // Full range: 0..1023 with the guard; two levels never reach the ends.
  std::vector<uint32_t> two(1024, 0);
  two[300] = 90;
  two[301] = 10;
  const auto full = lut_in(two, nominal_levels(10, true, false));
  EXPECT_EQ(full[300], 1);
  EXPECT_EQ(full[301], 1022);
  EXPECT_EQ(full[0], 0);
  EXPECT_EQ(full[1023], 1023);
  const auto tb = lut_in(two, textbook_levels(1023));
  EXPECT_EQ(tb[300], 0);
  EXPECT_EQ(tb[301], 1023);
}

TEST(Levels, DegenerateFramesAreTheClampedIdentity) {
  const Levels l = nominal_levels(8, false, false);
  std::vector<uint32_t> one(256, 0);
  one[77] = 1000;
  auto lut = lut_in(one, l);
  for (int v = 0; v < 256; ++v) EXPECT_EQ(lut[v], std::clamp(v, 16, 235)) << v;
  std::vector<uint32_t> white(256, 0);  // everything at or above white: nothing in [lo, hi) counted
  white[235] = 10;
  white[250] = 10;
  lut = lut_in(white, l);
  for (int v = 0; v < 256; ++v) EXPECT_EQ(lut[v], std::clamp(v, 16, 235)) << v;
  lut = lut_in(std::vector<uint32_t>(256, 0), l);
  for (int v = 0; v < 256; ++v) EXPECT_EQ(lut[v], std::clamp(v, 16, 235)) << v;
}

// On random histograms (many with a mass below black): the curve stays within [lo, hi], samples
// below black and above white go to the ends and no further, levels inside stay off the ends
// (the guard), the curve is monotonic, and strength 0 is the identity.
TEST(Levels, WithinTheRangeGuardedMonotonicAndStrengthZeroIsIdentity) {
  std::mt19937 rng(7);
  for (int depth : {8, 10})
    for (bool full : {false, true})
      for (int trial = 0; trial < 80; ++trial) {
        const int bins = 1 << depth;
        const Levels l = nominal_levels(depth, full, false);
        const auto h = random_histogram(rng, bins);
        const auto lut = lut_in(h, l);
        for (int v = 0; v < bins; ++v) {
          const uint32_t x = clamp_level(static_cast<uint32_t>(v), l);
          ASSERT_GE(lut[v], l.lo);
          ASSERT_LE(lut[v], l.hi);
          if (v < static_cast<int>(l.lo)) {
            ASSERT_EQ(lut[v], lut[l.lo]) << "below black: as black";
          }
          if (v > static_cast<int>(l.hi)) {
            ASSERT_EQ(lut[v], lut[l.hi]) << "above white: as white";
          }
          if (x > l.lo && x < l.hi) {
            ASSERT_GE(lut[v], l.lo + 1) << "depth " << depth << " v " << v;
            ASSERT_LE(lut[v], l.hi - 1) << "depth " << depth << " v " << v;
          }
          if (v > 0) {
            ASSERT_GE(lut[v], lut[v - 1]);
          }
        }
        const auto id = lut_in(h, l, 0);
        for (int v = 0; v < bins; ++v) ASSERT_EQ(id[v], v);
      }
}

TEST(Levels, RejectsLevelsOutsideThePlane) {
  std::vector<uint32_t> h(256, 1);
  std::vector<uint16_t> lut(256);
  EXPECT_EQ(build_lut(h.data(), 256, kWeightOne, Levels{16, 256, true}, lut.data()).code(), Code::invalid_argument);
  EXPECT_EQ(build_lut(h.data(), 256, kWeightOne, Levels{200, 100, true}, lut.data()).code(), Code::invalid_argument);
  EXPECT_EQ(build_lut(h.data(), 256, kWeightOne, nominal_levels(10, false, false), lut.data()).code(), Code::invalid_argument);
  EXPECT_TRUE(build_lut(h.data(), 256, kWeightOne, Levels{100, 100, true}, lut.data()).is_ok());
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

// The vector path (when this CPU has it) against the plain loop, on every row length up to 200
// (full vectors, tails, rows shorter than a vector) with padding that must stay untouched.
TEST(Apply, VectorPathMatchesScalar) {
  if (!detail::apply_lut_has_simd()) GTEST_SKIP() << "no AVX-512 VBMI on this CPU: only the plain loop runs";
  std::mt19937 rng(21);
  std::vector<uint16_t> lut(256);
  for (auto& v : lut) v = static_cast<uint16_t>(rng() % 256);
  for (int w = 1; w <= 200; ++w) {
    const int h = 3;
    const size_t pitch = w + 37;
    std::vector<uint8_t> a(pitch * h);
    for (auto& b : a) b = static_cast<uint8_t>(rng());
    std::vector<uint8_t> b = a;
    ASSERT_TRUE(apply_lut(PlaneView<uint8_t>{a.data(), w, h, pitch, 8, MemoryKind::host}, lut.data(), 256).is_ok());
    ASSERT_TRUE(detail::apply_lut_scalar(PlaneView<uint8_t>{b.data(), w, h, pitch, 8, MemoryKind::host}, lut.data(), 256).is_ok());
    ASSERT_EQ(a, b) << "width " << w;
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
