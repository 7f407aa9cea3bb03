// The picture-quality controls on the CPU (quality.h, tone.h): the clip limit against OpenCV's
// sequential steps, tile histograms, tile LUTs and their interpolation, the temporal filter and its
// scene cuts, colour, the settings and their validation, and the equalizer with every control:
// plain settings stay today's frames, live changes land on the next frame, the comparison is a
// second equalization of the same input. The GPU gives the same frames (tests/gpu/test_quality_gpu.cpp).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>

#include "core/equalize/equalize.h"
#include "core/equalize/operation.h"
#include "core/equalize/quality.h"
#include "core/equalize/tone.h"
#include "core/histogram/histogram.h"
#include "core/image/fork_join.h"
#include "core/image/synthetic.h"
#include "tests/common/quality_cases.h"
#include "tests/common/gtest_status.h"

namespace histeq::test {
namespace {

namespace tone = eq::tone;

// OpenCV's clip and redistribution (modules/imgproc/src/clahe.cpp, CLAHE_CalcLut_Body), written
// as its sequential loops: the oracle for tone.h's per-bin formula.
std::vector<uint32_t> opencv_clip(std::vector<uint32_t> h, uint32_t limit) {
  const int bins = static_cast<int>(h.size());
  uint32_t clipped = 0;
  for (auto& c : h)
    if (c > limit) {
      clipped += c - limit;
      c = limit;
    }
  const uint32_t batch = clipped / bins;
  uint32_t residual = clipped - batch * bins;
  for (auto& c : h) c += batch;
  if (residual != 0) {
    const int step = std::max(bins / static_cast<int>(residual), 1);
    for (int i = 0; i < bins && residual > 0; i += step, residual--) h[i]++;
  }
  return h;
}

std::vector<std::vector<uint32_t>> some_histograms(int bins) {
  std::mt19937 rng(static_cast<uint32_t>(bins) * 7 + 1);
  std::vector<std::vector<uint32_t>> hs;
  for (int t = 0; t < 40; ++t) {
    std::vector<uint32_t> h(bins, 0);
    const int used = t % 4 == 0 ? 1 : t % 4 == 1 ? 3 : t % 4 == 2 ? bins / 5 : bins;
    const uint32_t scale = t < 20 ? 50 : 100000;
    for (int k = 0; k < used; ++k) h[rng() % bins] += 1 + rng() % scale;
    hs.push_back(h);
  }
  return hs;
}

// The histograms one after the other, as tile histograms.
std::vector<uint32_t> concatenated(const std::vector<std::vector<uint32_t>>& hs) {
  std::vector<uint32_t> all;
  for (const auto& h : hs) all.insert(all.end(), h.begin(), h.end());
  return all;
}

// tone.h's shadow floor written from its definition for 256 bins (G = 1; the oracle for its Newton
// search): the region the levels v that `raw` (the histogram before the clip) holds with lo < v <
// mid; F the least integer with F (hi - lo) >= N + sum over the region of max(0, F - h(v)), by
// bisection; h raised to F over the region.
std::vector<uint32_t> floor_reference(std::vector<uint32_t> h, const std::vector<uint32_t>& raw, const eq::Levels& l) {
  const uint64_t n = std::accumulate(h.begin(), h.end(), uint64_t{0});
  const uint32_t range = l.hi - l.lo, mid = l.lo + range / 2;
  if (!l.guard || range < 2 || n == 0) return h;
  auto enough = [&](uint64_t f) {
    uint64_t need = n;
    for (uint32_t v = l.lo + 1; v < mid; ++v) need += raw[v] != 0 && f > h[v] ? f - h[v] : 0;
    return f * range >= need;
  };
  uint64_t a = 0, b = 2 * n / range + 2;  // enough(b): the region holds fewer than range / 2 bins
  while (b - a > 1) (enough((a + b) / 2) ? b : a) = (a + b) / 2;
  for (uint32_t v = l.lo + 1; v < mid; ++v)
    if (raw[v] != 0) h[v] = std::max<uint32_t>(h[v], static_cast<uint32_t>(b));
  return h;
}

// A bright picture's histogram (the cut clip): most samples in the bright half, its dark half
// sparse but every level present, a few samples below black.
std::vector<uint32_t> bright_picture(int bins) {
  std::vector<uint32_t> h(bins);
  const int s = bins / 256;
  for (int v = 0; v < bins; ++v) h[v] = v < 12 * s ? 3 : v < 128 * s ? 40 + (v * 7) % 13 : 900 + (v * 31) % 200;
  return h;
}

TEST(Quality, ClipLimitIsOpenCvsRedistribution) {
  for (int bins : {2, 64, 256, 512, 1024}) {
    const int g = tone::clip_group(bins);
    for (const auto& h : some_histograms(bins)) {
      const uint64_t total = std::accumulate(h.begin(), h.end(), uint64_t{0});
      for (uint32_t clip_q8 : {256u, 384u, 512u, 1024u, 10240u}) {
        const uint32_t limit = tone::clip_count(clip_q8, total, bins);
        EXPECT_EQ(limit, std::max<uint64_t>(1, clip_q8 * total / 256 / (bins / g)));
        std::vector<uint32_t> kept(bins);
        uint64_t kept_sum = 0;
        for (int j = 0; j < bins; j += g) {
          uint32_t group = 0;
          for (int k = 0; k < g; ++k) group += h[j + k];
          uint32_t group_kept = 0;
          for (int k = 0; k < g; ++k) group_kept += kept[j + k] = tone::clip_kept(h[j + k], group, limit);
          ASSERT_LE(group_kept, std::max(limit, group > limit ? 0u : group)) << "a group keeps at most the limit";
          kept_sum += group_kept;
        }
        std::vector<uint32_t> mine(bins);
        for (int v = 0; v < bins; ++v) mine[v] = tone::clipped_bin(kept[v], v, static_cast<uint32_t>(total - kept_sum), bins);
        if (g == 1) {
          ASSERT_EQ(mine, opencv_clip(h, limit)) << "bins " << bins << " clip " << clip_q8 / 256.0;
        }
        EXPECT_EQ(std::accumulate(mine.begin(), mine.end(), uint64_t{0}), total) << "the clip keeps every sample";
      }
    }
  }
}

TEST(Quality, ClippedGlobalLutIsPlainWithoutClipAndBoundsTheSlope) {
  const eq::Levels textbook = eq::textbook_levels(255);  // the bound below is the classic formula's
  for (const auto& h : some_histograms(256)) {
    std::vector<uint16_t> plain(256), clip0(256), clipped(256);
    ASSERT_OK(eq::build_lut(h.data(), 256, eq::kWeightOne, plain.data()));
    ASSERT_OK(eq::build_lut_clipped(h.data(), 256, eq::kWeightOne, 0, textbook, clip0.data()));
    EXPECT_EQ(plain, clip0);
    const uint64_t total = std::accumulate(h.begin(), h.end(), uint64_t{0});
    ASSERT_OK(eq::build_lut_clipped(h.data(), 256, eq::kWeightOne, 512, textbook, clipped.data()));
    // Each step of the LUT is at most (limit + spread + 1) * 255 / (N - cdf_min): about 2 levels at clip 2.
    const double limit = tone::clip_count(512, total, 256);
    const double step = (limit + static_cast<double>(total) / 256 + 1) * 255 / (total - std::min<double>(total - 1, limit + 1)) + 1;
    for (int v = 1; v < 256; ++v) {
      EXPECT_GE(clipped[v], clipped[v - 1]);
      EXPECT_LE(clipped[v] - clipped[v - 1], step) << v;
    }
    // A clip above every bin changes nothing.
    std::vector<uint16_t> high(256);
    ASSERT_OK(eq::build_lut_clipped(h.data(), 256, eq::kWeightOne, 64 * 256 * 256, textbook, high.data()));
    if (*std::max_element(h.begin(), h.end()) <= tone::clip_count(64 * 256 * 256, total, 256)) {
      EXPECT_EQ(high, plain);
    }
  }
}

TEST(Quality, TileLutsFollowZuiderveldAndTheirMeanIsRounded) {
  const int bins = 256, tiles = 6;
  std::vector<uint32_t> counts;
  for (const auto& h : some_histograms(bins)) {
    counts.insert(counts.end(), h.begin(), h.end());
    if (counts.size() == static_cast<size_t>(tiles * bins)) break;
  }
  for (uint32_t clip_q8 : {0u, 512u}) {
    std::vector<uint16_t> luts(tiles * bins), mean(bins);
    // The textbook levels: OpenCV's mapping onto 0..255.
    ASSERT_OK(eq::build_tile_luts(counts.data(), tiles, bins, eq::kWeightOne, clip_q8, eq::textbook_levels(255), luts.data(), mean.data()));
    for (int t = 0; t < tiles; ++t) {
      std::vector<uint32_t> h(counts.begin() + t * bins, counts.begin() + (t + 1) * bins);
      const uint64_t n = std::accumulate(h.begin(), h.end(), uint64_t{0});
      if (clip_q8) h = opencv_clip(h, tone::clip_count(clip_q8, n, bins));
      uint64_t cdf = 0;
      for (int v = 0; v < bins; ++v) {
        cdf += h[v];
        const double want = std::floor(cdf * 255.0 / n + 0.5);
        ASSERT_EQ(luts[t * bins + v], want) << "tile " << t << " value " << v;
      }
    }
    for (int v = 0; v < bins; ++v) {
      uint32_t s = 0;
      for (int t = 0; t < tiles; ++t) s += luts[t * bins + v];
      EXPECT_EQ(mean[v], (s + tiles / 2) / tiles);
    }
  }
}

TEST(Quality, AxisWeightsFollowTheTileCentres) {
  for (int size : {1, 2, 7, 64, 100, 1080, 1921}) {
    for (int n : {1, 2, 3, 8, 13, 32}) {
      if (n > size) continue;
      std::vector<uint32_t> t(size);
      eq::axis_table(size, n, t.data());
      double last = -1;
      for (int x = 0; x < size; ++x) {
        const uint32_t lo = tone::axis_lo(t[x]), hi = tone::axis_hi(t[x]), w = tone::axis_w(t[x]);
        ASSERT_LT(hi, static_cast<uint32_t>(n));
        ASSERT_TRUE(hi == lo || hi == lo + 1);
        ASSERT_LE(w, tone::kWeightOne);
        const double pos = lo + w / 1024.0;  // position in tile-centre units
        ASSERT_GE(pos, last - 1e-9) << "monotone, size " << size << " tiles " << n << " x " << x;
        last = pos;
        // Against the real-valued definition: (x + 0.5 - centre_lo) / (centre_hi - centre_lo).
        auto centre = [&](int i) { return (static_cast<double>(i * (int64_t)size / n) + static_cast<double>((i + 1) * (int64_t)size / n)) / 2; };
        if (hi != lo) EXPECT_NEAR(w / 1024.0, (x + 0.5 - centre(lo)) / (centre(hi) - centre(lo)), 0.5 / 1024 + 1e-9);
        else EXPECT_EQ(w, 0u);
      }
    }
  }
}

// The textbook grid is OpenCV's (createCLAHE, clahe.cpp): tiles of `step` samples over the padded
// axis, a pixel at its left edge: w = x / step - 1/2 - lo, in 1/1024 rounded to nearest.
TEST(Quality, TextbookAxisWeightsAreOpenCvs) {
  for (int size : {1, 2, 7, 64, 100, 451, 1080, 1921}) {
    for (int n : {1, 2, 3, 8, 13, 32}) {
      const int step = size % n == 0 ? size / n : size / n + 1;
      std::vector<uint32_t> t(size);
      eq::axis_table(size, n, t.data(), step);
      for (int x = 0; x < size; ++x) {
        // OpenCV's txf, clamped as its tile indices are: the position between the tile centres.
        const double f = std::clamp(static_cast<double>(x) / step - 0.5, 0.0, n - 1.0);
        const uint32_t lo = tone::axis_lo(t[x]), hi = tone::axis_hi(t[x]), w = tone::axis_w(t[x]);
        ASSERT_TRUE(hi < static_cast<uint32_t>(n) && (hi == lo || (hi == lo + 1 && w < tone::kWeightOne)));
        if (hi == lo) {
          ASSERT_EQ(w, 0u);
        }
        EXPECT_NEAR(lo + w / 1024.0, f, 0.5 / 1024 + 1e-9) << size << " " << n << " x " << x;
      }
    }
  }
}

TEST(Quality, ReflectIsOpenCvsBorderReflect101) {
  // cv2.copyMakeBorder(BORDER_REFLECT_101) of 0..len-1 past the end: len-2, len-3, ..., 0, 1, ...
  EXPECT_EQ(tone::reflect_101(0, 1), 0);
  EXPECT_EQ(tone::reflect_101(7, 1), 0);
  const int want5[] = {0, 1, 2, 3, 4, 3, 2, 1, 0, 1, 2, 3, 4, 3};
  for (int p = 0; p < 14; ++p) EXPECT_EQ(tone::reflect_101(p, 5), want5[p]) << p;
  const int want2[] = {0, 1, 0, 1, 0, 1};
  for (int p = 0; p < 6; ++p) EXPECT_EQ(tone::reflect_101(p, 2), want2[p]) << p;
}

TEST(Quality, TextbookTileLayoutPadsBothAxesAsOpenCvDoes) {
  eq::Quality q;
  q.tiles = {8, 8};
  eq::TileLayout t = eq::tile_layout(q, 451, 300);  // histeq's grid: no padding, no step
  EXPECT_EQ(t.step_x, 0);
  EXPECT_FALSE(t.padded(451, 300));
  EXPECT_EQ(eq::tile_layout(q, 5, 100).grid.cols, 5) << "histeq's grid: at most a tile a sample";
  q.textbook = true;
  t = eq::tile_layout(q, 640, 480);  // whole tiles: as it is
  EXPECT_EQ(t.step_x, 80);
  EXPECT_EQ(t.step_y, 60);
  EXPECT_FALSE(t.padded(640, 480));
  t = eq::tile_layout(q, 384, 303);  // one axis not whole: both padded (the whole one by 8)
  EXPECT_EQ(t.width, 392);
  EXPECT_EQ(t.height, 304);
  EXPECT_EQ(t.step_x, 49);
  EXPECT_EQ(t.step_y, 38);
  t = eq::tile_layout(q, 5, 3);  // fewer samples than tiles: tiles of one sample
  EXPECT_EQ(t.grid.cols, 8);
  EXPECT_EQ(t.width, 8);
  EXPECT_EQ(t.height, 8);
}

TEST(Quality, PadReflectIsCopyMakeBorder) {
  for (int bytes : {1, 2}) {
    for (auto [w, h, pw, ph] : {std::tuple{5, 3, 8, 8}, {1, 1, 8, 8}, {17, 9, 24, 16}, {2, 7, 8, 8}}) {
      const size_t in_pitch = static_cast<size_t>(w + 3) * bytes, out_pitch = static_cast<size_t>(pw + 1) * bytes;
      std::vector<uint8_t> in(in_pitch * h), out(out_pitch * ph, 0xEE);
      auto sample = [&](int x, int y) { return static_cast<uint32_t>(synth::hash_xy(x, y, 5) % (bytes == 1 ? 256 : 1024)); };
      for (int y = 0; y < h; ++y)
        for (int x = 0; x < w; ++x) {
          if (bytes == 1) in[y * in_pitch + x] = static_cast<uint8_t>(sample(x, y));
          else reinterpret_cast<uint16_t*>(in.data() + y * in_pitch)[x] = static_cast<uint16_t>(sample(x, y));
        }
      PlaneRef a{}, b{};
      a.data = in.data(), a.width = w, a.height = h, a.pitch = in_pitch, a.bytes_per_sample = bytes, a.bit_depth = bytes == 1 ? 8 : 10;
      b = a;
      b.data = out.data(), b.width = pw, b.height = ph, b.pitch = out_pitch;
      ASSERT_OK(eq::pad_reflect(a, b));
      for (int y = 0; y < ph; ++y)
        for (int x = 0; x < pw; ++x) {
          const uint32_t got = bytes == 1 ? out[y * out_pitch + x] : reinterpret_cast<const uint16_t*>(out.data() + y * out_pitch)[x];
          ASSERT_EQ(got, sample(tone::reflect_101(x, w), tone::reflect_101(y, h))) << w << "x" << h << " at " << x << "," << y;
        }
      b.width = w - 1;
      EXPECT_FALSE(eq::pad_reflect(a, b).is_ok()) << "a padded plane smaller than the picture";
    }
  }
}

TEST(Quality, TiledHistogramsOfTheCpuKernelsArePerTileHistograms) {
  for (const char* name : {"cpu_reference", "cpu_parallel"}) {
    auto k = hist::create_kernel(name);
    ASSERT_TRUE(k.is_ok());
    EXPECT_TRUE((*k)->info().tiles);
    for (int bytes : {1, 2}) {
      for (auto [w, h, pad] : {std::tuple{1, 1, 0}, {17, 9, 3}, {640, 360, 0}, {1921, 1081, 64}}) {
        const int bins = bytes == 1 ? 256 : 1024;
        const size_t pitch = static_cast<size_t>(w + pad) * bytes;
        std::vector<uint8_t> buf(pitch * h);
        for (int y = 0; y < h; ++y)
          for (int x = 0; x < w; ++x) {
            const uint32_t v = synth::hash_xy(x, y, 3);
            if (bytes == 1) buf[y * pitch + x] = static_cast<uint8_t>(v);
            else reinterpret_cast<uint16_t*>(buf.data() + y * pitch)[x] = static_cast<uint16_t>((v & 15) == 0 ? 1024 + v % 50 : v % 1024);
          }
        PlaneRef p;
        p.data = buf.data();
        p.width = w;
        p.height = h;
        p.pitch = pitch;
        p.bytes_per_sample = bytes;
        p.bit_depth = bytes == 1 ? 8 : 10;
        for (hist::TileGrid g : {hist::TileGrid{1, 1}, {8, 8}, {3, 5}, {32, 32}}) {
          if (g.cols > w || g.rows > h) {
            std::vector<uint32_t> out(g.count() * bins);
            EXPECT_FALSE(hist::compute_tiles(**k, p, g, {out.data(), bins, MemoryKind::host}).is_ok());
            continue;
          }
          std::vector<uint32_t> out(g.count() * bins, 0xDEAD), one(bins);
          ASSERT_OK(hist::compute_tiles(**k, p, g, {out.data(), bins, MemoryKind::host}));
          auto ref = hist::create_kernel("cpu_reference");
          uint64_t samples = 0;
          for (int r = 0; r < g.rows; ++r)
            for (int c = 0; c < g.cols; ++c) {
              const PlaneRef t = hist::tile_plane(p, g, c, r);
              samples += t.samples();
              ASSERT_OK(hist::compute(**ref, t, {one.data(), bins, MemoryKind::host}));
              const uint32_t* got = out.data() + (r * g.cols + c) * bins;
              ASSERT_TRUE(std::equal(one.begin(), one.end(), got)) << name << " tile " << c << "," << r << " of " << w << "x" << h;
            }
          EXPECT_EQ(samples, static_cast<uint64_t>(w) * h) << "tiles cover the plane once";
        }
      }
    }
  }
  auto cub_like = hist::create_kernel("cpu_reference");
  std::vector<uint8_t> px(64, 1);
  std::vector<uint32_t> out(64 * 256);
  PlaneView<const uint8_t> p{px.data(), 8, 8, 8, 8, MemoryKind::host};
  EXPECT_FALSE(hist::compute_tiles(**cub_like, p, {33, 1}, {out.data(), 256, MemoryKind::host}).is_ok()) << "more than kMaxTiles";
}

TEST(Quality, OneTileOrEqualTileLutsAreThePlainLutApplied) {
  std::vector<uint8_t> px(97 * 41);
  for (size_t i = 0; i < px.size(); ++i) px[i] = static_cast<uint8_t>(synth::hash32(static_cast<uint32_t>(i)));
  std::vector<uint16_t> lut(256);
  for (int v = 0; v < 256; ++v) lut[v] = static_cast<uint16_t>((v * 7 + 13) % 256);
  for (hist::TileGrid g : {hist::TileGrid{1, 1}, {8, 8}, {5, 3}}) {
    std::vector<uint16_t> luts;
    for (int t = 0; t < g.count(); ++t) luts.insert(luts.end(), lut.begin(), lut.end());
    std::vector<uint32_t> xt(97), yt(41);
    eq::axis_table(97, g.cols, xt.data());
    eq::axis_table(41, g.rows, yt.data());
    std::vector<uint8_t> a = px, b = px;
    ASSERT_OK(eq::apply_tiles(PlaneView<uint8_t>{a.data(), 97, 41, 97, 8, MemoryKind::host}, {luts.data(), g, xt.data(), yt.data()}, 256));
    ASSERT_OK(eq::apply_lut(PlaneView<uint8_t>{b.data(), 97, 41, 97, 8, MemoryKind::host}, lut.data(), 256));
    EXPECT_EQ(a, b) << g.cols << "x" << g.rows;
  }
}

// One frame through the temporal filter with flat target LUTs, keeping its state between calls.
struct TemporalRig {
  int bins = 256;
  std::vector<int32_t> state = std::vector<int32_t>(256);
  std::vector<uint32_t> cdf = std::vector<uint32_t>(2 * 256);
  std::vector<int32_t> scalars = std::vector<int32_t>(2 * eq::kTemporalScalars);
  int parity = 0;
  bool first = true;
  std::vector<uint16_t> last_lut;
  eq::Levels levels = eq::nominal_levels(8, false, false);  // limited range: 16..235
  // Returns the LUT applied at `probe` and whether the frame started over.
  std::pair<int, bool> step(const std::vector<uint32_t>& h, const std::vector<uint16_t>& target, int probe = 40) {
    std::vector<uint16_t> lut = target;
    eq::TemporalArgs a;
    a.counts = h.data();
    a.luts = lut.data();
    a.state = state.data();
    a.prev_hist = cdf.data() + (parity ^ 1) * bins;
    a.next_hist = cdf.data() + parity * bins;
    a.prev_scalars = scalars.data() + (parity ^ 1) * eq::kTemporalScalars;
    a.next_scalars = scalars.data() + parity * eq::kTemporalScalars;
    a.restart = first;
    a.levels = levels;
    a.cut_q16 = eq::cut_q16([] { eq::Quality q; q.scene_cut = 0.35; return q; }());
    a.alpha_q16 = eq::temporal_alpha_q16(0.5, 1 / 30.0);  // about 0.065
    EXPECT_TRUE(eq::temporal_update(a).is_ok());
    const bool cut = a.next_scalars[3] != 0;
    parity ^= 1;
    first = false;
    last_lut = lut;
    return {lut[probe], cut};
  }
};

std::vector<uint32_t> band(int lo, int hi, uint32_t n = 100) {
  std::vector<uint32_t> h(256, 0);
  for (int v = lo; v < hi; ++v) h[v] = n;
  return h;
}

std::vector<uint16_t> ramp(double gain, int offset) {
  std::vector<uint16_t> l(256);
  for (int v = 0; v < 256; ++v) l[v] = static_cast<uint16_t>(std::clamp(static_cast<int>(std::lround(offset + gain * v)), 0, 255));
  return l;
}

TEST(Quality, TemporalFilterHoldsTheBrightnessFollowsFadesAndCutsAtSceneChanges) {
  const std::vector<uint16_t> flat100(256, 100), flat200(256, 200);
  {
    // A static picture whose curve jumps: the brightness stays (no added flicker) until the most
    // the offset may hold (64 levels), and the frame does not count as a cut.
    TemporalRig r;
    EXPECT_EQ(r.step(band(20, 60), flat100), std::make_pair(100, true)) << "the first frame starts over";
    const auto held = r.step(band(20, 60), flat200);
    EXPECT_NEAR(held.first, 100, 1);
    EXPECT_FALSE(held.second);
    int v = 0;
    for (int i = 0; i < 200; ++i) v = r.step(band(20, 60), flat200).first;
    // The curve converged; the offset holds the most it may (64 levels), which bends the curve
    // anchored at white (235): an entry 35 levels from it moves by 64 x 35 / 128 = 17.5.
    EXPECT_NEAR(v, 200 - 17.5, 1) << "the offset held the most it may";
  }
  {
    // A slow fade: each frame's curve doubles it above black, but the output's mean moves no
    // faster than the input's (within the rounding of the LUT's entries).
    TemporalRig r;
    auto mean = [](const std::vector<uint32_t>& h, const std::vector<uint16_t>* lut) {
      double s = 0, n = 0;
      for (int v = 0; v < 256; ++v) {
        s += h[v] * static_cast<double>(lut ? (*lut)[v] : v);
        n += h[v];
      }
      return s / n;
    };
    double last_in = 0, last_out = 0;
    int limited = 0;
    for (int f = 0; f < 12; ++f) {
      const double g = 1.0 - 0.02 * f;  // 2 % darker a frame, about black
      const auto h = band(16 + static_cast<int>(24 * g), 16 + static_cast<int>(104 * g));
      const bool cut = r.step(h, ramp(2.0, -16)).second;
      const double in = mean(h, nullptr), out = mean(h, &r.last_lut);
      if (f > 0 && !cut) {
        EXPECT_LE(std::abs(out - last_out), std::abs(in - last_in) + 0.51) << "frame " << f;
        ++limited;
      }
      last_in = in;
      last_out = out;
    }
    EXPECT_GE(limited, 8) << "a slow fade is not a run of cuts";
  }
  {
    // A cut: another picture; the new curve and brightness at once.
    TemporalRig r;
    r.step(band(20, 60), flat100);
    const auto [v, cut] = r.step(band(150, 250), flat200);
    EXPECT_TRUE(cut);
    EXPECT_EQ(v, 200);
  }
  EXPECT_EQ(eq::temporal_alpha_q16(0, 1 / 30.0), 65536u);
  EXPECT_GE(eq::temporal_alpha_q16(10, 1 / 240.0), 1u);
}

// Tile LUTs within the levels, from black: lo + round((C(x) - C(lo)) (hi - lo) / (N - C(lo))), x =
// clamp(v, lo, hi), C = N at and above white, the guard; in limited and full range, 8 and 10 bits,
// clipped (with the shadow floor) or not.
TEST(Quality, TileLutsMapWithinTheLevels) {
  for (int depth : {8, 10})
    for (bool full : {false, true})
      for (uint32_t clip_q8 : {0u, 384u}) {
        const int bins = 1 << depth;
        const eq::Levels l = eq::nominal_levels(depth, full, false);
        std::vector<uint32_t> counts;
        for (const auto& h : some_histograms(bins)) counts.insert(counts.end(), h.begin(), h.end());
        const int tiles = static_cast<int>(counts.size()) / bins;
        std::vector<uint16_t> luts(counts.size()), mean(bins);
        ASSERT_OK(eq::build_tile_luts(counts.data(), tiles, bins, eq::kWeightOne, clip_q8, l, luts.data(), mean.data()));
        for (int t = 0; t < tiles; ++t) {
          std::vector<uint32_t> h(counts.begin() + t * bins, counts.begin() + (t + 1) * bins);
          const uint64_t n = std::accumulate(h.begin(), h.end(), uint64_t{0});
          if (clip_q8 != 0 && bins == 256) h = floor_reference(opencv_clip(h, tone::clip_count(clip_q8, n, bins)), h, l);
          const uint64_t n2 = std::accumulate(h.begin(), h.end(), uint64_t{0});
          std::vector<uint64_t> cdf(bins);
          std::partial_sum(h.begin(), h.end(), cdf.begin());
          for (int v = 0; v < bins; ++v) {
            const uint16_t got = luts[static_cast<size_t>(t) * bins + v];
            ASSERT_GE(got, l.lo);
            ASSERT_LE(got, l.hi);
            if (clip_q8 != 0 && bins != 256) continue;  // the grouped clip: ClipLimitIsOpenCvsRedistribution
            const uint32_t x = eq::clamp_level(static_cast<uint32_t>(v), l);
            const uint64_t c = x >= l.hi ? n2 : cdf[x], base = cdf[l.lo];  // from black
            int64_t want = x;  // everything at or below black: the identity
            if (n2 > base) {
              // Zuiderveld's slope, the lift C(lo) (hi - lo) / N taken off and spread over the levels.
              const long double lifted = static_cast<long double>(c - base) * (l.hi - l.lo) + static_cast<long double>(base) * (x - l.lo);
              want = l.lo + static_cast<int64_t>(std::floor(lifted / n2 + 0.5L));
              if (x > l.lo && x < l.hi) want = std::clamp<int64_t>(want, l.lo + 1, l.hi - 1);
            }
            ASSERT_EQ(got, want) << "depth " << depth << " full " << full << " tile " << t << " v " << v;
          }
        }
      }
}

// The shadow floor: with the clip limit and range-aware levels, a level step in the dark
// half of the range that the frame holds never maps to a smaller step (at 8-bit resolution: a step
// of 4 levels at 10 bits never maps to fewer than 4), in the global LUT (above the darkest level
// the frame holds, which the guard may lift by one) and in the tile LUTs; on a bright picture whose
// sparse shadows the clipped curve compressed (slope 0.6-0.75), and on assorted histograms. The
// floor found by the search is the least that qualifies (the oracle finds it from its definition);
// levels the frame does not hold are not raised (a dim picture's curve is the clipped one); and the
// textbook levels have no floor.
TEST(Quality, TheShadowFloorKeepsEveryShadowStep) {
  for (int depth : {8, 10})
    for (bool full : {false, true}) {
      const int bins = 1 << depth, g = bins / 256;
      const eq::Levels l = eq::nominal_levels(depth, full, false);
      const uint32_t mid = tone::shadow_end(l);
      auto hs = some_histograms(bins);
      hs.insert(hs.begin(), bright_picture(bins));
      for (size_t k = 0; k < hs.size(); ++k) {
        const auto& h = hs[k];
        uint32_t x0 = l.hi;
        for (uint32_t v = 0; v < l.hi; ++v)
          if (h[v] != 0) x0 = std::min(x0, std::max(v, l.lo));
        std::vector<uint16_t> global(bins), tile(bins), mean(bins);
        ASSERT_OK(eq::build_lut_clipped(h.data(), bins, eq::kWeightOne, 282, l, global.data()));
        ASSERT_OK(eq::build_tile_luts(h.data(), 1, bins, eq::kWeightOne, 282, l, tile.data(), mean.data()));
        for (uint32_t first = l.lo + g; first + g <= mid; first += g) {
          if (std::accumulate(h.begin() + first, h.begin() + first + g, 0u) == 0) continue;  // not held
          const uint32_t last = first + g - 1;
          ASSERT_GE(tile[last], tile[first - 1] + g) << "depth " << depth << " full " << full << " histogram " << k << " v " << first;
          if (first - 1 > x0) {
            ASSERT_GE(global[last], global[first - 1] + g) << "depth " << depth << " full " << full << " histogram " << k << " v " << first;
          }
        }
        if (bins == 256) {  // the search's floor is the oracle's: the tile LUT of the oracle's histogram
          const uint64_t n = std::accumulate(h.begin(), h.end(), uint64_t{0});
          const auto want = floor_reference(opencv_clip(h, tone::clip_count(282, n, bins)), h, l);
          std::vector<uint16_t> ref(bins), ref_mean(bins);
          ASSERT_OK(eq::build_tile_luts(want.data(), 1, bins, eq::kWeightOne, 0, l, ref.data(), ref_mean.data()));
          ASSERT_EQ(tile, ref) << "full " << full << " histogram " << k;
        }
      }
    }
  // A dim picture (levels 30..80 only): its clipped curve, unchanged by the floor.
  std::vector<uint32_t> dim(256, 0);
  for (int v = 30; v <= 80; ++v) dim[v] = 500 + static_cast<uint32_t>(v * 37 % 200);
  const eq::Levels limited = eq::nominal_levels(8, false, false);
  std::vector<uint16_t> got(256), want(256), want_mean(256);
  ASSERT_OK(eq::build_tile_luts(dim.data(), 1, 256, eq::kWeightOne, 282, limited, got.data(), want_mean.data()));
  const auto clipped = opencv_clip(dim, tone::clip_count(282, std::accumulate(dim.begin(), dim.end(), uint64_t{0}), 256));
  ASSERT_OK(eq::build_tile_luts(clipped.data(), 1, 256, eq::kWeightOne, 0, limited, want.data(), want_mean.data()));
  EXPECT_EQ(got, want);
  // The textbook levels: no floor (the bright picture's clipped curve keeps its shallow shadows).
  const auto h = bright_picture(256);
  std::vector<uint16_t> lut(256);
  ASSERT_OK(eq::build_lut_clipped(h.data(), 256, eq::kWeightOne, 282, eq::textbook_levels(255), lut.data()));
  int flat = 0;
  for (int v = 13; v < 127; ++v) flat += lut[v] == lut[v - 1];
  EXPECT_GT(flat, 20);
}

// CLAHE keeps black at black (its tile LUTs once lifted letterbox bars at 16 to about 18): with
// range-aware levels every tile maps every level at or below black to black, clipped or not, 8 and
// 10 bits, limited and full range, whatever share of the tile sits at black; the textbook levels
// keep Zuiderveld's (OpenCV's) lift.
TEST(Quality, ClaheKeepsBlackAtBlack) {
  for (bool full : {false, true})
    for (int depth : {8, 10})
      for (uint32_t clip_q8 : {0u, 282u}) {
        const int bins = 1 << depth;
        const eq::Levels l = eq::nominal_levels(depth, full, false);
        std::vector<uint32_t> counts = concatenated(some_histograms(bins));
        for (int t = 0; t < 4; ++t) {  // letterbox tiles: bars at black beside a dim picture
          std::vector<uint32_t> h(bins, 0);
          h[l.lo] = 1000u * static_cast<uint32_t>(t + 1);
          for (uint32_t v = l.lo + 1; v < l.lo + 20u * (bins / 256); ++v) h[v] = 30;
          counts.insert(counts.end(), h.begin(), h.end());
        }
        const int tiles = static_cast<int>(counts.size()) / bins;
        std::vector<uint16_t> luts(counts.size()), mean(bins);
        ASSERT_OK(eq::build_tile_luts(counts.data(), tiles, bins, eq::kWeightOne, clip_q8, l, luts.data(), mean.data()));
        for (int t = 0; t < tiles; ++t)
          for (uint32_t v = 0; v <= l.lo; ++v) ASSERT_EQ(luts[static_cast<size_t>(t) * bins + v], l.lo) << "tile " << t << " v " << v;
      }
  std::vector<uint32_t> bars(256, 0);
  bars[16] = 5000;
  for (int v = 17; v < 40; ++v) bars[v] = 30;
  std::vector<uint16_t> lut(256), mean(256);
  ASSERT_OK(eq::build_tile_luts(bars.data(), 1, 256, eq::kWeightOne, 0, eq::textbook_levels(255), lut.data(), mean.data()));
  EXPECT_GT(lut[16], 200);
}

// Black at black without steepening the curve (the noise floor in clahe mode): a tile half
// at black and half in a flat area at 100..104. Zuiderveld's slope there is 219 / 1000 x 100 = 21.9
// levels a level; mapping from black (the curve before) took the tile's black share off the
// denominator and doubled it (43.8: a flat area's noise twice over). Taking the lift off instead
// and spreading it over the levels adds C(lo) / N = 0.5 at most, and the ends stay at black and white.
TEST(Quality, TileLutsKeepZuiderveldsSlopeWithBlackAtBlack) {
  const eq::Levels l = eq::nominal_levels(8, false, false);
  std::vector<uint32_t> h(256, 0), cdf(256);
  h[l.lo] = 500;
  for (int v = 100; v <= 104; ++v) h[v] = 100;
  std::partial_sum(h.begin(), h.end(), cdf.begin());
  const uint32_t n = cdf[255];
  std::vector<uint32_t> lut(256);
  for (uint32_t v = 0; v < 256; ++v)
    lut[v] = tone::tile_lut_entry(v, cdf[eq::clamp_level(v, l)], cdf[l.lo], n, l, eq::kWeightOne);
  EXPECT_EQ(lut[l.lo], l.lo);
  EXPECT_EQ(lut[0], l.lo);
  EXPECT_EQ(lut[l.hi], l.hi);
  for (int v = 1; v < 256; ++v) ASSERT_GE(lut[v], lut[v - 1]) << v;
  for (int v = 101; v <= 104; ++v) EXPECT_LE(lut[v] - lut[v - 1], 23u) << "level " << v << ": steeper than Zuiderveld's 21.9 + 0.5";
}

// The brightness hold bends the curve anchored at black and white: at the most offset
// either way, entries keep the ends, levels inside stay inside (the guard), and the slope stays at
// least 1/2, so two levels apart stay at least one apart (the shift it replaced took the slope to 0
// within 64 levels of the ends: a dim scene's shadows merged into black). The output's mean never
// decreases as the offset grows (the search needs it).
TEST(Quality, TheBrightnessHoldIsACurveAnchoredAtBlackAndWhite) {
  std::mt19937 rng(3);
  for (int depth : {8, 10})
    for (bool full : {false, true}) {
      const int bins = 1 << depth;
      const eq::Levels l = eq::nominal_levels(depth, full, false);
      const int32_t most = tone::max_offset(bins);
      std::vector<int32_t> state(bins);
      for (int v = 0; v < bins; ++v) state[v] = tone::temporal_start(eq::clamp_level(static_cast<uint32_t>(v), l));
      for (int32_t c : {-most, -most / 2, -1, 0, 1, most / 3, most}) {
        std::vector<uint32_t> e(bins);
        for (int v = 0; v < bins; ++v) e[v] = tone::temporal_entry(state[v], c, v, bins, l);
        EXPECT_EQ(e[l.lo], l.lo) << "black stays black, offset " << c;
        EXPECT_EQ(e[l.hi], l.hi) << "white stays white, offset " << c;
        for (int v = 0; v < bins; ++v) {
          ASSERT_GE(e[v], l.lo);
          ASSERT_LE(e[v], l.hi);
          if (v > static_cast<int>(l.lo) && v < static_cast<int>(l.hi)) {
            ASSERT_GE(e[v], l.lo + 1) << "depth " << depth << " offset " << c << " v " << v;
            ASSERT_LE(e[v], l.hi - 1) << "depth " << depth << " offset " << c << " v " << v;
          }
          if (v > 0) {
            ASSERT_GE(e[v], e[v - 1]) << "in order";
          }
          // (The guard lifts lo + 1 and lowers hi - 1 onto the levels next to them: the bend's own
          // slope is measured away from those two.)
          if (v >= static_cast<int>(l.lo) + 2 && v + 2 <= static_cast<int>(l.hi) - 2) {
            ASSERT_GE(e[v + 2], e[v] + 1) << "slope below 1/2: depth " << depth << " offset " << c << " v " << v;
          }
        }
      }
      std::vector<uint32_t> h(bins);
      for (auto& x : h) x = rng() % 1000;
      uint64_t total = std::accumulate(h.begin(), h.end(), uint64_t{0});
      int32_t last = 0;
      for (int32_t c = -most; c <= most; c += most / 37) {
        uint64_t sum = 0;
        for (int v = 0; v < bins; ++v) sum += h[v] * static_cast<uint64_t>(tone::temporal_entry(state[v], c, v, bins, l));
        const int32_t u = tone::mean_q12(sum, total);
        if (c > -most) {
          ASSERT_GE(u, last) << "offset " << c;
        }
        last = u;
      }
    }
}

// A dim shot whose curve brightens it while the hold keeps its brightness back (at the most offset
// after a while): the shadows just above black stay above black and apart.
TEST(Quality, TheHoldNeverPushesAShadowToBlack) {
  TemporalRig r;
  const auto h = band(17, 60);
  const std::vector<uint16_t> dim = ramp(1.0, 0), bright = ramp(2.5, -24);
  r.step(h, dim);
  for (int i = 0; i < 300; ++i) r.step(h, bright);
  EXPECT_LT(r.last_lut[40], bright[40] - 10) << "the hold held nothing: the test shows nothing";
  for (int v = 17; v < 60; ++v) {
    EXPECT_GE(r.last_lut[v], 17) << v;
    if (v + 2 < 60) {
      EXPECT_GT(r.last_lut[v + 2], r.last_lut[v]) << "shadows merged at " << v;
    }
  }
}

// A fade to black ends at black: the hold may slow a brightened shot's fade, but not keep
// a near-black picture lifted. Before the bend (a shift tapering only within 64 levels of 0) the
// trailer's last frame, its input at 16.1, came out at 36.3; the bend can lift a level near black by
// little, so the output reaches black with the input. The price is the catch-up steps at the fade's
// end (docs/quality.md, "The trailer's flicker"): none of the causal holds tried both ends the fade
// at black and keeps every step within the input's when the output starts brighter than the input.
// (With the shift weighting put back in temporal_entry, this test gives 35.3 against 18.7.)
TEST(Quality, AFadeToBlackEndsAtBlack) {
  TemporalRig r;
  auto mean = [](const std::vector<uint32_t>& h, const std::vector<uint16_t>& lut) {
    double s = 0, n = 0;
    for (int v = 0; v < 256; ++v) {
      s += h[v] * static_cast<double>(lut[v]);
      n += h[v];
    }
    return s / n;
  };
  const std::vector<uint16_t> bright = ramp(1.5, -8);  // 16 -> 16: anchored at black, brighter above
  for (int i = 0; i < 60; ++i) r.step(band(40, 120), bright);
  double gap = 0;
  for (int f = 1; f <= 16; ++f) {  // (Y - 16) x 0.8 a frame: 80 levels above black to under 3
    const double g = std::pow(0.8, f);
    const auto h = band(16 + static_cast<int>(24 * g), 17 + static_cast<int>(104 * g));
    r.step(h, bright);
    if (f == 1) gap = mean(h, r.last_lut) - mean(h, ramp(1.0, 0));
  }
  EXPECT_GT(gap, 15) << "the shot was not brightened: the test shows nothing";
  const auto black = band(16, 19);
  for (int i = 0; i < 3; ++i) r.step(black, bright);
  // Within a level of the curve's own output there (17.7 for an input at 17): no longer held up.
  EXPECT_LE(mean(black, r.last_lut), mean(black, bright) + 1.0) << "the fade did not end at black";
}

// The offset the brightness limit picks is unique, so the GPU's many-way search (here in its host
// form: W offsets a pass) finds what the CPU's bisection and a plain scan find.
TEST(Quality, TheBrightnessOffsetDoesNotDependOnHowItIsSearched) {
  std::mt19937 rng(11);
  for (int trial = 0; trial < 300; ++trial) {
    // A non-decreasing step function with plateaus, as a rounded LUT's mean is.
    std::vector<int32_t> steps(64);
    for (auto& x : steps) x = static_cast<int32_t>(rng() % 2000) - 1000;
    std::sort(steps.begin(), steps.end());
    const int32_t base = static_cast<int32_t>(rng() % 100000);
    auto u_of = [&](int32_t c) {
      return base + static_cast<int32_t>(std::upper_bound(steps.begin(), steps.end(), c / 7) - steps.begin()) * 300 + (c >> 9);
    };
    auto scan = [&](int32_t lo, int32_t hi, int32_t t) {
      int32_t best = lo;
      for (int32_t c = lo; c < hi; ++c)
        if (u_of(c) <= t) best = c;
      return best;
    };
    auto bisect = [&](int32_t lo, int32_t hi, int32_t t) { return tone::bisect_at_most(u_of, lo, hi, t); };
    auto many = [&](int32_t lo, int32_t hi, int32_t t) {
      constexpr int kWays = 8;
      while (hi - lo > 1) {
        int32_t nlo = lo, nhi = hi;
        for (int k = 0; k < kWays; ++k) {
          const int32_t off = lo + static_cast<int32_t>((static_cast<int64_t>(hi - lo) * (k + 1)) / (kWays + 1));
          if (u_of(off) <= t) nlo = std::max(nlo, off);
          else nhi = std::min(nhi, off);
        }
        lo = nlo;
        hi = nhi;
      }
      return lo;
    };
    const int32_t most = 20000, c_prev = static_cast<int32_t>(rng() % 30000) - 15000;
    const int32_t u_prev = u_of(static_cast<int32_t>(rng() % 20000) - 10000), d = static_cast<int32_t>(rng() % 2000);
    const uint32_t alpha = 1 + rng() % 65536;
    const int32_t a = tone::limit_offset(u_of, scan, c_prev, alpha, u_prev - d, u_prev + d, most);
    ASSERT_EQ(tone::limit_offset(u_of, bisect, c_prev, alpha, u_prev - d, u_prev + d, most), a) << trial;
    ASSERT_EQ(tone::limit_offset(u_of, many, c_prev, alpha, u_prev - d, u_prev + d, most), a) << trial;
  }
}

// The CPU filter's per-LUT loops over a pool (clahe: 64 tile LUTs and the extra) give the caller-only run's LUTs, states and scalars bit for bit, frame after frame,
// across a cut, at 8 and 10 bits and with odd tile counts.
TEST(Quality, TheTemporalFilterOnThePoolIsTheCallersBitForBit) {
  image::ForkJoin pool(3);
  for (const auto& [bins, tiles] : {std::pair{256, 64}, std::pair{1024, 15}, std::pair{256, 1}}) {
    std::mt19937 rng(static_cast<uint32_t>(bins + tiles));
    const size_t luts = static_cast<size_t>(tiles) + 1, n = luts * bins;
    struct Run {
      std::vector<int32_t> state, scalars;
      std::vector<uint32_t> hist;
      std::vector<uint16_t> lut;
    };
    Run one{std::vector<int32_t>(n), std::vector<int32_t>(2 * eq::kTemporalScalars), std::vector<uint32_t>(2 * bins), {}};
    Run many = one;
    const eq::Levels levels = eq::nominal_levels(bins == 1024 ? 10 : 8, false, false);
    for (int frame = 0; frame < 12; ++frame) {
      // Two shots, the dark half of the levels and then the bright half: a cut at frame 7.
      const bool second = frame >= 7;
      std::vector<uint32_t> tile_counts(static_cast<size_t>(tiles) * bins), counts(bins, 0);
      for (size_t i = 0; i < tile_counts.size(); ++i) {
        const bool bright = static_cast<int>(i % bins) >= bins / 2;
        counts[i % bins] += tile_counts[i] = bright == second ? 100 + rng() % 50 : 0;
      }
      std::vector<uint16_t> target(n);
      for (size_t k = 0; k < luts; ++k) {
        uint32_t level = levels.lo;
        for (int v = 0; v < bins; ++v) target[k * bins + v] = static_cast<uint16_t>(level = std::min<uint32_t>(levels.hi, level + rng() % 3));
      }
      const int parity = frame % 2;
      for (Run* r : {&one, &many}) {
        r->lut = target;
        eq::TemporalArgs a;
        a.counts = counts.data();
        a.bins = bins;
        a.luts = r->lut.data();
        a.count = tiles;
        a.extra = r->lut.data() + static_cast<size_t>(tiles) * bins;
        a.tile_counts = tile_counts.data();
        a.state = r->state.data();
        a.prev_hist = r->hist.data() + (parity ^ 1) * bins;
        a.next_hist = r->hist.data() + parity * bins;
        a.prev_scalars = r->scalars.data() + (parity ^ 1) * eq::kTemporalScalars;
        a.next_scalars = r->scalars.data() + parity * eq::kTemporalScalars;
        a.restart = frame == 0;
        a.levels = levels;
        a.cut_q16 = 20000;
        a.alpha_q16 = 6000;
        ASSERT_OK(eq::temporal_update(a, r == &many ? &pool : nullptr));
      }
      ASSERT_EQ(one.lut, many.lut) << bins << " bins, frame " << frame;
      ASSERT_EQ(one.state, many.state) << bins << " bins, frame " << frame;
      ASSERT_EQ(one.scalars, many.scalars) << bins << " bins, frame " << frame;
      EXPECT_EQ(one.scalars[parity * eq::kTemporalScalars + 3], frame == 0 || frame == 7 ? 1 : 0) << bins << " bins, frame " << frame;
    }
  }
}

// TemporalArgs over a sequence's buffers (histograms and scalars double-buffered: frame parity
// writes its half and reads the other), clahe's tiles when tile_counts is given.
eq::TemporalArgs sequence_args(uint32_t* counts, int bins, uint16_t* luts, int tiles, const uint32_t* tile_counts, int32_t* state,
                               uint32_t* hist, int32_t* scalars, int parity) {
  eq::TemporalArgs a;
  a.counts = counts;
  a.bins = bins;
  a.luts = luts;
  a.count = tiles;
  a.extra = tiles > 1 ? luts + static_cast<size_t>(tiles) * bins : nullptr;
  a.tile_counts = tile_counts;
  a.state = state;
  a.prev_hist = hist + (parity ^ 1) * bins;
  a.next_hist = hist + parity * bins;
  a.prev_scalars = scalars + (parity ^ 1) * eq::kTemporalScalars;
  a.next_scalars = scalars + parity * eq::kTemporalScalars;
  return a;
}

// The brightness search evaluates entries through tone::entry_terms / entry_at; they are the
// curve's formula as written before them (the state moved by c min(1, d / R) truncated towards
// zero, the bin's dither, rounded, clamped to the levels, lut.h's guard), for every state, offset
// and bin tried, at 8 and 10 bits, limited and full range, with and without the guard.
TEST(Quality, TheEntryTermsAreTheBentCurvesFormula) {
  auto reference = [](int32_t state, int32_t offset, int v, int bins, const eq::Levels& l) {
    const int bins_log2 = tone::log2_pow2(bins);
    const int64_t ramp = int64_t{2 * tone::kMaxOffset * (bins / 256)} << tone::kStateBits;
    const int64_t lo = int64_t{l.lo} << tone::kStateBits, hi = int64_t{l.hi} << tone::kStateBits;
    const int64_t w = std::max<int64_t>(0, std::min(state - lo, hi - state));
    int64_t moved = offset;
    if (w < ramp) moved = static_cast<int64_t>(static_cast<double>(offset) * static_cast<double>(w) / static_cast<double>(ramp));  // truncates
    const int64_t x = state + moved + ((int64_t{v} << tone::kStateBits) >> bins_log2) - (1 << (tone::kStateBits - 1));
    int64_t e = x <= 0 ? l.lo : (x + (1 << (tone::kStateBits - 1))) >> tone::kStateBits;
    e = std::clamp<int64_t>(e, l.lo, l.hi);
    const int64_t xv = std::clamp<int64_t>(v, l.lo, l.hi);
    if (l.guard && xv > l.lo && xv < l.hi) e = std::clamp<int64_t>(e, l.lo + 1, l.hi - 1);
    return static_cast<uint32_t>(e);
  };
  std::mt19937 rng(5);
  for (int bits : {8, 10})
    for (bool full : {false, true})
      for (bool guard : {false, true}) {
        eq::Levels l = eq::nominal_levels(bits, full, false);
        l.guard = guard;
        const int bins = 1 << bits;
        const int32_t most = tone::max_offset(bins);
        for (int i = 0; i < 200000; ++i) {
          const int32_t state = static_cast<int32_t>(rng() % ((static_cast<uint32_t>(bins) + 8) << tone::kStateBits)) - (4 << tone::kStateBits);
          const int32_t offset = static_cast<int32_t>(rng() % (2 * static_cast<uint32_t>(most) + 1)) - most;
          const int v = static_cast<int>(rng() % static_cast<uint32_t>(bins));
          ASSERT_EQ(tone::temporal_entry(state, offset, v, bins, l), reference(state, offset, v, bins, l))
              << bits << " bits, full " << full << ", guard " << guard << ": state " << state << ", offset " << offset << ", bin " << v;
        }
      }
}

// entry_threshold is the first offset at which an entry reaches a level: below it the entry is
// under the level, from it on at or over, for every level an entry passes within the offsets.
TEST(Quality, AnEntrysThresholdIsWhereItReachesTheLevel) {
  std::mt19937 rng(9);
  for (int bits : {8, 10}) {
    const int bins = 1 << bits, bins_log2 = bits, ramp = tone::ramp_log2(bins_log2);
    const eq::Levels l = eq::nominal_levels(bits, false, false);
    const int32_t most = tone::max_offset(bins);
    int checked = 0;
    for (int i = 0; i < 20000; ++i) {
      const int32_t state = static_cast<int32_t>(l.lo << tone::kStateBits) +
                            static_cast<int32_t>(rng() % (static_cast<uint32_t>(l.hi - l.lo) << tone::kStateBits));
      const auto t = tone::entry_terms(state, static_cast<int>(rng() % static_cast<uint32_t>(bins)), bins_log2, l);
      const int32_t a = static_cast<int32_t>(rng() % (2 * static_cast<uint32_t>(most))) - most;
      const int32_t b = std::min(most, a + 1 + static_cast<int32_t>(rng() % 40000));
      const uint32_t ea = tone::entry_at(t, a, ramp), eb = tone::entry_at(t, b, ramp);
      for (uint32_t k = ea + 1; k <= eb; ++k) {
        const int32_t c = tone::entry_threshold(t, k, ramp);
        ASSERT_GT(c, a);
        ASSERT_LE(c, b);
        ASSERT_GE(tone::entry_at(t, c, ramp), k) << "state " << state << " level " << k << " offset " << c;
        ASSERT_LT(tone::entry_at(t, c - 1, ramp), k) << "state " << state << " level " << k << " offset " << c;
        ++checked;
      }
    }
    EXPECT_GT(checked, 5000) << bits;
  }
}

// Clahe's brightness hold measures what the tiles put out: the u it keeps (and the next frame
// limits against) is the mean of every tile's LUT as put out, over its own tile's samples, and
// while the offset is not at its bound that mean moves from the last frame's by no more than the
// input's mean did. The tiles' curves differ and drift, so one mean curve's rounding would miss it.
TEST(Quality, ClahesHoldKeepsTheMeanTheTilesPutOut) {
  for (const auto& [bins, tiles] : {std::pair{256, 64}, std::pair{1024, 12}}) {
    std::mt19937 rng(static_cast<uint32_t>(bins * 7 + tiles));
    const size_t luts = static_cast<size_t>(tiles) + 1, n = luts * bins;
    std::vector<int32_t> state(n), scalars(2 * eq::kTemporalScalars);
    std::vector<uint32_t> hist(2 * bins);
    const eq::Levels levels = eq::nominal_levels(bins == 1024 ? 10 : 8, false, false);
    const int scale = bins / 256;
    int held = 0;
    for (int frame = 0; frame < 40; ++frame) {
      // A dark pan: each tile's mass around a level of its own that drifts, the frame's mean
      // moving by a small fraction of a level a frame.
      std::vector<uint32_t> tile_counts(static_cast<size_t>(tiles) * bins, 0), counts(bins, 0);
      for (int t = 0; t < tiles; ++t) {
        const int centre = (40 + (t * 13) % 50 + (frame * (t % 3)) / 4) * scale;
        for (int dv = -6 * scale; dv <= 6 * scale; ++dv) {
          const uint32_t c = 50 + rng() % 40;
          tile_counts[static_cast<size_t>(t) * bins + centre + dv] += c;
          counts[centre + dv] += c;
        }
      }
      // Each tile's target curve: a stretch of its own mass, redrawn a little each frame.
      std::vector<uint16_t> lut(n);
      for (size_t k = 0; k < luts; ++k) {
        uint32_t level = levels.lo;
        for (int v = 0; v < bins; ++v) lut[k * bins + v] = static_cast<uint16_t>(level = std::min<uint32_t>(levels.hi, level + (v > 20 * scale && v < 110 * scale ? rng() % 4 : rng() % 2)));
      }
      eq::TemporalArgs a = sequence_args(counts.data(), bins, lut.data(), tiles, tile_counts.data(), state.data(), hist.data(),
                                         scalars.data(), frame % 2);
      a.restart = frame == 0;
      a.levels = levels;
      a.cut_q16 = 65536;
      a.alpha_q16 = 4000;
      ASSERT_OK(eq::temporal_update(a));
      uint64_t sum = 0, total = 0;
      for (size_t i = 0; i < tile_counts.size(); ++i) {
        sum += static_cast<uint64_t>(tile_counts[i]) * lut[i];
        total += tile_counts[i];
      }
      const int32_t put_out = tone::mean_q12(sum, total);
      ASSERT_EQ(a.next_scalars[1], put_out) << bins << " bins, frame " << frame;
      const int32_t c = a.next_scalars[0];
      if (frame > 0) {  // the offset is the one bisection over the put-out mean finds
        auto u_of = [&](int32_t off) {
          uint64_t sum_off = 0;
          for (size_t i = 0; i < tile_counts.size(); ++i)
            sum_off += static_cast<uint64_t>(tile_counts[i]) * tone::temporal_entry(state[i], off, static_cast<int>(i % bins), bins, levels);
          return tone::mean_q12(sum_off, total);
        };
        auto bisect = [&](int32_t lo, int32_t hi, int32_t t) { return tone::bisect_at_most(u_of, lo, hi, t); };
        const int32_t d = std::abs(a.next_scalars[2] - a.prev_scalars[2]);
        ASSERT_EQ(c, tone::limit_offset(u_of, bisect, a.prev_scalars[0], a.alpha_q16, a.prev_scalars[1] - d, a.prev_scalars[1] + d,
                                        tone::max_offset(bins)))
            << bins << " bins, frame " << frame;
      }
      if (frame == 0 || std::abs(c) >= tone::max_offset(bins)) continue;
      const int32_t d = std::abs(a.next_scalars[2] - a.prev_scalars[2]);
      EXPECT_LE(std::abs(put_out - a.prev_scalars[1]), d) << bins << " bins, frame " << frame;
      held += c != 0;
    }
    EXPECT_GT(held, 10) << bins << " bins: the hold should have been at work";
  }
}

TEST(Quality, ChromaFollowsTheLumaGainWithinTheLimit) {
  // Luma doubled (above black), chroma deviations scaled by 2 capped at the limit, never below 1,
  // neutral stays.
  EXPECT_EQ(tone::chroma_scale(4 * 66, 4 * 116, 4, 16, 8192), 8192u);  // gain 2, limit 2
  EXPECT_EQ(tone::chroma_scale(4 * 66, 4 * 116, 4, 16, 6144), 6144u);  // capped at 1.5
  EXPECT_EQ(tone::chroma_scale(4 * 66, 4 * 91, 4, 16, 8192), 6144u);  // gain 1.5, below the limit
  EXPECT_EQ(tone::chroma_scale(4 * 116, 4 * 66, 4, 16, 8192), 4096u);  // darkened: kept
  EXPECT_EQ(tone::chroma_scale(4 * 16, 4 * 100, 4, 16, 6144), 6144u);  // from black: the limit
  EXPECT_EQ(tone::chroma_scale(4 * 100, 4 * 10, 4, 16, 6144), 4096u);  // to below black: kept
  EXPECT_EQ(tone::scale_chroma(128, 6144, 128, 0, 255), 128u);
  EXPECT_EQ(tone::scale_chroma(138, 6144, 128, 0, 255), 143u);
  EXPECT_EQ(tone::scale_chroma(118, 6144, 128, 0, 255), 113u);
  EXPECT_EQ(tone::scale_chroma(250, 8192, 128, 0, 255), 255u);
  EXPECT_EQ(tone::scale_chroma(5, 8192, 128, 0, 255), 0u);
  // Limited range: the result stays within 16..240.
  EXPECT_EQ(tone::scale_chroma(250, 8192, 128, 16, 240), 240u);
  EXPECT_EQ(tone::scale_chroma(5, 8192, 128, 16, 240), 16u);
  EXPECT_EQ(tone::scale_chroma(138, 6144, 128, 16, 240), 143u);

  // apply_colour with a LUT that doubles luma above 16: 4:2:0, odd size, limit 2.
  const int w = 7, h = 5, cw = 4, ch = 3;
  std::vector<uint8_t> y(w * h, 50), u(cw * ch), v(cw * ch);
  for (int i = 0; i < cw * ch; ++i) {
    u[i] = static_cast<uint8_t>(118 + i);
    v[i] = static_cast<uint8_t>(140 - i);
  }
  std::vector<uint16_t> lut(256);
  for (int i = 0; i < 256; ++i) lut[i] = static_cast<uint16_t>(std::min(255, i <= 16 ? i : 16 + 2 * (i - 16)));
  eq::ChromaPlanes c;
  c.planes[0] = PlaneView<uint8_t>{u.data(), cw, ch, static_cast<size_t>(cw), 8, MemoryKind::host};
  c.planes[1] = PlaneView<uint8_t>{v.data(), cw, ch, static_cast<size_t>(cw), 8, MemoryKind::host};
  c.black = 16;
  c.limit_q12 = 8192;
  const auto u0 = u, v0 = v;
  ASSERT_OK(eq::apply_colour(PlaneView<uint8_t>{y.data(), w, h, static_cast<size_t>(w), 8, MemoryKind::host}, c, lut.data(), nullptr, 256));
  for (uint8_t s : y) EXPECT_EQ(s, 84);
  for (int i = 0; i < cw * ch; ++i) {
    EXPECT_EQ(u[i] - 128, 2 * (u0[i] - 128)) << i;
    EXPECT_EQ(v[i] - 128, 2 * (v0[i] - 128)) << i;
  }
  // The identity LUT changes nothing.
  for (int i = 0; i < 256; ++i) lut[i] = static_cast<uint16_t>(i);
  const auto y1 = y, u1 = u;
  ASSERT_OK(eq::apply_colour(PlaneView<uint8_t>{y.data(), w, h, static_cast<size_t>(w), 8, MemoryKind::host}, c, lut.data(), nullptr, 256));
  EXPECT_EQ(y, y1);
  EXPECT_EQ(u, u1);
}

TEST(Quality, SettingsValidateParseAndDescribe) {
  EXPECT_TRUE(eq::plain_quality().plain());
  EXPECT_FALSE(eq::default_quality().plain());
  EXPECT_TRUE(eq::validate(eq::default_quality()).is_ok());
  eq::Quality q;
  q.clip_limit = 0.5;
  EXPECT_FALSE(eq::validate(q).is_ok());
  q = {};
  q.temporal_s = -1;
  EXPECT_FALSE(eq::validate(q).is_ok());
  q = {};
  q.scene_cut = std::nan("");
  EXPECT_FALSE(eq::validate(q).is_ok());
  q = {};
  q.chroma_limit = 0.9;
  EXPECT_FALSE(eq::validate(q).is_ok());
  EXPECT_FALSE(eq::parse_tiles("0x8").is_ok());
  EXPECT_FALSE(eq::parse_tiles("8").is_ok());
  EXPECT_FALSE(eq::parse_tiles("33x2").is_ok());
  ASSERT_TRUE(eq::parse_tiles("16x9").is_ok());
  EXPECT_EQ(eq::parse_tiles("16x9")->cols, 16);
  EXPECT_FALSE(eq::parse_mode("local").is_ok());
  EXPECT_EQ(*eq::parse_chroma("auto"), eq::ChromaMode::follow);
  EXPECT_EQ(eq::describe(eq::plain_quality()), "plain");
  q = eq::default_quality();
  q.mode = eq::Mode::clahe;
  EXPECT_NE(eq::describe(q).find("clahe 8x8"), std::string::npos) << eq::describe(q);
  EXPECT_EQ(eq::effective_tiles(q, 5, 100).cols, 5);
  EXPECT_EQ(eq::tiles_kernel("cub", eq::Mode::clahe, Backend::gpu), "method2_tuned");
  EXPECT_EQ(eq::tiles_kernel("method2_tuned", eq::Mode::clahe, Backend::gpu), "method2_tuned");
  EXPECT_EQ(eq::tiles_kernel("block_atomic", eq::Mode::clahe, Backend::gpu), "block_atomic");
  EXPECT_EQ(eq::tiles_kernel("cub", eq::Mode::global, Backend::gpu), "cub");
  EXPECT_EQ(eq::tiles_kernel("cpu_reference", eq::Mode::clahe, Backend::cpu), "cpu_reference");
}

// --- the equalizer with the controls (CPU) ----------------------------------------------------------

// Plain settings with the textbook levels: the classic formula, as reference_equalize computes it.
eq::Quality textbook_plain() {
  eq::Quality q = eq::plain_quality();
  q.textbook = true;
  return q;
}

double mean_luma(const FrameCopy& f) {
  const size_t n = static_cast<size_t>(f.format.width) * f.format.height;
  double s = 0;
  for (size_t i = 0; i < n; ++i)
    s += f.format.bit_depth == 8 ? f.planes[0][i] : reinterpret_cast<const uint16_t*>(f.planes[0].data())[i];
  return s / n;
}

TEST(QualityPipeline, PlainTextbookSettingsAreTheClassicFramesAndChromaIsKept) {
  const video::FrameFormat fmt{160, 90, 8, 1, 1};
  eq::Quality q = eq::plain_quality();
  q.textbook = true;  // reference_equalize: the classic formula
  auto run = drive(cpu_options(q), fmt, 6, dim_scene(fmt, 3));
  ASSERT_TRUE(run.is_ok()) << run.status().to_string();
  auto pool = video::FramePool::create(fmt, MemoryKind::host);
  ASSERT_TRUE(pool.is_ok());
  for (int n = 0; n < 6; ++n) {
    FrameCopy want = copy_frame(*painted_frame(**pool, n, 30, dim_scene(fmt, 3)));
    reference_equalize(want, eq::kWeightOne, true);
    EXPECT_EQ(run->frames[n].planes, want.planes) << "frame " << n;
  }
}

TEST(QualityPipeline, EveryModeRunsOn8And10BitPlanarAndNv12) {
  for (video::FrameFormat fmt : {video::FrameFormat{161, 91, 8, 1, 1}, video::FrameFormat{161, 91, 10, 1, 1},
                                 video::FrameFormat{160, 90, 8, 1, 1, video::PlaneLayout::semi_planar},
                                 video::FrameFormat{64, 48, 8, 0, 0}, video::FrameFormat{64, 48, 10, 1, 0}}) {
    for (eq::Mode mode : {eq::Mode::global, eq::Mode::clahe}) {
      eq::Quality q = eq::default_quality();
      q.mode = mode;
      q.tiles = {5, 3};
      auto run = drive(cpu_options(q), fmt, 8, dim_scene(fmt, 5));
      ASSERT_TRUE(run.is_ok()) << fmt.describe() << ": " << run.status().to_string();
      ASSERT_EQ(run->frames.size(), 8u);
      // Brighter than the dim input above black (limited range: 16 << (depth - 8)), and the chroma
      // moved away from neutral (the tint kept).
      auto pool = video::FramePool::create(fmt, MemoryKind::host);
      FrameCopy in = copy_frame(*painted_frame(**pool, 0, 30, dim_scene(fmt, 5)));
      const double black = 16 << (fmt.bit_depth - 8);
      EXPECT_GT(mean_luma(run->frames[0]) - black, (mean_luma(in) - black) * 1.1) << fmt.describe();
      EXPECT_NE(run->frames[0].planes[1], in.planes[1]) << fmt.describe() << ": chroma follow changed nothing";
      EXPECT_EQ(run->side[0].quality, q);
    }
  }
}

// Random frames (every level, sub-black and super-white included) in every mode: the output stays
// within the nominal range, luma and (chroma follow) chroma; the textbook levels still reach 0
// and max.
// Sample i of plane p of a frame copy, at the stored depth, shifted down to the bit depth.
uint32_t copied_sample(const FrameCopy& f, size_t p, size_t i, int depth, int shift) {
  return (depth > 8 ? reinterpret_cast<const uint16_t*>(f.planes[p].data())[i] : f.planes[p][i]) >> shift;
}

// With range-aware levels every mode keeps a sample at or below black at black (with the textbook
// levels clahe's tiles lift it by their share of samples at or below it: Zuiderveld's mapping).
void expect_black_stays_black(const FrameCopy& f, const video::FrameFormat& fmt, const Painter& in, int index, const eq::Levels& l,
                              const std::string& what) {
  const int shift = fmt.sample_shift();
  for (int y = 0; y < fmt.height; ++y)
    for (int x = 0; x < fmt.width; ++x) {
      const uint32_t out = copied_sample(f, 0, static_cast<size_t>(y) * fmt.width + x, fmt.bit_depth, shift);
      if ((in(0, x, y, index) >> shift) <= l.lo) {
        ASSERT_EQ(out, l.lo) << what;
      }
    }
}

TEST(QualityPipeline, EveryModeStaysWithinTheNominalRange) {
  eq::Quality clahe = eq::default_quality();
  clahe.mode = eq::Mode::clahe;
  clahe.tiles = {5, 3};
  eq::Quality clahe_plain = eq::plain_quality();
  clahe_plain.mode = eq::Mode::clahe;
  for (video::FrameFormat fmt : {video::FrameFormat{96, 54, 8, 1, 1}, video::FrameFormat{96, 54, 10, 1, 1},
                                 video::FrameFormat{96, 54, 10, 1, 1, video::PlaneLayout::semi_planar}}) {
    const int shift = fmt.sample_shift(), depth = fmt.bit_depth;
    const uint32_t maxval = (1u << depth) - 1;
    const Painter noise = [=](int plane, int x, int y, int n) -> uint32_t {
      const uint32_t r = synth::hash_xy(static_cast<uint32_t>(x), static_cast<uint32_t>(y), static_cast<uint32_t>(n * 3 + plane));
      // Luma: a dim left half (with sub-black samples) and a full right one.
      const uint32_t v = plane == 0 && x < 48 ? r % (maxval / 4) : r % (maxval + 1);
      return v << shift;
    };
    for (eq::RangeMode range : {eq::RangeMode::automatic, eq::RangeMode::full})
      for (bool textbook : {false, true})
        for (eq::Quality q : {eq::plain_quality(), eq::default_quality(), clahe, clahe_plain}) {
          q.range = range;
          q.textbook = textbook;
          auto run = drive(cpu_options(q), fmt, 4, noise);
          ASSERT_TRUE(run.is_ok()) << run.status().to_string();
          const bool limited = range != eq::RangeMode::full && !textbook;
          const eq::Levels l = eq::nominal_levels(depth, range == eq::RangeMode::full, textbook);
          const uint32_t c_lo = limited ? 16u << (depth - 8) : 0u, c_hi = limited ? 240u << (depth - 8) : maxval;
          for (const FrameCopy& f : run->frames) {
            uint32_t lo = maxval, hi = 0;
            for (size_t p = 0; p < f.planes.size(); ++p) {
              const size_t n = f.planes[p].size() / (depth > 8 ? 2 : 1);
              for (size_t i = 0; i < n; ++i) {
                const uint32_t v = copied_sample(f, p, i, depth, shift);
                if (p == 0) {
                  lo = std::min(lo, v);
                  hi = std::max(hi, v);
                } else if (q.chroma == eq::ChromaMode::follow) {
                  ASSERT_TRUE(v >= c_lo && v <= c_hi) << fmt.describe() << " " << eq::describe(q) << ": chroma " << v;
                }
              }
            }
            // Global curves stretch onto the whole range: the darkest level to black, the
            // brightest to white, or to one level inside when the input had no level at the end
            // (the guard).
            if (!textbook)
              expect_black_stays_black(f, fmt, noise, static_cast<int>(&f - run->frames.data()), l, fmt.describe() + " " + eq::describe(q));
            EXPECT_GE(lo, l.lo) << fmt.describe() << " " << eq::describe(q);
            EXPECT_LE(hi, l.hi) << fmt.describe() << " " << eq::describe(q);
            if (q.mode == eq::Mode::global) {
              EXPECT_LE(lo, l.lo + 1) << fmt.describe() << " " << eq::describe(q);
              EXPECT_GE(hi, l.hi - 1) << fmt.describe() << " " << eq::describe(q);
            }
          }
        }
  }
}

// P010 (NVDEC's 10-bit output: values in the high 10 bits, UV interleaved) equalizes as planar
// 10-bit does, in every mode: the same luma, the same chroma (de-interleaved), low bits zero.
TEST(QualityPipeline, P010IsPlanarTenBitInTheHighBits) {
  const video::FrameFormat p010{160, 90, 10, 1, 1, video::PlaneLayout::semi_planar}, planar{160, 90, 10, 1, 1};
  ASSERT_EQ(p010.sample_shift(), 6);
  eq::Quality clahe = eq::default_quality();
  clahe.mode = eq::Mode::clahe;
  clahe.tiles = {5, 3};
  for (const eq::Quality& q : {eq::plain_quality(), eq::default_quality(), clahe}) {
    auto a = drive(cpu_options(q), p010, 6, dim_scene(p010, 3));
    auto b = drive(cpu_options(q), planar, 6, dim_scene(planar, 3));
    ASSERT_TRUE(a.is_ok() && b.is_ok()) << eq::describe(q);
    for (size_t n = 0; n < 6; ++n) {
      const auto* ay = reinterpret_cast<const uint16_t*>(a->frames[n].planes[0].data());
      const auto* by = reinterpret_cast<const uint16_t*>(b->frames[n].planes[0].data());
      for (size_t i = 0; i < 160u * 90u; ++i) {
        ASSERT_EQ(ay[i] & 63, 0) << eq::describe(q) << ": low bits set at " << i;
        ASSERT_EQ(ay[i] >> 6, by[i]) << eq::describe(q) << ": frame " << n << " luma " << i;
      }
      const auto* uv = reinterpret_cast<const uint16_t*>(a->frames[n].planes[1].data());
      const auto* u = reinterpret_cast<const uint16_t*>(b->frames[n].planes[1].data());
      const auto* v = reinterpret_cast<const uint16_t*>(b->frames[n].planes[2].data());
      for (size_t i = 0; i < 80u * 45u; ++i) {
        ASSERT_EQ(uv[2 * i] >> 6, u[i]) << eq::describe(q) << ": frame " << n << " U " << i;
        ASSERT_EQ(uv[2 * i + 1] >> 6, v[i]) << eq::describe(q) << ": frame " << n << " V " << i;
        ASSERT_EQ((uv[2 * i] | uv[2 * i + 1]) & 63, 0);
      }
    }
  }
}

TEST(QualityPipeline, ClaheWithTenBitsIsTheEightBitResultScaled) {
  // Tiles of 80x45: OpenCV's spreading of the excess's remainder from bin 0 differs between 256 and
  // 1024 bins, which only matters in tiles of a few hundred samples.
  const video::FrameFormat f8{640, 360, 8, 1, 1}, f10{640, 360, 10, 1, 1};
  eq::Quality q;
  q.mode = eq::Mode::clahe;  // no clip: the clip limit bounds the slope per level, 4x finer levels in 10-bit
  auto a = drive(cpu_options(q), f8, 1, dim_scene(f8));
  auto b = drive(cpu_options(q), f10, 1, dim_scene(f10));
  ASSERT_TRUE(a.is_ok() && b.is_ok());
  const std::vector<uint8_t> p8 = a->frames[0].planes[0];
  const uint16_t* p10 = reinterpret_cast<const uint16_t*>(b->frames[0].planes[0].data());
  int worst = 0;
  for (size_t i = 0; i < p8.size(); ++i) worst = std::max(worst, std::abs(static_cast<int>(std::lround(p10[i] / 4.0)) - p8[i]));
  EXPECT_LE(worst, 2);  // round(cdf 1023 / N) / 4 against round(cdf 255 / N)
  // With the clip limit at 8-bit resolution, 10-bit values that are 8-bit ones x 4 clip alike.
  q.clip_limit = 2;
  a = drive(cpu_options(q), f8, 1, dim_scene(f8));
  b = drive(cpu_options(q), f10, 1, dim_scene(f10));
  ASSERT_TRUE(a.is_ok() && b.is_ok());
  worst = 0;
  const uint16_t* c10 = reinterpret_cast<const uint16_t*>(b->frames[0].planes[0].data());
  for (size_t i = 0; i < p8.size(); ++i)
    worst = std::max(worst, std::abs(static_cast<int>(std::lround(c10[i] / 4.0)) - a->frames[0].planes[0][i]));
  EXPECT_LE(worst, 2);
}

// A static dim picture in which a bright block (a quarter of the frame) appears at frame 6 and
// goes at frame 12, then a cut to another shot at frame 20.
Painter pumping_scene(const video::FrameFormat& f) {
  const Painter base = dim_scene(f, 20);
  return [=](int plane, int x, int y, int n) -> uint32_t {
    const bool block = n >= 6 && n < 12 && x < f.width / 2 && y < f.height / 2;
    if (plane == 0 && block) return 230u << (f.bit_depth - 8);
    return base(plane, x, y, n < 20 ? 0 : 20);
  };
}

// The mean over the pixels the block never covers.
double background_mean(const FrameCopy& f) {
  double s = 0;
  int n = 0;
  for (int y = 0; y < f.format.height; ++y)
    for (int x = 0; x < f.format.width; ++x)
      if (!(x < f.format.width / 2 && y < f.format.height / 2)) {
        s += f.planes[0][static_cast<size_t>(y) * f.format.width + x];
        ++n;
      }
  return s / n;
}

TEST(QualityPipeline, TemporalFilterSmoothsAShotAndAdaptsAtTheCut) {
  const video::FrameFormat fmt{160, 90, 8, 1, 1};
  const int cut = 20, frames = 26;
  eq::Quality off = eq::plain_quality(), on = off;  // no clip limit: it would calm the block's bin itself
  on.temporal_s = 0.5;
  auto a = drive(cpu_options(off), fmt, frames, pumping_scene(fmt));
  auto b = drive(cpu_options(on), fmt, frames, pumping_scene(fmt));
  ASSERT_TRUE(a.is_ok() && b.is_ok());
  // The first frame and the frame of the cut start over: identical to the unfiltered frames.
  EXPECT_EQ(a->frames[0].planes, b->frames[0].planes);
  EXPECT_EQ(a->frames[cut].planes, b->frames[cut].planes) << "the cut did not reset the filter";
  // The block's arrival remaps the whole unfiltered frame: its unchanged background pumps. The
  // filter (alpha ~ 0.065 a frame) moves it by a fraction of that.
  auto pumping = [&](const DrivenRun& r) {
    double worst = 0;
    for (int n = 1; n < cut; ++n) worst = std::max(worst, std::abs(background_mean(r.frames[n]) - background_mean(r.frames[n - 1])));
    return worst;
  };
  EXPECT_GT(pumping(*a), 3.0) << "the scene does not pump: the test shows nothing";
  EXPECT_LT(pumping(*b), pumping(*a) / 5);
  // A scene-cut threshold of 1 never cuts: the frame of the cut is then still filtered.
  on.scene_cut = 1;
  auto c = drive(cpu_options(on), fmt, frames, pumping_scene(fmt));
  ASSERT_TRUE(c.is_ok());
  EXPECT_NE(c->frames[cut].planes, a->frames[cut].planes);
}

TEST(QualityPipeline, LiveControlsApplyFromTheNextFrameAndAResetStartsOver) {
  const video::FrameFormat fmt{96, 54, 8, 1, 1};
  const int frames = 12;
  eq::Quality clahe = eq::default_quality();
  clahe.mode = eq::Mode::clahe;
  clahe.temporal_s = 0;  // stateless: frames 4..7 are those of a run in clahe from the start
  auto switched = drive(cpu_options(eq::plain_quality()), fmt, frames, dim_scene(fmt), [&](int n, pipeline::Equalizer& e) {
    if (n == 4) {
      EXPECT_TRUE(e.set_quality(clahe).is_ok());
    }
    if (n == 8) {
      EXPECT_TRUE(e.set_quality(eq::plain_quality()).is_ok());
    }
    if (n == 5) {
      EXPECT_FALSE(e.set_quality([] { eq::Quality q; q.clip_limit = 100; return q; }()).is_ok());
    }
  });
  ASSERT_TRUE(switched.is_ok());
  ASSERT_EQ(switched->frames.size(), static_cast<size_t>(frames)) << "no frame lost";
  auto plain = drive(cpu_options(eq::plain_quality()), fmt, frames, dim_scene(fmt));
  auto all_clahe = drive(cpu_options(clahe), fmt, frames, dim_scene(fmt));
  ASSERT_TRUE(plain.is_ok() && all_clahe.is_ok());
  for (int n = 0; n < frames; ++n) {
    const bool in_clahe = n >= 4 && n < 8;
    EXPECT_EQ(switched->side[n].quality, in_clahe ? clahe : eq::plain_quality()) << n;
    EXPECT_EQ(switched->frames[n].planes, (in_clahe ? all_clahe : plain)->frames[n].planes) << n;
  }
  // With the filter on, a change of mode starts it over: the first frame in the new mode is the
  // unfiltered one.
  eq::Quality g = eq::default_quality(), g_off = g;
  g_off.temporal_s = 0;
  clahe.temporal_s = 0.5;
  auto change = drive(cpu_options(clahe), fmt, frames, dim_scene(fmt), [&](int n, pipeline::Equalizer& e) {
    if (n == 6) {
      EXPECT_TRUE(e.set_quality(g).is_ok());
    }
  });
  auto unfiltered = drive(cpu_options(g_off), fmt, frames, dim_scene(fmt));
  ASSERT_TRUE(change.is_ok() && unfiltered.is_ok());
  EXPECT_EQ(change->frames[6].planes, unfiltered->frames[6].planes);
  EXPECT_NE(change->frames[7].planes, unfiltered->frames[7].planes);
}

TEST(QualityPipeline, TheComparisonIsASecondEqualizationOfTheSameInput) {
  const video::FrameFormat fmt{96, 54, 8, 1, 1};
  pipeline::EqualizerOptions o = cpu_options(eq::default_quality());
  o.compare.enabled = true;  // no look: the input
  auto run = drive(o, fmt, 6, dim_scene(fmt), [&](int n, pipeline::Equalizer& e) {
    if (n == 3) {
      EXPECT_TRUE(e.set_compare({true, pipeline::Look{1.0, textbook_plain()}}).is_ok());
    }
  });
  ASSERT_TRUE(run.is_ok()) << run.status().to_string();
  ASSERT_EQ(run->compare.size(), 6u);
  auto pool = video::FramePool::create(fmt, MemoryKind::host);
  auto a = drive(cpu_options(eq::default_quality()), fmt, 6, dim_scene(fmt));
  ASSERT_TRUE(a.is_ok());
  for (int n = 0; n < 6; ++n) {
    FrameCopy in = copy_frame(*painted_frame(**pool, n, 30, dim_scene(fmt)));
    EXPECT_EQ(run->frames[n].planes, a->frames[n].planes) << "the comparison changes A's frames, frame " << n;
    if (n < 3) {
      EXPECT_EQ(run->compare[n].planes, in.planes) << "before the look: the input";
      EXPECT_FALSE(run->side[n].compare_look.has_value());
    } else {
      reference_equalize(in, eq::kWeightOne, true);
      EXPECT_EQ(run->compare[n].planes, in.planes) << "look B plain textbook: the reference equalization";
      EXPECT_TRUE(run->side[n].compare_look.has_value());
    }
  }
}

}  // namespace
}  // namespace histeq::test
