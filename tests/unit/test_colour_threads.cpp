// The CPU apply loops (apply_lut, apply_tiles, apply_colour) split over threads and specialised
// for 4:2:0: against a plain per-sample reference written here, with and without a
// pool, on every chroma layout, odd sizes, 8 and 16 bits, P010's high bits, global and tiled maps.
#include <gtest/gtest.h>
#include <sched.h>

#include <algorithm>
#include <atomic>
#include <thread>
#include <random>
#include <vector>

#include "core/equalize/equalize.h"
#include "core/equalize/tone.h"
#include "core/image/fork_join.h"
#include "tests/common/gtest_status.h"

namespace histeq::test {
namespace {

namespace tone = eq::tone;

struct Layout {
  const char* name;
  int w, h, sx, sy;
  bool interleaved;
  int depth, shift;  // stored in 8 or 16 bits; shift: samples in the high bits (P010)
};

template <class T>
struct Frame {
  int w = 0, h = 0, cw = 0, ch = 0;
  bool interleaved = false;
  std::vector<T> y, u, v;  // interleaved: UV in u (2 * cw samples a row)
};

template <class T>
Frame<T> make_frame(const Layout& l, uint32_t seed) {
  std::mt19937 rng(seed);
  Frame<T> f;
  f.w = l.w;
  f.h = l.h;
  f.cw = (l.w + (1 << l.sx) - 1) >> l.sx;
  f.ch = (l.h + (1 << l.sy) - 1) >> l.sy;
  f.interleaved = l.interleaved;
  const uint32_t top = sizeof(T) == 1 ? 255u : (l.shift > 0 ? 1023u : 1100u);  // 10-bit planar: some samples past the bins
  std::uniform_int_distribution<uint32_t> d(0, top);
  auto sample = [&] { return static_cast<T>(d(rng) << l.shift); };
  f.y.resize(static_cast<size_t>(f.w) * f.h);
  for (auto& s : f.y) s = sample();
  f.u.resize(static_cast<size_t>(f.cw) * f.ch * (l.interleaved ? 2 : 1));
  for (auto& s : f.u) s = sample();
  if (!l.interleaved) {
    f.v.resize(static_cast<size_t>(f.cw) * f.ch);
    for (auto& s : f.v) s = sample();
  }
  return f;
}

template <class T>
eq::ChromaPlanes chroma_of(Frame<T>& f, const Layout& l) {
  eq::ChromaPlanes c;
  const int bits = sizeof(T) * 8 == 8 ? 8 : (l.shift > 0 ? 16 : 10);
  const int uw = l.interleaved ? 2 * f.cw : f.cw;
  c.planes[0] = PlaneView<T>{f.u.data(), uw, f.ch, sizeof(T) * uw, bits, MemoryKind::host};
  if (!l.interleaved) c.planes[1] = PlaneView<T>{f.v.data(), f.cw, f.ch, sizeof(T) * f.cw, bits, MemoryKind::host};
  c.interleaved = l.interleaved;
  c.shift_x = l.sx;
  c.shift_y = l.sy;
  const uint32_t scale = sizeof(T) == 1 ? 1u : 4u;
  c.black = 16 * scale;
  c.limit_q12 = 6144;
  c.lo = 16 * scale;
  c.hi = 240 * scale;
  c.shift = l.shift;
  return c;
}

// The formula sample by sample, as tone.h states it: each chroma sample's luma block mapped and
// summed, its gain, its two chroma samples scaled.
template <class T, class Map>
void reference(Frame<T>& f, const eq::ChromaPlanes& c, int bins, Map map) {
  const int sh = c.shift;
  const uint32_t depth = (sizeof(T) == 1 ? 8u : 10u), maxval = (1u << depth) - 1, neutral = 1u << (depth - 1);
  for (int cy = 0; cy < f.ch; ++cy)
    for (int cx = 0; cx < f.cw; ++cx) {
      uint32_t in_sum = 0, out_sum = 0, n = 0;
      for (int y = cy << c.shift_y; y < std::min(f.h, (cy + 1) << c.shift_y); ++y)
        for (int x = cx << c.shift_x; x < std::min(f.w, (cx + 1) << c.shift_x); ++x) {
          T& s = f.y[static_cast<size_t>(y) * f.w + x];
          const uint32_t in = static_cast<uint32_t>(s) >> sh;
          const uint32_t out = in < static_cast<uint32_t>(bins) ? map(x, y, in) : in;
          s = static_cast<T>(out << sh);
          in_sum += in;
          out_sum += out;
          ++n;
        }
      const uint32_t g = tone::chroma_scale(in_sum, out_sum, n, c.black, c.limit_q12);
      T* pu = f.interleaved ? &f.u[(static_cast<size_t>(cy) * f.cw + cx) * 2] : &f.u[static_cast<size_t>(cy) * f.cw + cx];
      T* pv = f.interleaved ? pu + 1 : &f.v[static_cast<size_t>(cy) * f.cw + cx];
      for (T* p : {pu, pv})
        *p = static_cast<T>(tone::scale_chroma(static_cast<uint32_t>(*p) >> sh, g, neutral, c.lo, std::min(c.hi, maxval)) << sh);
    }
}

template <class T>
void check_layout(const Layout& l, image::ForkJoin* pool) {
  const int bins = sizeof(T) == 1 ? 256 : 1024;
  std::vector<uint16_t> lut(static_cast<size_t>(bins));
  for (int i = 0; i < bins; ++i) lut[static_cast<size_t>(i)] = static_cast<uint16_t>(std::min(bins - 1, i * 3 / 2 + 5));
  // Tiles: a 3x2 grid of different curves.
  const hist::TileGrid grid{3, 2};
  std::vector<uint16_t> luts(static_cast<size_t>(grid.count()) * bins);
  for (int t = 0; t < grid.count(); ++t)
    for (int i = 0; i < bins; ++i) luts[static_cast<size_t>(t) * bins + i] = static_cast<uint16_t>(std::min(bins - 1, i * (t + 2) / 3));
  std::vector<uint32_t> xt(static_cast<size_t>(l.w)), yt(static_cast<size_t>(l.h));
  eq::axis_table(l.w, grid.cols, xt.data());
  eq::axis_table(l.h, grid.rows, yt.data());
  const eq::TileLuts tiles{luts.data(), grid, xt.data(), yt.data(), l.shift};
  for (bool tiled : {false, true}) {
    Frame<T> want = make_frame<T>(l, 7), got = want;
    const eq::ChromaPlanes cw = chroma_of(want, l), cg = chroma_of(got, l);
    if (tiled)
      reference(want, cw, bins, [&](int x, int y, uint32_t v) { return tone::tile_map(luts.data(), grid.cols, bins, xt[x], yt[y], v); });
    else
      reference(want, cw, bins, [&](int, int, uint32_t v) { return static_cast<uint32_t>(lut[v]); });
    const int bits = sizeof(T) == 1 ? 8 : (l.shift > 0 ? 16 : 10);
    const PlaneView<T> y{got.y.data(), l.w, l.h, sizeof(T) * l.w, bits, MemoryKind::host};
    ASSERT_OK(eq::apply_colour(y, cg, lut.data(), tiled ? &tiles : nullptr, bins, pool));
    EXPECT_EQ(got.y, want.y) << l.name << (tiled ? " tiles" : " lut") << (pool ? " threads" : "");
    EXPECT_EQ(got.u, want.u) << l.name << (tiled ? " tiles" : " lut") << (pool ? " threads" : "");
    EXPECT_EQ(got.v, want.v) << l.name << (tiled ? " tiles" : " lut") << (pool ? " threads" : "");
  }
}

TEST(ColourThreads, EveryLayoutMatchesTheReference) {
  image::ForkJoin pool(3);
  const Layout eight[] = {{"420 odd", 1921, 1081, 1, 1, false, 8, 0}, {"nv12", 640, 360, 1, 1, true, 8, 0},
                          {"422", 333, 97, 1, 0, false, 8, 0},         {"444", 101, 67, 0, 0, false, 8, 0},
                          {"420 tiny", 3, 1, 1, 1, false, 8, 0}};
  for (const Layout& l : eight)
    for (image::ForkJoin* p : {static_cast<image::ForkJoin*>(nullptr), &pool}) check_layout<uint8_t>(l, p);
  const Layout sixteen[] = {{"420p10 odd", 645, 363, 1, 1, false, 10, 0}, {"p010", 640, 360, 1, 1, true, 16, 6}};
  for (const Layout& l : sixteen)
    for (image::ForkJoin* p : {static_cast<image::ForkJoin*>(nullptr), &pool}) check_layout<uint16_t>(l, p);
}

TEST(ColourThreads, LumaAppliesSplitOverThreadsAsOnOne) {
  image::ForkJoin pool(3);
  std::mt19937 rng(3);
  const int w = 1283, h = 721;
  std::vector<uint8_t> a(static_cast<size_t>(w) * h);
  for (auto& s : a) s = static_cast<uint8_t>(rng());
  std::vector<uint16_t> lut(256);
  for (int i = 0; i < 256; ++i) lut[static_cast<size_t>(i)] = static_cast<uint16_t>(255 - i);
  auto b = a;
  std::vector<uint8_t> c(a.size(), 3);  // from a into c, the two-plane form
  ASSERT_OK(eq::apply_lut(PlaneView<const uint8_t>{a.data(), w, h, static_cast<size_t>(w), 8, MemoryKind::host},
                          PlaneView<uint8_t>{c.data(), w, h, static_cast<size_t>(w), 8, MemoryKind::host}, lut.data(), 256, &pool));
  EXPECT_EQ(a, b) << "the input was written";
  ASSERT_OK(eq::apply_lut(PlaneView<uint8_t>{a.data(), w, h, static_cast<size_t>(w), 8, MemoryKind::host}, lut.data(), 256));
  ASSERT_OK(eq::apply_lut(PlaneView<uint8_t>{b.data(), w, h, static_cast<size_t>(w), 8, MemoryKind::host}, lut.data(), 256, &pool));
  EXPECT_EQ(a, b);
  EXPECT_EQ(a, c);
  const hist::TileGrid grid{4, 3};
  std::vector<uint16_t> luts(static_cast<size_t>(grid.count()) * 256);
  for (size_t i = 0; i < luts.size(); ++i) luts[i] = static_cast<uint16_t>((i * 7) % 256);
  std::vector<uint32_t> xt(static_cast<size_t>(w)), yt(static_cast<size_t>(h));
  eq::axis_table(w, grid.cols, xt.data());
  eq::axis_table(h, grid.rows, yt.data());
  const eq::TileLuts tiles{luts.data(), grid, xt.data(), yt.data(), 0};
  ASSERT_OK(eq::apply_tiles(PlaneView<uint8_t>{a.data(), w, h, static_cast<size_t>(w), 8, MemoryKind::host}, tiles, 256));
  ASSERT_OK(eq::apply_tiles(PlaneView<uint8_t>{b.data(), w, h, static_cast<size_t>(w), 8, MemoryKind::host}, tiles, 256, &pool));
  EXPECT_EQ(a, b);
}

}  // namespace
}  // namespace histeq::test

