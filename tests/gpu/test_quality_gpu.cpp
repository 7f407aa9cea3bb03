// The picture-quality controls on the GPU against the CPU (tests/unit/test_quality.cpp has the CPU's
// own tests): tiled histograms of every kernel that has them against cpu_reference per tile, every
// GPU function of the controls against its CPU form, and whole equalizers in every mode (8- and
// 10-bit, planar and NV12, host frames and frames kept on the device, live changes, the
// comparison). The tolerance is zero: every mode is integer arithmetic (tone.h), so the frames must
// be identical. Without a CUDA device every test here reports itself SKIPPED.
#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <random>

#include "core/cuda/check.h"
#include "core/cuda/device.h"
#include "core/cuda/resources.h"
#include "core/equalize/equalize.h"
#include "core/equalize/ops/equalize/fused_gpu.h"
#include "core/equalize/operation.h"
#include "core/equalize/quality.h"
#include "core/equalize/tone.h"
#include "core/histogram/histogram.h"
#include "core/image/synthetic.h"
#include "core/pipeline/pipeline.h"
#include "tests/common/quality_cases.h"
#include "tests/common/gtest_status.h"

namespace histeq::test {
namespace {

// A device copy of host bytes, on `stream` (then synchronized).
template <class T>
cuda::Buffer upload(const std::vector<T>& v, cudaStream_t stream) {
  auto b = cuda::Buffer::allocate(MemoryKind::device, std::max<size_t>(1, v.size() * sizeof(T)));
  EXPECT_TRUE(b.is_ok());
  if (!v.empty()) {
    EXPECT_TRUE(HISTEQ_CUDA_STATUS(cudaMemcpyAsync(b->data(), v.data(), v.size() * sizeof(T), cudaMemcpyHostToDevice, stream)).is_ok());
  }
  EXPECT_TRUE(HISTEQ_CUDA_STATUS(cudaStreamSynchronize(stream)).is_ok());
  return std::move(b.value());
}

template <class T>
std::vector<T> download(const cuda::Buffer& b, size_t n, cudaStream_t stream) {
  std::vector<T> v(n);
  EXPECT_TRUE(HISTEQ_CUDA_STATUS(cudaMemcpyAsync(v.data(), b.data(), n * sizeof(T), cudaMemcpyDeviceToHost, stream)).is_ok());
  EXPECT_TRUE(HISTEQ_CUDA_STATUS(cudaStreamSynchronize(stream)).is_ok());
  return v;
}

struct StreamFixture : ::testing::Test {
  void SetUp() override {
    if (!cuda::have_device()) return;
    auto s = cuda::Stream::create();
    ASSERT_TRUE(s.is_ok());
    stream = std::move(s.value());
  }
  cuda::Stream stream;
};

// --- tiled histograms ---------------------------------------------------------------------------

struct TileCase {
  int width, height, bytes, pad, offset;  // pad: samples beyond a row; offset: bytes that misalign the base
  hist::TileGrid grid;
  int max_blocks;
  int max_pass_steps = 0;  // > 0: short passes, so bounded counters flush (where a kernel honours it)
};

std::vector<TileCase> tile_cases() {
  std::vector<TileCase> c;
  for (int bytes : {1, 2}) {
    c.push_back({1, 1, bytes, 0, 0, {1, 1}, 0});
    c.push_back({31, 17, bytes, 3, bytes, {3, 5}, 0});
    c.push_back({31, 17, bytes, 0, 0, {31, 17}, 0});  // one sample wide tiles
    c.push_back({1920, 1080, bytes, 0, 0, {8, 8}, 0});
    c.push_back({1921, 1081, bytes, 16, 2 * bytes, {8, 8}, 0});
    c.push_back({854, 480, bytes, 10, 0, {7, 9}, 0});   // unaligned tile columns
    c.push_back({3840, 2160, bytes, 0, 0, {32, 32}, 0});
    c.push_back({1920, 1080, bytes, 0, 0, {1, 1}, 1});  // one block a tile: the 16-bit counters' passes
    c.push_back({1920, 1080, bytes, 0, 0, {2, 2}, 3});
    c.push_back({1920, 1080, bytes, 0, 0, {2, 2}, 4, 4});             // a block a tile, ~30 passes
    c.push_back({1921, 1081, bytes, 16, 2 * bytes, {3, 2}, 12, 4});  // two blocks a tile, ~10 passes
  }
  return c;
}

class GpuTiles : public StreamFixture {};

TEST_F(GpuTiles, EveryTiledKernelMatchesCpuReferencePerTile) {
  REQUIRE_GPU();
  int kernels = 0;
  for (const auto& e : hist::registry()) {
    if (e.info.backend != Backend::gpu || !e.info.tiles) continue;
    ++kernels;
    for (const TileCase& c : tile_cases()) {
      for (int bins : {256, 1024}) {
        if (c.bytes == 1 && bins != 256) continue;
        if (!e.info.supports(c.bytes, bins)) continue;
        const size_t pitch = static_cast<size_t>(c.width + c.pad) * c.bytes;
        std::vector<uint8_t> host(c.offset + pitch * c.height + 32);
        for (int y = 0; y < c.height; ++y)
          for (int x = 0; x < c.width; ++x) {
            const uint32_t v = synth::hash_xy(x, y, 11) % (x < c.width / 3 ? 40u : 0xFFFFu);  // a crowded third
            uint8_t* p = host.data() + c.offset + y * pitch + x * c.bytes;
            if (c.bytes == 1) *p = static_cast<uint8_t>(v);
            else *reinterpret_cast<uint16_t*>(p) = static_cast<uint16_t>((v & 31) == 1 ? 1024 + v % 100 : v % 1024);
          }
        PlaneRef p;
        p.data = host.data() + c.offset;
        p.width = c.width;
        p.height = c.height;
        p.pitch = pitch;
        p.bytes_per_sample = c.bytes;
        p.bit_depth = c.bytes == 1 ? 8 : 10;
        const size_t n = static_cast<size_t>(c.grid.count()) * bins;
        auto ref = hist::create_kernel("cpu_reference");
        std::vector<uint32_t> want(n);
        ASSERT_OK(hist::compute_tiles(**ref, p, c.grid, {want.data(), bins, MemoryKind::host}));
        cuda::Buffer dplane = upload(host, stream.get());
        PlaneRef d = p;
        d.data = static_cast<uint8_t*>(dplane.data()) + c.offset;
        d.memory = MemoryKind::device;
        auto dcounts = cuda::Buffer::allocate(MemoryKind::device, n * 4);
        ASSERT_TRUE(dcounts.is_ok());
        ASSERT_OK(HISTEQ_CUDA_STATUS(cudaMemsetAsync(dcounts->data(), 0xA5, n * 4, stream.get())));
        auto k = hist::create_kernel(e.info.name, {c.max_blocks, c.max_pass_steps});
        ASSERT_TRUE(k.is_ok());
        ASSERT_OK(hist::compute_tiles(**k, d, c.grid, {static_cast<uint32_t*>(dcounts->data()), bins, MemoryKind::device}, stream.get()));
        const auto got = download<uint32_t>(*dcounts, n, stream.get());
        ASSERT_EQ(got, want) << e.info.name << " " << c.width << "x" << c.height << " " << 8 * c.bytes << "-bit " << bins
                             << " bins, tiles " << c.grid.cols << "x" << c.grid.rows << ", max_blocks " << c.max_blocks
                             << ", max_pass_steps " << c.max_pass_steps;
      }
    }
  }
  EXPECT_GE(kernels, 5) << "method2's family and block_atomic (and its alias)";
  auto cub = hist::create_kernel("cub");
  ASSERT_TRUE(cub.is_ok());
  EXPECT_FALSE((*cub)->info().tiles);
}

// --- the functions of the controls ------------------------------------------------------------------

std::vector<std::vector<uint32_t>> histograms(int bins, int count, uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<std::vector<uint32_t>> hs;
  for (int t = 0; t < count; ++t) {
    std::vector<uint32_t> h(bins, 0);
    const int used = t % 5 == 0 ? 1 : t % 5 == 1 ? 2 : t % 5 == 2 ? bins / 7 : bins;
    for (int k = 0; k < used; ++k) h[rng() % bins] += 1 + rng() % (t % 2 ? 60 : 90000);
    if (t % 7 == 6) std::fill(h.begin(), h.end(), 0u);  // an empty tile
    hs.push_back(h);
  }
  return hs;
}

class GpuQualityFunctions : public StreamFixture {};

// The levels of a test: limited, full and textbook at the depth of `bins` (lut.h).
std::vector<eq::Levels> all_levels(int bins) {
  const int depth = hist::bins_log2(bins);
  return {eq::nominal_levels(depth, false, false), eq::nominal_levels(depth, true, false), eq::nominal_levels(depth, false, true)};
}

// Histograms the shadow floor and the black rule act on: bright pictures whose dark half
// is sparse (from black, from above black, with samples below black), letterbox bars at black
// beside a dim picture, and a dark picture (no floor needed).
std::vector<std::vector<uint32_t>> shadow_histograms(int bins, uint32_t seed) {
  std::mt19937 rng(seed);
  const int s = bins / 256;
  std::vector<std::vector<uint32_t>> hs;
  for (int t = 0; t < 24; ++t) {
    std::vector<uint32_t> h(bins, 0);
    const int start = (t % 4 == 0 ? 0 : t % 4 == 1 ? 16 : t % 4 == 2 ? 30 : 60) * s;
    for (int v = start; v < bins; ++v) {
      const bool bright = v >= (100 + 10 * (t % 5)) * s;
      h[v] = bright ? 500 + rng() % (t < 12 ? 2000 : 200000) : rng() % (t % 3 == 0 ? 3 : 60);
    }
    if (t % 6 == 5) {  // bars at black beside a dim picture
      std::fill(h.begin(), h.end(), 0u);
      h[16 * s] = 40000 + rng() % 9000;
      for (int v = 17 * s; v < 50 * s; ++v) h[v] = rng() % 300;
    }
    hs.push_back(h);
  }
  return hs;
}

// The shadow floor (its search: a block reduction a step) and black at black in the tile LUTs give
// the CPU's LUTs on the histograms they act on, at every depth, range and weight.
// The global LUT of each histogram, then all of them as tiles with the mean LUT: the GPU's against
// the CPU's.
void expect_luts_match_cpu(const std::vector<std::vector<uint32_t>>& hs, int bins, uint32_t w, uint32_t clip, const eq::Levels& lv,
                           cudaStream_t s) {
  for (const auto& h : hs) {
    std::vector<uint16_t> cpu(bins);
    ASSERT_OK(eq::build_lut_clipped(h.data(), bins, w, clip, lv, cpu.data()));
    cuda::Buffer dh = upload(h, s);
    auto dl = cuda::Buffer::allocate(MemoryKind::device, bins * 2);
    ASSERT_OK(eq::build_lut_clipped_gpu(static_cast<uint32_t*>(dh.data()), bins, w, clip, lv, static_cast<uint16_t*>(dl->data()), s));
    ASSERT_EQ(download<uint16_t>(*dl, bins, s), cpu) << "bins " << bins << " clip " << clip << " weight " << w << " levels " << lv.lo
                                                   << ".." << lv.hi;
  }
  std::vector<uint32_t> all;
  for (const auto& h : hs) all.insert(all.end(), h.begin(), h.end());
  const int tiles = static_cast<int>(hs.size());
  std::vector<uint16_t> luts(all.size()), mean(bins);
  ASSERT_OK(eq::build_tile_luts(all.data(), tiles, bins, w, clip, lv, luts.data(), mean.data()));
  cuda::Buffer da = upload(all, s);
  auto dl = cuda::Buffer::allocate(MemoryKind::device, all.size() * 2);
  auto dm = cuda::Buffer::allocate(MemoryKind::device, bins * 2);
  ASSERT_OK(eq::build_tile_luts_gpu(static_cast<uint32_t*>(da.data()), tiles, bins, w, clip, lv, static_cast<uint16_t*>(dl->data()),
                                    static_cast<uint16_t*>(dm->data()), s));
  ASSERT_EQ(download<uint16_t>(*dl, all.size(), s), luts) << "tile LUTs, bins " << bins << " clip " << clip << " levels " << lv.lo
                                                          << ".." << lv.hi;
  ASSERT_EQ(download<uint16_t>(*dm, bins, s), mean);
}

TEST_F(GpuQualityFunctions, ShadowFloorAndBlackMatchCpu) {
  REQUIRE_GPU();
  for (int bins : {256, 1024}) {
    const auto hs = shadow_histograms(bins, static_cast<uint32_t>(bins) + 5);
    for (uint32_t clip : {0u, 282u, 384u})
      for (const eq::Levels& lv : all_levels(bins))
        for (uint32_t w : {eq::kWeightOne, eq::kWeightOne / 3}) ASSERT_NO_FATAL_FAILURE(expect_luts_match_cpu(hs, bins, w, clip, lv, stream.get()));
  }
}

TEST_F(GpuQualityFunctions, ClippedAndTileLutsMatchCpu) {
  REQUIRE_GPU();
  const cudaStream_t s = stream.get();
  for (int bins : {256, 512, 1024}) {
    const auto hs = histograms(bins, 35, static_cast<uint32_t>(bins));
    for (uint32_t clip : {0u, 256u, 300u, 512u, 1024u, 16384u})
    for (const eq::Levels& lv : all_levels(bins)) {
      for (uint32_t w : {eq::kWeightOne, eq::kWeightOne / 3}) {
        ASSERT_NO_FATAL_FAILURE(expect_luts_match_cpu(hs, bins, w, clip, lv, s));
        std::vector<uint32_t> all;
        for (const auto& h : hs) all.insert(all.end(), h.begin(), h.end());
        const int tiles = static_cast<int>(hs.size());
        cuda::Buffer da = upload(all, s);
        std::vector<uint32_t> sum(bins);
        ASSERT_OK(eq::sum_tiles(all.data(), tiles, bins, sum.data()));
        auto ds = cuda::Buffer::allocate(MemoryKind::device, bins * 4);
        ASSERT_OK(eq::sum_tiles_gpu(static_cast<uint32_t*>(da.data()), tiles, bins, static_cast<uint32_t*>(ds->data()), s));
        ASSERT_EQ(download<uint32_t>(*ds, bins, s), sum);
      }
    }
  }
}

// Tiles' histograms summing to h: its samples dealt over `count` tiles unevenly (tile t takes up to
// 2 t + 2 of a bin's samples, the last tile the rest).
std::vector<uint32_t> dealt_over_tiles(const std::vector<uint32_t>& h, int count, std::mt19937& rng) {
  const size_t bins = h.size();
  std::vector<uint32_t> tiles(static_cast<size_t>(count) * bins, 0);
  for (size_t v = 0; v < bins; ++v) {
    uint32_t left = h[v];
    for (int t = 0; t < count && left > 0; ++t) {
      const uint32_t take = t == count - 1 ? left : std::min<uint32_t>(left, static_cast<uint32_t>(rng() % (2 * (t + 1) + 1)));
      tiles[static_cast<size_t>(t) * bins + v] = take;
      left -= take;
    }
  }
  return tiles;
}

// Frame f of the temporal sequence's histogram: a shot that drifts, fades towards black from
// frame 10, a cut at 20, a bright object at 30..34.
std::vector<uint32_t> sequence_frame(int bins, int f, std::mt19937& rng) {
  const int k = bins / 256;
  std::vector<uint32_t> h(bins, 0);
  const int lo = (f < 20 ? 30 : 120) * k, span = (f < 20 ? 60 : 90) * k;
  const double fade = f >= 10 && f < 20 ? 1.0 - 0.08 * (f - 9) : 1.0;
  for (int i = 0; i < 5000; ++i) {
    const int v = 16 * k + static_cast<int>(fade * (lo - 16 * k + static_cast<int>(rng() % span) + f));
    h[std::min(v, bins - 1)] += 1 + rng() % 3;
  }
  if (f >= 30 && f < 35) h[bins - 10] += 4000;
  return h;
}

// Frame f's buffers of a sequence test: the state, and the normalized histograms and the scalars
// double-buffered (frame f writes half f % 2, reads the other).
void point_at(eq::TemporalArgs& a, int f, int bins, int32_t* state, uint32_t* norm, int32_t* scalars) {
  a.state = state;
  a.prev_hist = norm + ((f + 1) % 2) * bins;
  a.next_hist = norm + (f % 2) * bins;
  a.prev_scalars = scalars + ((f + 1) % 2) * eq::kTemporalScalars;
  a.next_scalars = scalars + (f % 2) * eq::kTemporalScalars;
}

// Frame f of a sequence test on the host: restarts at 0 and 25, a moving time constant.
eq::TemporalArgs sequence_args(int f, int bins, const eq::Levels& lv, int32_t* state, uint32_t* norm, int32_t* scalars) {
  eq::TemporalArgs a;
  a.bins = bins;
  point_at(a, f, bins, state, norm, scalars);
  a.restart = f == 0 || f == 25;
  a.levels = lv;
  a.cut_q16 = 0.3 * 65536;
  a.alpha_q16 = 4000 + f * 100;
  return a;
}

// The temporal filter over 40 frames of a drifting, fading, cut shot with LUT targets that move,
// CPU against GPU: every LUT, state, scalar and normalized bin each frame. cluster: clahe's
// measure over a thread-block cluster where the device has them (else, and when false, one
// block). 1,024 tiles: the cluster's shares too large to stage, measured from global memory.
void temporal_sequence_matches(cudaStream_t s, bool cluster) {
  for (int bins : {256, 1024})
  for (size_t li = 0; li < all_levels(bins).size(); ++li) {
    const eq::Levels lv = all_levels(bins)[li];
    for (int count : {1, 7, 8, 64, 1024}) {
      if (count == 1024 && (bins != 256 || li != 0)) continue;  // one case: 40 frames of 262,144 entries
      const bool extra = count > 1;
      const bool weighted = count >= 8;  // clahe's brightness measured on every tile's entries
      const int luts = count + (extra ? 1 : 0);
      std::vector<int32_t> state(static_cast<size_t>(luts) * bins, 0);
      std::vector<uint32_t> cdf(2 * bins, 0);
      std::vector<int32_t> scalars(2 * eq::kTemporalScalars, 0);
      auto dstate = cuda::Buffer::allocate(MemoryKind::device, state.size() * 4);
      auto dhist = cuda::Buffer::allocate(MemoryKind::device, cdf.size() * 4);
      auto dscal = cuda::Buffer::allocate(MemoryKind::device, scalars.size() * 4);
      std::mt19937 rng(5);
      for (int f = 0; f < 40; ++f) {
        const std::vector<uint32_t> h = sequence_frame(bins, f, rng);
        const std::vector<uint32_t> tiles_h = dealt_over_tiles(h, count, rng);
        std::vector<uint16_t> target(static_cast<size_t>(luts) * bins);
        for (auto& t : target) t = static_cast<uint16_t>(rng() % bins);
        std::vector<uint16_t> cpu = target;
        eq::TemporalArgs a = sequence_args(f, bins, lv, state.data(), cdf.data(), scalars.data());
        a.counts = h.data();
        a.luts = cpu.data();
        a.count = count;
        a.extra = extra ? cpu.data() + static_cast<size_t>(count) * bins : nullptr;
        a.tile_counts = weighted ? tiles_h.data() : nullptr;
        ASSERT_OK(eq::temporal_update(a));
        cuda::Buffer dcounts = upload(h, s);
        cuda::Buffer dluts = upload(target, s);
        cuda::Buffer dtiles = upload(tiles_h, s);
        eq::TemporalArgs g = a;
        g.tile_counts = weighted ? static_cast<uint32_t*>(dtiles.data()) : nullptr;
        g.counts = static_cast<uint32_t*>(dcounts.data());
        g.luts = static_cast<uint16_t*>(dluts.data());
        g.extra = extra ? g.luts + static_cast<size_t>(count) * bins : nullptr;
        point_at(g, f, bins, static_cast<int32_t*>(dstate->data()), static_cast<uint32_t*>(dhist->data()),
                 static_cast<int32_t*>(dscal->data()));
        ASSERT_OK(eq::temporal_update_gpu(g, s, cluster));
        ASSERT_EQ(download<uint16_t>(dluts, cpu.size(), s), cpu) << "bins " << bins << " LUTs " << luts << " frame " << f << " levels "
                                                                  << lv.lo << ".." << lv.hi;
        ASSERT_EQ(download<int32_t>(*dstate, state.size(), s), state) << "frame " << f;
        ASSERT_EQ(download<int32_t>(*dscal, scalars.size(), s), scalars) << "frame " << f;
        ASSERT_EQ(download<uint32_t>(*dhist, cdf.size(), s), cdf) << "frame " << f;
      }
    }
  }
}

TEST_F(GpuQualityFunctions, TemporalFilterMatchesCpuOverASequence) {
  REQUIRE_GPU();
  temporal_sequence_matches(stream.get(), true);
}

TEST_F(GpuQualityFunctions, TemporalFilterInOneBlockMatchesCpuOverASequence) {
  REQUIRE_GPU();
  temporal_sequence_matches(stream.get(), false);
}

// A plane of w x h samples whose histogram is h (shuffled), in a pitch of its own.
template <class T>
std::vector<T> plane_of(const std::vector<uint32_t>& hist, size_t samples, std::mt19937& rng) {
  std::vector<T> v;
  v.reserve(samples);
  for (size_t b = 0; b < hist.size(); ++b) v.insert(v.end(), hist[b], static_cast<T>(b));
  v.resize(samples, static_cast<T>(hist.size() / 2));
  std::shuffle(v.begin(), v.end(), rng);
  return v;
}

// Global mode's fold (temporal_fold_gpu: the histogram, the clipped LUT and the filter in the
// fused count's last block) against the CPU's steps over the drifting, fading, cut sequence: the
// histogram, the LUT, every state, scalar and normalized bin each frame; 7-, 8- and 9-bit planes,
// with and without the clip, in every level set; odd sizes and a padded pitch.
template <class T>
void fold_sequence_matches(int depth, cudaStream_t s) {
  const int bins = 1 << depth, w = 1283, h = 517, pitch_samples = 1296;
  auto fe = eq::FusedEqualizer::create();
  ASSERT_OK(fe.status());
  for (const eq::Levels& lv : all_levels(bins))
    for (uint32_t clip : {0u, 512u}) {
      std::vector<int32_t> state(bins, 0), scalars(2 * eq::kTemporalScalars, 0);
      std::vector<uint32_t> norm(2 * bins, 0);
      cuda::Buffer dstate = upload(state, s), dnorm = upload(norm, s), dscal = upload(scalars, s);  // zeros, as the CPU's
      auto dcounts = cuda::Buffer::allocate(MemoryKind::device, bins * 4);
      auto dlut = cuda::Buffer::allocate(MemoryKind::device, bins * 2);
      std::mt19937 rng(11);
      for (int f = 0; f < 40; ++f) {
        std::vector<uint32_t> hist = sequence_frame(256, f, rng);  // 8-bit levels, spread over the depth's
        std::vector<uint32_t> want_h(bins, 0);
        for (int v = 0; v < 256; ++v) want_h[(v * bins) / 256] += hist[v];
        const std::vector<T> samples = plane_of<T>(want_h, static_cast<size_t>(w) * h, rng);
        std::fill(want_h.begin(), want_h.end(), 0u);
        for (T v : samples) ++want_h[v];
        std::vector<T> padded(static_cast<size_t>(pitch_samples) * h, static_cast<T>(bins - 1));
        for (int y = 0; y < h; ++y) std::copy_n(samples.begin() + static_cast<size_t>(y) * w, w, padded.begin() + static_cast<size_t>(y) * pitch_samples);
        std::vector<uint16_t> lut(bins);
        ASSERT_OK(eq::build_lut_clipped(want_h.data(), bins, eq::kWeightOne * 3 / 4, clip, lv, lut.data()));
        eq::TemporalArgs a = sequence_args(f, bins, lv, state.data(), norm.data(), scalars.data());
        a.counts = want_h.data();
        a.luts = lut.data();
        ASSERT_OK(eq::temporal_update(a));
        cuda::Buffer dplane = upload(padded, s);
        eq::TemporalArgs g = a;
        g.counts = nullptr;  // not read
        g.luts = static_cast<uint16_t*>(dlut->data());
        point_at(g, f, bins, static_cast<int32_t*>(dstate.data()), static_cast<uint32_t*>(dnorm.data()),
                 static_cast<int32_t*>(dscal.data()));
        const PlaneRef plane = PlaneView<T>{static_cast<T*>(dplane.data()), w, h, static_cast<size_t>(pitch_samples) * sizeof(T),
                                            depth, MemoryKind::device};
        ASSERT_OK(eq::temporal_fold_gpu(*fe, plane, eq::kWeightOne * 3 / 4, clip, g, static_cast<uint32_t*>(dcounts->data()), s));
        const std::string at = "depth " + std::to_string(depth) + " clip " + std::to_string(clip) + " levels " +
                               std::to_string(lv.lo) + ".." + std::to_string(lv.hi) + " frame " + std::to_string(f);
        ASSERT_EQ(download<uint32_t>(*dcounts, bins, s), want_h) << at;
        ASSERT_EQ(download<uint16_t>(*dlut, bins, s), lut) << at;
        ASSERT_EQ(download<int32_t>(dstate, state.size(), s), state) << at;
        ASSERT_EQ(download<int32_t>(dscal, scalars.size(), s), scalars) << at;
        ASSERT_EQ(download<uint32_t>(dnorm, norm.size(), s), norm) << at;
      }
    }
}

TEST_F(GpuQualityFunctions, TheFoldedTemporalFilterMatchesCpuStepsOverASequence) {
  REQUIRE_GPU();
  fold_sequence_matches<uint8_t>(8, stream.get());
  fold_sequence_matches<uint16_t>(7, stream.get());
  fold_sequence_matches<uint16_t>(9, stream.get());
}

// What the fold refuses, with a message: tiles, more bins than the block's threads, a depth that
// does not match the bins.
TEST_F(GpuQualityFunctions, TheFoldRefusesWhatItCannotTake) {
  REQUIRE_GPU();
  auto fe = eq::FusedEqualizer::create();
  ASSERT_OK(fe.status());
  auto buf = cuda::Buffer::allocate(MemoryKind::device, 1 << 16);
  ASSERT_OK(buf.status());
  int32_t* p32 = static_cast<int32_t*>(buf->data());
  eq::TemporalArgs a;
  a.bins = 256;
  a.luts = reinterpret_cast<uint16_t*>(p32 + 4096);
  a.state = p32;
  a.next_hist = reinterpret_cast<uint32_t*>(p32 + 2048);
  a.next_scalars = p32 + 3072;
  a.levels = eq::nominal_levels(8, false, false);
  uint32_t* counts = reinterpret_cast<uint32_t*>(p32 + 6144);
  const PlaneRef plane8 = PlaneView<uint8_t>{reinterpret_cast<uint8_t*>(p32 + 8192), 64, 16, 64, 8, MemoryKind::device};
  ASSERT_OK(eq::temporal_fold_gpu(*fe, plane8, eq::kWeightOne, 0, a, counts, stream.get()));
  eq::TemporalArgs bad = a;
  bad.tile_counts = counts;
  EXPECT_FALSE(eq::temporal_fold_gpu(*fe, plane8, eq::kWeightOne, 0, bad, counts, stream.get()).is_ok());
  bad = a;
  bad.bins = 1024;
  bad.levels = eq::nominal_levels(10, false, false);
  const PlaneRef plane10 = PlaneView<uint16_t>{reinterpret_cast<uint16_t*>(p32 + 8192), 32, 16, 64, 10, MemoryKind::device};
  const Status too_many = eq::temporal_fold_gpu(*fe, plane10, eq::kWeightOne, 0, bad, counts, stream.get());
  EXPECT_EQ(too_many.code(), Code::unsupported) << too_many.to_string();
  const PlaneRef plane9 = PlaneView<uint16_t>{reinterpret_cast<uint16_t*>(p32 + 8192), 32, 16, 64, 9, MemoryKind::device};
  EXPECT_FALSE(eq::temporal_fold_gpu(*fe, plane9, eq::kWeightOne, 0, a, counts, stream.get()).is_ok()) << "9 bits, 256 bins";
  ASSERT_OK(HISTEQ_CUDA_STATUS(cudaStreamSynchronize(stream.get())));
}

// --- the fold's colour pass ----------------------------------------------------------------------

// A layout of the folded colour pass's test: the luma's size and pitch, the chroma's subsampling,
// NV12 or planar, the chroma's pitch in bytes.
struct FoldColourCase {
  int w, h, pitch;
  int shift_x, shift_y;
  bool nv12;
  int chroma_pitch;
};

// The frame's planes on the host: luma from the sequence's histograms, chroma random; padding 0xA5.
struct HostPlanes {
  std::vector<uint8_t> luma, u, v;
  int cw, ch;
};
HostPlanes host_planes(const FoldColourCase& k, int f, std::mt19937& rng) {
  HostPlanes p;
  p.cw = (k.w + (1 << k.shift_x) - 1) >> k.shift_x;
  p.ch = (k.h + (1 << k.shift_y) - 1) >> k.shift_y;
  const std::vector<uint8_t> samples = plane_of<uint8_t>(sequence_frame(256, f, rng), static_cast<size_t>(k.w) * k.h, rng);
  p.luma.assign(static_cast<size_t>(k.pitch) * k.h, 0xA5);
  for (int y = 0; y < k.h; ++y) std::copy_n(samples.begin() + static_cast<size_t>(y) * k.w, k.w, p.luma.begin() + static_cast<size_t>(y) * k.pitch);
  const int row = k.nv12 ? 2 * p.cw : p.cw;
  for (std::vector<uint8_t>* c : {&p.u, &p.v}) {
    c->assign(static_cast<size_t>(k.chroma_pitch) * p.ch, 0xA5);
    for (int y = 0; y < p.ch; ++y)
      for (int x = 0; x < row; ++x) (*c)[static_cast<size_t>(y) * k.chroma_pitch + x] = static_cast<uint8_t>(96 + rng() % 64);
  }
  return p;
}

eq::ChromaPlanes chroma_of(const FoldColourCase& k, const HostPlanes& p, uint8_t* u, uint8_t* v, MemoryKind mem) {
  eq::ChromaPlanes c;
  c.interleaved = k.nv12;
  c.planes[0] = PlaneView<uint8_t>{u, k.nv12 ? 2 * p.cw : p.cw, p.ch, static_cast<size_t>(k.chroma_pitch), 8, mem};
  if (!k.nv12) c.planes[1] = PlaneView<uint8_t>{v, p.cw, p.ch, static_cast<size_t>(k.chroma_pitch), 8, mem};
  c.shift_x = k.shift_x;
  c.shift_y = k.shift_y;
  c.black = 16;
  c.lo = 16;
  c.hi = 240;
  return c;
}

// Eight frames of the sequence through the fold with its colour pass (temporal_fold_gpu,
// FoldApply::colour) against the CPU's steps (the histogram, build_lut_clipped, temporal_update,
// apply_colour): every byte of the planes, padding included, the LUT and the states.
void fold_colour_matches(const FoldColourCase& k, cudaStream_t s) {
  const int bins = 256;
  const eq::Levels lv = eq::nominal_levels(8, false, false);
  auto fe = eq::FusedEqualizer::create();
  ASSERT_OK(fe.status());
  std::vector<int32_t> state(bins, 0), scalars(2 * eq::kTemporalScalars, 0);
  std::vector<uint32_t> norm(2 * bins, 0);
  cuda::Buffer dstate = upload(state, s), dnorm = upload(norm, s), dscal = upload(scalars, s);
  auto dlut = cuda::Buffer::allocate(MemoryKind::device, bins * 2);
  std::mt19937 rng(21);
  for (int f = 0; f < 8; ++f) {
    HostPlanes p = host_planes(k, f, rng);
    cuda::Buffer dy = upload(p.luma, s), du = upload(p.u, s), dv = upload(p.v, s);
    std::vector<uint32_t> h(bins, 0);
    for (int y = 0; y < k.h; ++y)
      for (int x = 0; x < k.w; ++x) ++h[p.luma[static_cast<size_t>(y) * k.pitch + x]];
    std::vector<uint16_t> lut(bins);
    ASSERT_OK(eq::build_lut_clipped(h.data(), bins, eq::kWeightOne, 512, lv, lut.data()));
    eq::TemporalArgs a = sequence_args(f, bins, lv, state.data(), norm.data(), scalars.data());
    a.counts = h.data();
    a.luts = lut.data();
    ASSERT_OK(eq::temporal_update(a));
    const PlaneRef luma = PlaneView<uint8_t>{p.luma.data(), k.w, k.h, static_cast<size_t>(k.pitch), 8, MemoryKind::host};
    ASSERT_OK(eq::apply_colour(luma, chroma_of(k, p, p.u.data(), p.v.data(), MemoryKind::host), lut.data(), nullptr, bins));
    eq::TemporalArgs g = a;
    g.counts = nullptr;
    g.luts = static_cast<uint16_t*>(dlut->data());
    point_at(g, f, bins, static_cast<int32_t*>(dstate.data()), static_cast<uint32_t*>(dnorm.data()), static_cast<int32_t*>(dscal.data()));
    const PlaneRef dluma = PlaneView<uint8_t>{static_cast<uint8_t*>(dy.data()), k.w, k.h, static_cast<size_t>(k.pitch), 8, MemoryKind::device};
    const eq::ChromaPlanes dc = chroma_of(k, p, static_cast<uint8_t*>(du.data()), static_cast<uint8_t*>(dv.data()), MemoryKind::device);
    ASSERT_OK(eq::temporal_fold_gpu(*fe, dluma, eq::kWeightOne, 512, g, nullptr, s, eq::FoldApply::colour, &dc));
    const std::string at = std::to_string(k.w) + "x" + std::to_string(k.h) + " pitch " + std::to_string(k.pitch) + " shifts " +
                           std::to_string(k.shift_x) + std::to_string(k.shift_y) + (k.nv12 ? " nv12" : "") + " frame " + std::to_string(f);
    ASSERT_EQ(download<uint16_t>(*dlut, bins, s), lut) << at;
    ASSERT_EQ(download<int32_t>(dstate, state.size(), s), state) << at;
    ASSERT_TRUE(download<uint8_t>(dy, p.luma.size(), s) == p.luma) << at << ": luma";
    ASSERT_TRUE(download<uint8_t>(du, p.u.size(), s) == p.u) << at << ": U";
    ASSERT_TRUE(download<uint8_t>(dv, p.v.size(), s) == p.v) << at << ": V";
  }
}

// The 16-byte units (8-bit 4:2:0, aligned rows) with the columns past the last whole unit and an
// odd last luma row, planar and NV12; and colour_kernel after the fold (4:2:2, 4:4:4, rows that
// are not aligned, frames smaller than one unit).
TEST_F(GpuQualityFunctions, TheFoldedColourPassMatchesCpuSteps) {
  REQUIRE_GPU();
  const FoldColourCase cases[] = {
      {1283, 517, 1296, 1, 1, false, 656}, {1280, 720, 1280, 1, 1, false, 640}, {1283, 517, 1296, 1, 1, true, 1296},
      {33, 7, 48, 1, 1, true, 48},         {1283, 517, 1283, 1, 1, false, 642}, {641, 359, 656, 1, 0, false, 336},
      {641, 359, 656, 0, 0, true, 1296},   {1282, 518, 1296, 1, 1, false, 644}, {9, 5, 16, 1, 1, true, 16},
      {16, 1, 16, 1, 1, false, 8}};
  for (const FoldColourCase& k : cases) {
    fold_colour_matches(k, stream.get());
    if (HasFatalFailure()) return;
  }
}

// --- the brightness hold's search --------------------------------------------------------------

// One frame of global mode's temporal filter from scalars that put the brightness hold in each of
// its cases: the decayed offset kept, a search down or up, and no offset that reaches the bound
// (the range's ends). The previous normalized bins are this frame's, so it is not a cut.
struct HoldTrial {
  std::vector<uint32_t> h, prev_norm;
  std::vector<int32_t> state;
  std::vector<uint16_t> target;
  std::vector<int32_t> scalars;  // previous, then next
  uint32_t alpha = 0;
  eq::Levels levels;
};

HoldTrial hold_trial(int bins, int i, std::mt19937& rng) {
  HoldTrial t;
  const int k = bins / 256 > 0 ? bins / 256 : 1, shape = i % 4;
  t.h.assign(bins, 0);
  for (int n = 0; n < 3000; ++n) {
    const int v = shape == 0 ? static_cast<int>(rng() % bins) : shape == 1 ? static_cast<int>(rng() % (bins / 4 + 1))
                  : shape == 2 ? bins - 1 - static_cast<int>(rng() % (bins / 4 + 1)) : 40 * k % bins;
    t.h[v] += 1 + rng() % 4;
  }
  const uint64_t total = std::accumulate(t.h.begin(), t.h.end(), uint64_t{0});
  for (uint32_t x : t.h) t.prev_norm.push_back(eq::tone::normalized_bin(x, total));
  t.levels = all_levels(bins)[(i / 4) % 3];
  for (int v = 0; v < bins; ++v) t.state.push_back(static_cast<int32_t>(rng() % (static_cast<uint32_t>(bins) << eq::tone::kStateBits)));
  for (int v = 0; v < bins; ++v) t.target.push_back(static_cast<uint16_t>(rng() % bins));
  const int32_t most = eq::tone::max_offset(bins), top = (bins - 1) << eq::tone::kStateBits;
  const int32_t any = static_cast<int32_t>(rng() % (2 * static_cast<uint32_t>(most) + 1)) - most;
  const int32_t c[] = {-most, most, 0, any}, u[] = {0, top, static_cast<int32_t>(rng() % static_cast<uint32_t>(top))};
  t.scalars.assign(2 * eq::kTemporalScalars, 0);
  t.scalars[0] = c[(i / 12) % 4];
  t.scalars[1] = u[(i / 48) % 3];
  t.scalars[2] = static_cast<int32_t>(rng() % static_cast<uint32_t>(top));  // the previous mean: d = |m - it|
  t.scalars[4] = 100;
  t.alpha = i % 5 == 0 ? 0 : rng() % 65537;
  return t;
}

void expect_ok(const Status& s) { EXPECT_TRUE(s.is_ok()) << s.to_string(); }

eq::TemporalArgs hold_args(HoldTrial& t, int bins, int32_t* state, uint32_t* norm, int32_t* scalars) {
  eq::TemporalArgs a;
  a.bins = bins;
  a.state = state;
  a.prev_hist = norm;
  a.next_hist = norm + bins;
  a.prev_scalars = scalars;
  a.next_scalars = scalars + eq::kTemporalScalars;
  a.restart = false;
  a.levels = t.levels;
  a.cut_q16 = 65536;
  a.alpha_q16 = t.alpha;
  return a;
}

// Which case the CPU's offset is: kept, the range's low or high end, or found by a search.
int hold_case(const HoldTrial& t, int bins) {
  const int32_t most = eq::tone::max_offset(bins), c = t.scalars[eq::kTemporalScalars];
  if (c == eq::tone::decayed_offset(t.scalars[0], t.alpha, most)) return 0;
  return c == -most ? 1 : c == most ? 2 : 3;
}

// The CPU's frame (t's state, scalars and next bins updated, `lut` from t.target) against the GPU's
// temporal_update_gpu, or the fold's (8-bit: the trial's histogram as a plane, the clipped LUT built
// first); returns the CPU's case.
int hold_frame_matches(HoldTrial& t, int bins, bool fold, int i, std::mt19937& rng, eq::FusedEqualizer* fe, cudaStream_t s) {
  std::vector<uint8_t> samples;
  if (fold) {  // the plane's histogram (the rest of the plane at bins / 2), and its bins as the previous frame's
    samples = plane_of<uint8_t>(t.h, 131 * 97, rng);
    std::fill(t.h.begin(), t.h.end(), 0u);
    for (uint8_t v : samples) ++t.h[v];
    for (int v = 0; v < bins; ++v) t.prev_norm[v] = eq::tone::normalized_bin(t.h[v], samples.size());
  }
  std::vector<uint32_t> norm = t.prev_norm;
  norm.resize(2 * bins, 0);
  cuda::Buffer dstate = upload(t.state, s), dnorm = upload(norm, s), dscal = upload(t.scalars, s), dlut = upload(t.target, s);
  cuda::Buffer dcounts = upload(t.h, s), dplane = upload(samples, s);
  std::vector<uint16_t> lut = t.target;
  const uint32_t clip = i % 2 == 0 ? 0u : 512u;
  if (fold) expect_ok(eq::build_lut_clipped(t.h.data(), bins, eq::kWeightOne, clip, t.levels, lut.data()));
  eq::TemporalArgs a = hold_args(t, bins, t.state.data(), norm.data(), t.scalars.data());
  a.counts = t.h.data();
  a.luts = lut.data();
  expect_ok(eq::temporal_update(a));
  eq::TemporalArgs g = hold_args(t, bins, static_cast<int32_t*>(dstate.data()), static_cast<uint32_t*>(dnorm.data()),
                                 static_cast<int32_t*>(dscal.data()));
  g.counts = static_cast<uint32_t*>(dcounts.data());
  g.luts = static_cast<uint16_t*>(dlut.data());
  if (fold) {
    const PlaneRef plane = PlaneView<uint8_t>{static_cast<uint8_t*>(dplane.data()), 131, 97, 131, 8, MemoryKind::device};
    expect_ok(eq::temporal_fold_gpu(*fe, plane, eq::kWeightOne, clip, g, nullptr, s));
  } else {
    expect_ok(eq::temporal_update_gpu(g, s));
  }
  const std::string at = "bins " + std::to_string(bins) + (fold ? " fold" : "") + " trial " + std::to_string(i);
  EXPECT_EQ(download<int32_t>(dscal, t.scalars.size(), s), t.scalars) << at;
  EXPECT_EQ(download<uint16_t>(dlut, bins, s), lut) << at;
  EXPECT_EQ(download<int32_t>(dstate, t.state.size(), s), t.state) << at;
  EXPECT_EQ(download<uint32_t>(dnorm, norm.size(), s), norm) << at;
  return hold_case(t, bins);
}

// The hold's offset on the GPU (probing offsets a pass: 16 at 256 threads, 32 in the fold's 512, 16
// and 32 in the 1,024-thread block) equals the CPU's (secant steps and buckets) in every case,
// and every case occurs.
TEST_F(GpuQualityFunctions, TheBrightnessHoldFindsTheCpusOffsetInEveryCase) {
  REQUIRE_GPU();
  auto fe = eq::FusedEqualizer::create();
  ASSERT_OK(fe.status());
  for (int bins : {64, 256, 512, 1024})
    for (bool fold : {false, true}) {
      if (fold && bins != 256) continue;
      std::mt19937 rng(static_cast<uint32_t>(bins) + (fold ? 1u : 0u));
      int cases[4] = {0, 0, 0, 0};
      for (int i = 0; i < 192; ++i) {
        HoldTrial t = hold_trial(bins, i, rng);
        ++cases[hold_frame_matches(t, bins, fold, i, rng, &*fe, stream.get())];
        if (HasFailure()) return;
      }
      for (int c = 0; c < 4; ++c) EXPECT_GT(cases[c], 0) << "bins " << bins << (fold ? " fold" : "") << ": no frame of case " << c;
    }
}

struct ApplyShape {
  int width, height, depth, shift_x, shift_y;
  bool nv12;
  int pad;  // samples
};

// Random samples for a plane of n bytes: 8-bit any value; 10-bit mostly within 0..1023, a few
// above (what a decoder may put out).
std::vector<uint8_t> random_samples(size_t n, int bytes, std::mt19937& rng) {
  std::vector<uint8_t> v(n);
  for (size_t i = 0; i < n; i += bytes) {
    const uint32_t r = rng();
    if (bytes == 1) v[i] = static_cast<uint8_t>(r);
    else *reinterpret_cast<uint16_t*>(&v[i]) = static_cast<uint16_t>(r % 97 == 0 ? 1024 + r % 9 : r % 1024);
  }
  return v;
}

PlaneRef plane_ref(void* data, int w, int h, size_t pitch, int depth, MemoryKind m) {
  PlaneRef p;
  p.data = data;
  p.width = w;
  p.height = h;
  p.pitch = pitch;
  p.bytes_per_sample = depth > 8 ? 2 : 1;
  p.bit_depth = depth;
  p.memory = m;
  return p;
}

// One shape's planes (padding included) and one grid's LUTs, on the host and the device.
struct ApplyInputs {
  ApplyShape sh;
  int uvw, ch;
  size_t ypitch, cpitch;
  std::vector<uint8_t> y0, u0, v0;
  const uint16_t* lut;  // host; dlut its device copy
  const uint16_t* dlut;
  eq::TileLuts ht, dt;
  int bins;
};

// The chroma planes of one side, with limited range's bounds (16..240) with tiles and full range's
// with one LUT.
eq::ChromaPlanes chroma_planes(const ApplyInputs& in, int variant, uint8_t* u, uint8_t* v, MemoryKind m) {
  const int depth = in.sh.depth;
  eq::ChromaPlanes c;
  c.interleaved = in.sh.nv12;
  c.shift_x = in.sh.shift_x;
  c.shift_y = in.sh.shift_y;
  c.black = variant == 2 ? 0 : 16u << (depth - 8);
  c.lo = variant == 2 ? 0 : 16u << (depth - 8);
  c.hi = variant == 2 ? (1u << depth) - 1 : 240u << (depth - 8);
  c.limit_q12 = variant == 2 ? 8192 : 6144;
  c.planes[0] = plane_ref(u, in.uvw, in.ch, in.cpitch, depth, m);
  c.planes[1] = plane_ref(v, in.uvw, in.ch, in.cpitch, depth, m);
  return c;
}

// Variant 0: tiles, luma only; 1: colour with tiles; 2: colour with one LUT. The whole buffers,
// padding included, must match: the padding untouched on both sides.
void apply_variant_matches(const ApplyInputs& in, int variant, cudaStream_t s) {
  const ApplyShape& sh = in.sh;
  std::vector<uint8_t> y = in.y0, u = in.u0, v = in.v0;
  cuda::Buffer dyb = upload(y, s), dub = upload(u, s), dvb = upload(v, s);
  const PlaneRef hy = plane_ref(y.data(), sh.width, sh.height, in.ypitch, sh.depth, MemoryKind::host);
  const PlaneRef gy = plane_ref(dyb.data(), sh.width, sh.height, in.ypitch, sh.depth, MemoryKind::device);
  const eq::ChromaPlanes hc = chroma_planes(in, variant, u.data(), v.data(), MemoryKind::host);
  const eq::ChromaPlanes gc = chroma_planes(in, variant, static_cast<uint8_t*>(dub.data()), static_cast<uint8_t*>(dvb.data()), MemoryKind::device);
  if (variant == 0 && sh.depth == 8) {
    ASSERT_OK(eq::apply_tiles(hy.as_writable<uint8_t>(), in.ht, in.bins));
    ASSERT_OK(eq::apply_tiles_gpu(gy.as_writable<uint8_t>(), in.dt, in.bins, s));
  } else if (variant == 0) {
    ASSERT_OK(eq::apply_tiles(hy.as_writable<uint16_t>(), in.ht, in.bins));
    ASSERT_OK(eq::apply_tiles_gpu(gy.as_writable<uint16_t>(), in.dt, in.bins, s));
  } else {
    ASSERT_OK(eq::apply_colour(hy, hc, in.lut, variant == 1 ? &in.ht : nullptr, in.bins));
    ASSERT_OK(eq::apply_colour_gpu(gy, gc, in.dlut, variant == 1 ? &in.dt : nullptr, in.bins, s));
  }
  ASSERT_EQ(download<uint8_t>(dyb, y.size(), s), y) << sh.width << "x" << sh.height << " variant " << variant;
  ASSERT_EQ(download<uint8_t>(dub, u.size(), s), u) << sh.width << "x" << sh.height << " variant " << variant;
  ASSERT_EQ(download<uint8_t>(dvb, v.size(), s), v) << sh.width << "x" << sh.height << " variant " << variant;
  if (variant == 0) {
    EXPECT_EQ(u, in.u0) << "luma-only apply touched chroma";
  }
}

// The textbook clahe's padded picture (OpenCV's BORDER_REFLECT_101): the GPU's is the CPU's, on
// pitched planes, 8- and 16-bit, padding shorter and longer than the picture.
TEST_F(GpuQualityFunctions, PadReflectMatchesCpu) {
  REQUIRE_GPU();
  const cudaStream_t s = stream.get();
  std::mt19937 rng(23);
  for (int bytes : {1, 2}) {
    for (auto [w, h, pw, ph] : {std::tuple{1, 1, 8, 8}, {5, 3, 8, 8}, {1921, 1081, 1928, 1088}, {451, 300, 456, 304}, {2, 9, 32, 16}}) {
      const size_t in_pitch = static_cast<size_t>(w + 5) * bytes, out_pitch = (static_cast<size_t>(pw) * bytes + 15) / 16 * 16;
      const std::vector<uint8_t> in = random_samples(in_pitch * h, bytes, rng);
      PlaneRef a{}, b{};
      a.data = in.data(), a.width = w, a.height = h, a.pitch = in_pitch, a.bytes_per_sample = bytes, a.bit_depth = bytes == 1 ? 8 : 10;
      b = a;
      std::vector<uint8_t> want(out_pitch * ph, 0);
      b.data = want.data(), b.width = pw, b.height = ph, b.pitch = out_pitch;
      ASSERT_OK(eq::pad_reflect(a, b));
      cuda::Buffer din = upload(in, s), dout = upload(std::vector<uint8_t>(out_pitch * ph, 0), s);
      a.data = din.data(), a.memory = MemoryKind::device;
      b.data = dout.data(), b.memory = MemoryKind::device;
      ASSERT_OK(eq::pad_reflect_gpu(a, b, s));
      ASSERT_EQ(download<uint8_t>(dout, want.size(), s), want) << w << "x" << h << " -> " << pw << "x" << ph << ", " << bytes << " bytes";
    }
  }
}

TEST_F(GpuQualityFunctions, TileAndColourApplyMatchCpu) {
  REQUIRE_GPU();
  const cudaStream_t s = stream.get();
  const ApplyShape shapes[] = {{1, 1, 8, 1, 1, false, 0},       {7, 5, 8, 1, 1, false, 3},    {1921, 1081, 8, 1, 1, false, 0},
                               {1920, 1080, 8, 1, 1, true, 0},  {33, 17, 8, 0, 0, false, 1},  {64, 36, 10, 1, 0, false, 0},
                               {1921, 1081, 10, 1, 1, false, 5}, {640, 360, 8, 1, 1, true, 16}};
  std::mt19937 rng(17);
  for (const ApplyShape& sh : shapes) {
    const int bytes = sh.depth > 8 ? 2 : 1, bins = 1 << sh.depth;
    ApplyInputs in{sh};
    const int cw = (sh.width + (1 << sh.shift_x) - 1) >> sh.shift_x;
    in.ch = (sh.height + (1 << sh.shift_y) - 1) >> sh.shift_y;
    in.uvw = sh.nv12 ? 2 * cw : cw;
    in.ypitch = static_cast<size_t>(sh.width + sh.pad) * bytes;
    in.cpitch = static_cast<size_t>(in.uvw + sh.pad) * bytes;
    in.bins = bins;
    in.y0 = random_samples(in.ypitch * sh.height, bytes, rng);
    in.u0 = random_samples(in.cpitch * in.ch, bytes, rng);
    in.v0 = random_samples(in.cpitch * in.ch, bytes, rng);
    // 8x8 and 32x32: the LUTs a block blends staged in shared memory, or read from global memory
    // where they do not fit (10-bit 32x32; narrow planes, whose blocks span many rows of tiles).
    for (hist::TileGrid grid : {hist::TileGrid{1, 1}, {8, 8}, {3, 2}, {32, 32}}) {
      if (grid.cols > sh.width || grid.rows > sh.height) continue;
      std::vector<uint16_t> luts(static_cast<size_t>(grid.count()) * bins), lut(bins);
      for (auto& l : luts) l = static_cast<uint16_t>(rng() % bins);
      for (auto& l : lut) l = static_cast<uint16_t>(rng() % bins);
      std::vector<uint32_t> xt(sh.width), yt(sh.height);
      eq::axis_table(sh.width, grid.cols, xt.data());
      eq::axis_table(sh.height, grid.rows, yt.data());
      cuda::Buffer dluts = upload(luts, s), dlut = upload(lut, s), dx = upload(xt, s), dy = upload(yt, s);
      in.lut = lut.data();
      in.dlut = static_cast<uint16_t*>(dlut.data());
      in.ht = {luts.data(), grid, xt.data(), yt.data()};
      in.dt = {static_cast<uint16_t*>(dluts.data()), grid, static_cast<uint32_t*>(dx.data()), static_cast<uint32_t*>(dy.data())};
      for (int variant = 0; variant < 3; ++variant) {
        apply_variant_matches(in, variant, s);
        if (HasFatalFailure()) return;
      }
    }
  }
}

// --- whole equalizers ----------------------------------------------------------------------------

struct EqCase {
  std::string name;
  video::FrameFormat format;
  eq::Quality quality;
  std::string kernel;
  bool keep_on_device;
  int frames;
};

// The fold (planner.h): the defaults and temporal alone with the fused kernel, planar and NV12,
// the colour pass in every chroma layout (odd sizes) and the LUT alone where the chroma is kept;
// 10-bit stays on the steps.
void add_folded_cases(std::vector<EqCase>& c, const eq::Quality& def, const eq::Quality& temporal_only, const video::FrameFormat& odd8,
                      const video::FrameFormat& nv12) {
  eq::Quality def_keep = def;
  def_keep.chroma = eq::ChromaMode::keep;
  c.push_back({"temporal_only_folded", odd8, temporal_only, "method2_tuned", false, 30});
  c.push_back({"default_folded_nv12_device", nv12, def, "method2_tuned", true, 12});
  c.push_back({"default_folded_422", {1283, 721, 8, 1, 0}, def, "method2_tuned", false, 12});
  c.push_back({"default_folded_444_device", {641, 359, 8, 0, 0}, def, "method2_tuned", true, 12});
  c.push_back({"default_folded_keep", odd8, def_keep, "method2_tuned", false, 12});
}

// The textbook clahe on OpenCV's grid (TileLayout): padded pictures (odd sizes, one axis whole,
// fewer samples than tiles), the frame's histogram counted apart and the brightness measured on
// the mean LUT; in every memory, depth and layout.
void add_opencv_grid_cases(std::vector<EqCase>& c, eq::Quality opencv) {
  opencv.textbook = true;
  opencv.range = eq::RangeMode::full;
  const video::FrameFormat odd8{1921, 1081, 8, 1, 1};
  c.push_back({"clahe_full_textbook_device_block_atomic", odd8, opencv, "block_atomic", true, 12});
  c.push_back({"clahe_full_textbook_tuned_one_axis_whole", {1280, 721, 8, 1, 1}, opencv, "method2_tuned", false, 12});
  c.push_back({"clahe_full_textbook_small_many_frames", {67, 37, 8, 1, 1}, opencv, "method2", false, 90});
  c.push_back({"clahe_full_textbook_smaller_than_the_grid", {5, 3, 8, 1, 1}, opencv, "method2", false, 12});
  c.push_back({"clahe_full_textbook_10bit_odd", {1283, 721, 10, 1, 1}, opencv, "method2", false, 12});
  c.push_back({"clahe_full_textbook_p010_odd_device", {1282, 719, 10, 1, 1, video::PlaneLayout::semi_planar}, opencv,
               "method2_tuned", true, 12});
  c.push_back({"clahe_full_textbook_444_device", {641, 359, 8, 0, 0}, opencv, "method2", true, 12});
}

std::vector<EqCase> eq_cases() {
  eq::Quality def = eq::default_quality();
  eq::Quality clahe = def;
  clahe.mode = eq::Mode::clahe;
  eq::Quality clahe_keep = clahe;
  clahe_keep.chroma = eq::ChromaMode::keep;
  clahe_keep.tiles = {5, 3};
  clahe_keep.clip_limit = 3;
  eq::Quality clip_only = eq::plain_quality();
  clip_only.clip_limit = 1.5;
  eq::Quality temporal_only = eq::plain_quality();
  temporal_only.temporal_s = 0.3;
  const video::FrameFormat odd8{1921, 1081, 8, 1, 1}, ten{1280, 720, 10, 1, 1}, nv12{1280, 720, 8, 1, 1, video::PlaneLayout::semi_planar},
      small{64, 36, 8, 1, 1}, p010{1280, 720, 10, 1, 1, video::PlaneLayout::semi_planar};
  std::vector<EqCase> c;
  for (const char* k : {"method2", "method2_tuned", "block_atomic", "cub"}) {
    c.push_back({std::string("default_") + k, odd8, def, k, false, 12});
    c.push_back({std::string("clahe_") + k, odd8, clahe, k, false, 12});
  }
  c.push_back({"clahe_keep_map4", odd8, clahe_keep, "method2_map4", false, 8});
  c.push_back({"clip_only", odd8, clip_only, "method2", false, 6});
  c.push_back({"temporal_only", odd8, temporal_only, "method2", false, 30});
  add_folded_cases(c, def, temporal_only, odd8, nv12);
  c.push_back({"default_10bit_tuned", ten, def, "method2_tuned", false, 12});
  c.push_back({"default_10bit", ten, def, "method2", false, 12});
  c.push_back({"clahe_10bit", ten, clahe, "method2", false, 12});
  c.push_back({"clahe_10bit_block_atomic", ten, clahe, "block_atomic", true, 12});
  c.push_back({"default_nv12", nv12, def, "method2", false, 12});
  c.push_back({"clahe_nv12_device", nv12, clahe, "method2", true, 12});
  c.push_back({"default_device", odd8, def, "method2", true, 12});
  c.push_back({"clahe_small_many_frames", small, clahe, "method2", false, 90});
  c.push_back({"clahe_small_many_frames_tuned", small, clahe, "method2_tuned", false, 90});
  c.push_back({"clahe_10bit_tuned", ten, clahe, "method2_tuned", false, 12});
  c.push_back({"default_p010_device", p010, def, "method2_tuned", true, 12});
  c.push_back({"clahe_p010_device", p010, clahe, "method2_tuned", true, 12});
  c.push_back({"plain_p010", p010, eq::plain_quality(), "method2_tuned", false, 6});
  // The levels: full range and the textbook ones in every mode, and plain settings on
  // the fused path (method2_tuned, samples not in the high bits) with each.
  auto with = [](eq::Quality q, eq::RangeMode r, bool textbook) {
    q.range = r;
    q.textbook = textbook;
    return q;
  };
  const eq::RangeMode full = eq::RangeMode::full, lim = eq::RangeMode::limited;
  for (auto [tag, r, tb] : {std::tuple{"full", full, false}, {"textbook", lim, true}, {"full_textbook", full, true}}) {
    const std::string t = tag;
    c.push_back({"default_" + t, odd8, with(def, r, tb), "method2", false, 12});
    c.push_back({"clahe_" + t, odd8, with(clahe, r, tb), "method2", false, 12});
    c.push_back({"temporal_only_" + t, odd8, with(temporal_only, r, tb), "method2", false, 30});
    c.push_back({"temporal_folded_" + t, odd8, with(temporal_only, r, tb), "method2_tuned", false, 30});
    c.push_back({"default_folded_" + t, odd8, with(def, r, tb), "method2_tuned", false, 12});
    c.push_back({"default_10bit_" + t, ten, with(def, r, tb), "method2", false, 12});
    c.push_back({"clahe_p010_" + t, p010, with(clahe, r, tb), "method2_tuned", true, 12});
    c.push_back({"plain_fused_" + t, odd8, with(eq::plain_quality(), r, tb), "method2_tuned", false, 6});
    c.push_back({"plain_fused_10bit_" + t, ten, with(eq::plain_quality(), r, tb), "method2_tuned", false, 6});
    c.push_back({"plain_p010_" + t, p010, with(eq::plain_quality(), r, tb), "method2_tuned", false, 6});
  }
  add_opencv_grid_cases(c, clahe);
  c.push_back({"plain_fused_limited", odd8, eq::plain_quality(), "method2_tuned", false, 6});
  c.push_back({"plain_fused_10bit_limited", ten, eq::plain_quality(), "method2_tuned", true, 6});
  // The denoiser (core/equalize/ops/denoise/denoise.h; its own tests: test_denoise_gpu.cpp) in every layout.
  eq::Quality dn = def, dn_clahe = clahe, dn_plain = eq::plain_quality();
  dn.denoise = dn_clahe.denoise = 3;
  dn_plain.denoise = 2;
  const video::FrameFormat yuv444{641, 359, 8, 0, 0};
  c.push_back({"denoise_odd8", odd8, dn, "method2", false, 12});
  c.push_back({"denoise_clahe_odd8_device", odd8, dn_clahe, "method2", true, 12});
  c.push_back({"denoise_plain_fused_kernel", odd8, dn_plain, "method2_tuned", false, 8});
  c.push_back({"denoise_10bit", ten, dn, "method2", false, 12});
  c.push_back({"denoise_clahe_10bit_device", ten, dn_clahe, "method2", true, 12});
  c.push_back({"denoise_nv12", nv12, dn, "method2", false, 12});
  c.push_back({"denoise_p010_device", p010, dn, "method2_tuned", true, 12});
  c.push_back({"denoise_clahe_p010", p010, dn_clahe, "method2", false, 12});
  c.push_back({"denoise_444", yuv444, dn, "method2", false, 12});
  return c;
}

class GpuQualityPipeline : public ::testing::TestWithParam<EqCase> {};

TEST_P(GpuQualityPipeline, IdenticalToCpu) {
  REQUIRE_GPU();
  const EqCase& c = GetParam();
  const Painter paint = dim_scene(c.format, c.frames * 2 / 3);
  pipeline::EqualizerOptions cpu;
  cpu.cpu = true;
  cpu.quality = c.quality;
  cpu.keep_histogram = true;
  auto want = drive(cpu, c.format, c.frames, paint);
  ASSERT_TRUE(want.is_ok()) << want.status().to_string();
  pipeline::EqualizerOptions gpu = cpu;
  gpu.cpu = false;
  gpu.kernel = c.kernel;
  gpu.download = !c.keep_on_device;
  gpu.keep_on_device = c.keep_on_device;
  auto got = drive(gpu, c.format, c.frames, paint);
  ASSERT_TRUE(got.is_ok()) << got.status().to_string();
  ASSERT_EQ(got->frames.size(), want->frames.size());
  for (size_t i = 0; i < want->frames.size(); ++i) {
    ASSERT_TRUE(got->frames[i] == want->frames[i]) << c.name << ": frame " << i;
    EXPECT_EQ(got->side[i].histogram, want->side[i].histogram) << c.name << ": frame " << i;
    EXPECT_EQ(got->side[i].lut, want->side[i].lut) << c.name << ": frame " << i;
  }
  if (c.quality.mode == eq::Mode::clahe) {
    const std::string k = got->side[0].kernel;
    const bool untiled = c.kernel == "cub";
    EXPECT_TRUE(untiled ? k == "method2_tuned" : k == c.kernel) << "clahe with " << c.kernel << " ran " << k;
  }
}

INSTANTIATE_TEST_SUITE_P(Modes, GpuQualityPipeline, ::testing::ValuesIn(eq_cases()),
                         [](const ::testing::TestParamInfo<EqCase>& i) { return i.param.name; });

// Controls changed between frames (mode, tiles, clip, temporal, chroma, strength, kernel): every
// frame comes out, each identical to the CPU's with the same schedule.
TEST(GpuQualityLive, SwitchingEveryControlMatchesCpuFrameForFrame) {
  REQUIRE_GPU();
  const video::FrameFormat fmt{1280, 720, 8, 1, 1};
  const int frames = 40;
  auto schedule = [](bool gpu) {
    return [gpu](int n, pipeline::Equalizer& e) {
      eq::Quality q = eq::default_quality();
      switch (n) {
        case 5: q.mode = eq::Mode::clahe; break;
        case 10: q.mode = eq::Mode::clahe; q.tiles = {4, 6}; break;
        case 15: q.clip_limit = 0; break;
        case 20: q.temporal_s = 0; break;
        case 25: q.chroma = eq::ChromaMode::keep; break;
        case 30: q = eq::plain_quality(); break;
        case 35: q.mode = eq::Mode::clahe; q.scene_cut = 0.05; break;
        default: return;
      }
      EXPECT_TRUE(e.set_quality(q).is_ok());
      if (n == 20) {
        EXPECT_TRUE(e.set_strength(0.6).is_ok());
      }
      if (n == 25 && gpu) {
        EXPECT_TRUE(e.set_kernel("block_atomic").is_ok());
      }
    };
  };
  pipeline::EqualizerOptions cpu;
  cpu.cpu = true;
  cpu.quality = eq::default_quality();
  auto want = drive(cpu, fmt, frames, dim_scene(fmt, 27), schedule(false));
  pipeline::EqualizerOptions gpu = cpu;
  gpu.cpu = false;
  gpu.frames_in_flight = 3;
  auto got = drive(gpu, fmt, frames, dim_scene(fmt, 27), schedule(true));
  ASSERT_TRUE(want.is_ok() && got.is_ok());
  ASSERT_EQ(got->frames.size(), static_cast<size_t>(frames));
  for (int i = 0; i < frames; ++i) {
    ASSERT_TRUE(got->frames[i] == want->frames[i]) << "frame " << i;
    EXPECT_EQ(got->side[i].quality, want->side[i].quality) << "frame " << i;
  }
}

// The threaded pipeline with controls changed from the sink while frames flow: no frame lost, and
// each frame identical to the CPU's equalization with the settings it reports.
TEST(GpuQualityLive, ThePipelineDropsNoFrameWhileControlsChange) {
  REQUIRE_GPU();
  video::SyntheticOptions so;
  so.width = 1280;
  so.height = 720;
  so.fps = 60;
  so.duration_s = 2;  // 120 frames
  auto src = video::open_synthetic(so);
  ASSERT_TRUE(src.is_ok());
  pipeline::PipelineOptions po;
  po.equalizer.quality = eq::default_quality();
  po.equalizer.download = false;
  po.equalizer.keep_on_device = true;
  po.equalizer.compare.enabled = true;
  auto p = pipeline::Pipeline::create(po, (*src)->info());
  ASSERT_TRUE(p.is_ok()) << p.status().to_string();
  struct Sink final : pipeline::Sink {
    pipeline::Pipeline* pipe = nullptr;
    std::vector<eq::Quality> seen;
    std::vector<FrameCopy> frames;
    Status consume(pipeline::PipelineFrame f, pipeline::FrameRecord&) override {
      seen.push_back(f.side.quality);
      frames.push_back(copy_frame(*f.frame));
      const size_t n = seen.size();
      eq::Quality q = eq::default_quality();
      if (n % 10 == 0) {
        q.mode = (n / 10) % 2 ? eq::Mode::clahe : eq::Mode::global;
        q.chroma = (n / 20) % 2 ? eq::ChromaMode::keep : eq::ChromaMode::follow;
        HISTEQ_TRY(pipe->set_quality(q));
        HISTEQ_TRY(pipe->set_compare({true, (n / 10) % 3 ? std::optional<pipeline::Look>() : pipeline::Look{0.5, q}}));
      }
      return Status::ok();
    }
  } sink;
  sink.pipe = p->get();
  std::atomic<bool> stop{false};
  ASSERT_OK((*p)->run(**src, sink, stop));
  ASSERT_EQ(sink.seen.size(), 120u) << "frames lost";
  // Replay on the CPU with each frame's reported settings.
  auto src2 = video::open_synthetic(so);
  auto eq = pipeline::Equalizer::create([] {
    pipeline::EqualizerOptions o;
    o.cpu = true;
    o.quality = eq::default_quality();
    return o;
  }(), (*src2)->info().format);
  ASSERT_TRUE(eq.is_ok());
  auto pool = video::FramePool::create((*src2)->info().format, MemoryKind::host);
  std::vector<pipeline::PipelineFrame> done;
  for (size_t n = 0; n < 120; ++n) {
    auto f = (*src2)->next(**pool);
    ASSERT_TRUE(f.is_ok() && *f);
    ASSERT_OK((*eq)->set_quality(sink.seen[n]));
    ASSERT_OK((*eq)->submit(std::move(f.value()), done));
    ASSERT_EQ(done.size(), 1u);
    ASSERT_TRUE(copy_frame(*done[0].frame) == sink.frames[n]) << "frame " << n;
    done.clear();
  }
}

// The comparison on the GPU (frames kept on the device) is the CPU's comparison.
TEST(GpuQualityLive, TheComparisonMatchesCpu) {
  REQUIRE_GPU();
  const video::FrameFormat fmt{1921, 1081, 8, 1, 1};
  eq::Quality b = eq::default_quality();
  b.mode = eq::Mode::clahe;
  auto schedule = [&](int n, pipeline::Equalizer& e) {
    if (n == 4) {
      EXPECT_TRUE(e.set_compare({true, pipeline::Look{0.8, b}}).is_ok());
    }
    if (n == 9) {
      EXPECT_TRUE(e.set_compare({true, std::nullopt}).is_ok());
    }
  };
  pipeline::EqualizerOptions cpu;
  cpu.cpu = true;
  cpu.quality = eq::plain_quality();
  cpu.compare.enabled = true;
  auto want = drive(cpu, fmt, 12, dim_scene(fmt, 6), schedule);
  pipeline::EqualizerOptions gpu = cpu;
  gpu.cpu = false;
  gpu.download = false;
  gpu.keep_on_device = true;
  auto got = drive(gpu, fmt, 12, dim_scene(fmt, 6), schedule);
  ASSERT_TRUE(want.is_ok() && got.is_ok()) << got.status().to_string();
  ASSERT_EQ(got->compare.size(), 12u);
  for (int i = 0; i < 12; ++i) {
    ASSERT_TRUE(got->frames[i] == want->frames[i]) << "frame " << i;
    ASSERT_TRUE(got->compare[i] == want->compare[i]) << "comparison " << i;
  }
  pipeline::EqualizerOptions bad = gpu;
  bad.keep_on_device = false;
  bad.download = true;
  EXPECT_FALSE(pipeline::Equalizer::create(bad, fmt).is_ok()) << "a comparison needs frames kept on the device";
}

}  // namespace
}  // namespace histeq::test