namespace histeq::test {
namespace {

// The vector loops' form of the gain equals tone.h's for every 4:2:0 sum at 8 and 10 bits, at the
// limits the controls allow (1..4) and both blacks.
TEST(ColourThreads, BranchlessGainIsTheFormulaEverywhere) {
  for (uint32_t scale : {1u, 4u}) {
    const uint32_t top = 4 * (255 * scale + (scale > 1 ? 3 : 0));
    for (uint32_t black : {0u, 16u * scale})
      for (uint32_t limit : {4096u, 4915u, 8192u, 16384u}) {
        uint64_t differ = 0;
        for (uint32_t in = 0; in <= top; ++in)
          for (uint32_t out = 0; out <= top; ++out)
            differ += eq::tone::chroma_scale(in, out, 4, black, limit) != eq::tone::chroma_scale_branchless(in, out, 4, black, limit);
        EXPECT_EQ(differ, 0u) << "scale " << scale << " black " << black << " limit " << limit;
      }
  }
}

// The tiled luma apply blends the tile rows first (core/equalize/ops/apply/apply_cpu.cpp): every sample must still be
// tone::tile_map's, for random curves per tile, 8 and 10 bits, P010's high bits, samples out of
// range left as they are, on one thread and on several.
template <class T>
void check_tiles_per_sample(int w, int h, int bins, int shift, hist::TileGrid grid, image::ForkJoin* pool) {
  std::mt19937 rng(static_cast<uint32_t>(w * 31 + h + shift));
  std::vector<uint16_t> luts(static_cast<size_t>(grid.count()) * bins);
  for (auto& e : luts) e = static_cast<uint16_t>(rng() % static_cast<uint32_t>(bins));
  std::vector<uint32_t> xt(static_cast<size_t>(w)), yt(static_cast<size_t>(h));
  eq::axis_table(w, grid.cols, xt.data());
  eq::axis_table(h, grid.rows, yt.data());
  std::vector<T> got(static_cast<size_t>(w) * h);
  for (auto& v : got) v = static_cast<T>(rng() % (sizeof(T) == 1 ? 256u : 65536u));
  std::vector<T> want = got;
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x) {
      T& s = want[static_cast<size_t>(y) * w + x];
      const uint32_t v = static_cast<uint32_t>(s) >> shift;
      if (v < static_cast<uint32_t>(bins)) s = static_cast<T>(tone::tile_map(luts.data(), grid.cols, bins, xt[x], yt[y], v) << shift);
    }
  const eq::TileLuts tiles{luts.data(), grid, xt.data(), yt.data(), shift};
  // From a separate input into another output (pitch of its own) first: the input stays as it is.
  const std::vector<T> input = got;
  const int pitch = w + 5;
  std::vector<T> out(static_cast<size_t>(pitch) * h, T{7});
  const int depth = sizeof(T) == 1 ? 8 : 16;
  ASSERT_OK(eq::apply_tiles(PlaneView<const T>{got.data(), w, h, sizeof(T) * w, depth, MemoryKind::host},
                            PlaneView<T>{out.data(), w, h, sizeof(T) * pitch, depth, MemoryKind::host}, tiles, bins, pool));
  EXPECT_EQ(got, input) << "the input was written";
  for (int y = 0; y < h; ++y) {
    ASSERT_TRUE(std::equal(want.begin() + static_cast<ptrdiff_t>(y) * w, want.begin() + static_cast<ptrdiff_t>(y + 1) * w,
                           out.begin() + static_cast<ptrdiff_t>(y) * pitch)) << "row " << y;
    ASSERT_TRUE(std::all_of(out.begin() + static_cast<ptrdiff_t>(y) * pitch + w, out.begin() + static_cast<ptrdiff_t>(y + 1) * pitch,
                            [](T v) { return v == T{7}; })) << "padding of row " << y;
  }
  ASSERT_OK(eq::apply_tiles(PlaneView<T>{got.data(), w, h, sizeof(T) * w, sizeof(T) == 1 ? 8 : 16, MemoryKind::host}, tiles, bins, pool));
  EXPECT_EQ(got, want) << w << "x" << h << " bins " << bins << " shift " << shift << (pool ? " threads" : "");
}

TEST(ColourThreads, TiledApplyIsTileMapOnEverySample) {
  image::ForkJoin pool(3);
  for (image::ForkJoin* p : {static_cast<image::ForkJoin*>(nullptr), &pool}) {
    check_tiles_per_sample<uint8_t>(1283, 721, 256, 0, {8, 8}, p);
    check_tiles_per_sample<uint8_t>(97, 41, 256, 0, {5, 3}, p);
    check_tiles_per_sample<uint8_t>(7, 5, 64, 0, {1, 1}, p);
    check_tiles_per_sample<uint16_t>(645, 363, 1024, 0, {8, 8}, p);
    check_tiles_per_sample<uint16_t>(640, 360, 1024, 6, {16, 9}, p);
  }
}

// The tile curves shared over threads are the curves built on one (clip and shadow floor on).
TEST(ColourThreads, TileLutsOverThreadsAreTheOnesOnOne) {
  image::ForkJoin pool(3);
  std::mt19937 rng(11);
  for (int bins : {256, 1024}) {
    const int tiles = 64;
    std::vector<uint32_t> counts(static_cast<size_t>(tiles) * bins);
    for (int t = 0; t < tiles; ++t)  // dim tiles: most samples low, a few bright
      for (int i = 0; i < 8000; ++i) ++counts[static_cast<size_t>(t) * bins + (rng() % 8 == 0 ? rng() % bins : rng() % (bins / 4))];
    const eq::Levels l = eq::nominal_levels(bins == 256 ? 8 : 10, false, false);
    std::vector<uint16_t> a(counts.size()), b(counts.size()), ma(bins), mb(bins);
    ASSERT_OK(eq::build_tile_luts(counts.data(), tiles, bins, eq::kWeightOne, 282, l, a.data(), ma.data()));
    ASSERT_OK(eq::build_tile_luts(counts.data(), tiles, bins, eq::kWeightOne, 282, l, b.data(), mb.data(), &pool));
    EXPECT_EQ(a, b) << bins;
    EXPECT_EQ(ma, mb) << bins;
  }
}

}  // namespace
}  // namespace histeq::test

namespace histeq::test {
namespace {

// The pool (fork_join.h): every part runs once per run, with sleeping and with polling workers,
// fewer parts than threads, a run from inside a job (inline), and runs from two threads at once.
TEST(ForkJoin, EveryPartOnceWhateverTheWaitingAndTheCallers) {
  for (int spin_us : {0, 200}) {
    image::ForkJoin pool(3, spin_us);
    for (int round = 0; round < 300; ++round) {
      const int n = 1 + round % 4;
      std::vector<int> hits(static_cast<size_t>(n), 0);
      pool.run(n, [&](int i) { ++hits[static_cast<size_t>(i)]; });
      ASSERT_EQ(hits, std::vector<int>(static_cast<size_t>(n), 1)) << "round " << round << " spin " << spin_us;
    }
    std::atomic<int> inner{0};
    pool.run(4, [&](int) { pool.run(3, [&](int) { ++inner; }); });
    EXPECT_EQ(inner.load(), 12);
    std::atomic<int> total{0};
    auto many = [&] {
      for (int r = 0; r < 200; ++r) pool.run(4, [&](int) { ++total; });
    };
    std::thread other(many);
    many();
    other.join();
    EXPECT_EQ(total.load(), 2 * 200 * 4);
  }
}

// usable_cores counts the cores the process may run on (taskset), not the machine's: a pool of
// polling workers sized by the machine's took the two cores of `taskset -c 0,1` from the caller
// (plain at 175 fps against 355 on the H200 host's two cores).
TEST(ForkJoin, UsableCoresFollowTheAffinityMask) {
  cpu_set_t all;
  CPU_ZERO(&all);
  ASSERT_EQ(sched_getaffinity(0, sizeof(all), &all), 0);
  EXPECT_EQ(image::usable_cores(), CPU_COUNT(&all));
  int first = 0;
  while (!CPU_ISSET(first, &all)) ++first;
  int pinned = 0;
  std::thread t([&] {  // the mask is the thread's: a thread of its own, so the test's is left as it was
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(first, &one);
    if (sched_setaffinity(0, sizeof(one), &one) == 0) pinned = image::usable_cores();
  });
  t.join();
  EXPECT_EQ(pinned, 1);
}

}  // namespace
}  // namespace histeq::test
