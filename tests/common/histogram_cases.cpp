#include "tests/common/histogram_cases.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

namespace histeq::test {

using synth::Pattern;

std::vector<HistCase> histogram_cases() {
  std::vector<HistCase> v;
  // 8-bit planes: every content, size and geometry at each bin count an 8-bit kernel may support
  // (256, and 64 for podlozhnyuk64), so that every kernel meets all of them at its own bin count.
  // 256-bin names carry no suffix.
  for (int bins : {256, 64}) {
    const std::string sfx = bins == 256 ? "" : "_" + std::to_string(bins) + "bins";
    auto add = [&](HistCase c) {
      c.name += sfx;
      c.bins = bins;
      v.push_back(c);
    };
    for (auto [w, h] : std::vector<std::pair<int, int>>{{0, 0}, {1, 1}, {31, 17}, {1921, 1081}}) {
      const std::string sz = std::to_string(w) + "x" + std::to_string(h);
      add({"uniform_" + sz, w, h, 0, 1, 8, 0, Pattern::uniform, 0, 7});
      add({"natural_" + sz, w, h, 0, 1, 8, 0, Pattern::natural, 0, 8});
      for (uint32_t val : {0u, 128u, 255u}) add({"degenerate" + std::to_string(val) + "_" + sz, w, h, 0, 1, 8, 0, Pattern::degenerate, val});
    }
    add({"uniform_1920x1080_pitch2048", 1920, 1080, 2048, 1, 8, 0, Pattern::uniform, 0, 9});
    add({"natural_1920x1080_pitch2048", 1920, 1080, 2048, 1, 8, 0, Pattern::natural, 0, 10});
    add({"degenerate255_1920x1080_pitch2048", 1920, 1080, 2048, 1, 8, 0, Pattern::degenerate, 255});
    add({"uniform_1920x1080_pitch1925_unaligned", 1920, 1080, 1925, 1, 8, 0, Pattern::uniform, 0, 11, 3});
    add({"natural_1x4097_column", 1, 4097, 64, 1, 8, 0, Pattern::natural, 0, 12});
    add({"uniform_4097x1_row", 4097, 1, 0, 1, 8, 0, Pattern::uniform, 0, 13});
    // Varied content through many merge passes (per-thread counters of podlozhnyuk64 and
    // privatized8 flush every 240 samples): a starved grid of 2 blocks.
    add({"natural_1921x1081_2blocks", 1921, 1081, 0, 1, 8, 0, Pattern::natural, 0, 14, 0, false, 2});
    // The same with passes of 3 steps (kernels that honour max_pass_steps flush their warp
    // histograms every 3 loads: the flush that 2^27-sample passes never reach otherwise).
    add({"natural_1921x1081_2blocks_3steppasses", 1921, 1081, 0, 1, 8, 0, Pattern::natural, 0, 15, 0, false, 2, 3});
    add({"degenerate7_1921x1081_1block_3steppasses", 1921, 1081, 0, 1, 8, 0, Pattern::degenerate, 7, 1, 0, false, 1, 3});
    // One value over 8192x8192: 67M equal samples. With a starved grid every thread sees far more
    // than 255 (8-bit) or 65535 (16-bit) of them, so a kernel without overflow handling fails.
    add({"degenerate200_8192x8192", 8192, 8192, 0, 1, 8, 0, Pattern::degenerate, 200});
    add({"degenerate200_8192x8192_1block", 8192, 8192, 0, 1, 8, 0, Pattern::degenerate, 200, 1, 0, false, 1});
  }
  // 16-bit planes holding 10-bit data, at 1024 and 256 bins, with out-of-range samples.
  for (int bins : {1024, 256}) {
    auto add = [&](HistCase c) {
      c.name += "_" + std::to_string(bins) + "bins";
      c.bins = bins;
      v.push_back(c);
    };
    add({"u16_uniform10_1921x1081", 1921, 1081, 0, 2, 10, 0, Pattern::uniform, 0, 21});
    add({"u16_natural10_1920x1080_pitch4096", 1920, 1080, 4096, 2, 10, 0, Pattern::natural, 0, 22});
    add({"u16_degenerate1023_31x17", 31, 17, 0, 2, 10, 0, Pattern::degenerate, 1023});
    add({"u16_uniform10_31x17", 31, 17, 0, 2, 10, 0, Pattern::uniform, 0, 23});
    add({"u16_uniform10_outofrange_1921x1081", 1921, 1081, 0, 2, 10, 0, Pattern::uniform, 0, 24, 0, true});
    add({"u16_natural10_1920x1081_pitch3904_unaligned", 1920, 1081, 3904, 2, 10, 0, Pattern::natural, 0, 25, 2});
    add({"u16_degenerate700_4096x4096_1block", 4096, 4096, 0, 2, 10, 0, Pattern::degenerate, 700, 1, 0, false, 1});
  }
  // The other bin counts (kernels with any 2..1024 bins): binning edges on a few cases each.
  for (int bins : {2, 4, 8, 16, 32, 128}) {
    const std::string sfx = "_" + std::to_string(bins) + "bins";
    v.push_back({"uniform_1921x1081" + sfx, 1921, 1081, 0, 1, 8, bins, Pattern::uniform, 0, 30});
    v.push_back({"degenerate255_31x17" + sfx, 31, 17, 0, 1, 8, bins, Pattern::degenerate, 255});
  }
  for (int bins : {2, 4, 8, 16, 32, 64, 128, 512}) {
    const std::string sfx = "_" + std::to_string(bins) + "bins";
    v.push_back({"u16_uniform10_outofrange_1921x1081" + sfx, 1921, 1081, 0, 2, 10, bins, Pattern::uniform, 0, 31, 0, true});
    v.push_back({"u16_degenerate1023_31x17" + sfx, 31, 17, 0, 2, 10, bins, Pattern::degenerate, 1023});
  }
  return v;
}

std::vector<KernelCase> kernel_cases(Backend backend) {
  std::vector<KernelCase> out;
  for (const auto& e : hist::registry()) {
    if (e.info.backend != backend) continue;
    if (!e.info.alias_of.empty()) continue;  // an alias would repeat its target's results
    for (const auto& c : histogram_cases())
      if (e.info.supports(c.bytes_per_sample, c.bins)) out.push_back({e.info.name, c});
  }
  return out;
}

std::string kernel_case_name(const KernelCase& kc) { return kc.kernel + "__" + kc.c.name; }

PlaneRef make_host_plane(const HistCase& c, std::vector<unsigned char>& storage) {
  const size_t row = static_cast<size_t>(c.width) * c.bytes_per_sample;
  const size_t pitch = c.pitch ? c.pitch : row;
  storage.assign(c.base_offset + pitch * c.height + 16, 0x5A);
  unsigned char* base = storage.data() + c.base_offset;
  if (c.bytes_per_sample == 1) {
    PlaneView<uint8_t> v{base, c.width, c.height, pitch, c.bit_depth, MemoryKind::host};
    (void)synth::fill_host(v, c.pattern, c.seed, c.value);
    return v;
  }
  PlaneView<uint16_t> v{reinterpret_cast<uint16_t*>(base), c.width, c.height, pitch, c.bit_depth, MemoryKind::host};
  (void)synth::fill_host(v, c.pattern, c.seed, c.value);
  if (c.out_of_range) {
    // Every 7th sample gets a value past the bit depth (up to 0xFFFF).
    for (int y = 0; y < c.height; ++y)
      for (int x = (y % 7); x < c.width; x += 7) v.row(y)[x] = static_cast<uint16_t>((1u << c.bit_depth) + synth::hash_xy(x, y, 99) % (65536u - (1u << c.bit_depth)));
  }
  return v;
}

namespace {

// f(x, y, bin) for every sample of p that a histogram of `bins` bins counts, in row order.
template <class F>
void for_each_counted(const PlaneRef& p, int bins, F&& f) {
  int shift = 0;
  while ((bins << shift) < (1 << p.bit_depth)) ++shift;
  for (int y = 0; y < p.height; ++y) {
    const unsigned char* row = static_cast<const unsigned char*>(p.data) + static_cast<size_t>(y) * p.pitch;
    for (int x = 0; x < p.width; ++x) {
      uint32_t v = 0;
      if (p.bytes_per_sample == 1) v = row[x];
      else std::memcpy(&v, row + 2 * x, 2), v &= 0xFFFF;
      if (v < (1u << p.bit_depth)) f(x, y, v >> shift);
    }
  }
}

}  // namespace

std::vector<uint32_t> naive_histogram(const PlaneRef& p, int bins) {
  std::vector<uint32_t> h(bins, 0);
  for_each_counted(p, bins, [&](int, int, uint32_t b) { ++h[b]; });
  return h;
}

// ---- Weighted histograms -------------------------------------------------------------------------

const char* weight_kind_name(WeightKind k) {
  switch (k) {
    case WeightKind::centre: return "centre";
    case WeightKind::random: return "random";
    case WeightKind::constant: return "constant";
  }
  return "?";
}

std::vector<WeightedCase> weighted_cases() {
  std::vector<WeightedCase> v;
  auto add = [&](const HistCase& c, WeightKind k, size_t weight_pitch = 0, const std::string& suffix = "") {
    v.push_back({c.name + "_w" + weight_kind_name(k) + suffix, c, k, weight_pitch});
  };
  const auto all = {WeightKind::centre, WeightKind::random, WeightKind::constant};
  // 8-bit, 256 bins.
  for (auto [w, h] : std::vector<std::pair<int, int>>{{1921, 1081}, {31, 17}})
    for (auto k : all) add({"natural_" + std::to_string(w) + "x" + std::to_string(h), w, h, 0, 1, 8, 256, Pattern::natural, 0, 31}, k);
  add({"uniform_1x1", 1, 1, 0, 1, 8, 256, Pattern::uniform, 0, 32}, WeightKind::random);
  add({"uniform_0x0", 0, 0, 0, 1, 8, 256, Pattern::uniform, 0, 33}, WeightKind::random);
  add({"degenerate255_1921x1081", 1921, 1081, 0, 1, 8, 256, Pattern::degenerate, 255}, WeightKind::constant);
  add({"uniform_4097x1_row", 4097, 1, 0, 1, 8, 256, Pattern::uniform, 0, 34}, WeightKind::centre);
  add({"natural_1x4097_column", 1, 4097, 64, 1, 8, 256, Pattern::natural, 0, 35}, WeightKind::random);
  // Padded pitches: samples padded with tight weights, tight samples with padded weights, both padded
  // (a unit's weights then never come from one flattened row unless both planes are contiguous).
  add({"uniform_1920x1080_pitch2048", 1920, 1080, 2048, 1, 8, 256, Pattern::uniform, 0, 36}, WeightKind::random);
  add({"natural_1920x1080", 1920, 1080, 0, 1, 8, 256, Pattern::natural, 0, 37}, WeightKind::centre, 8192, "_wpitch8192");
  add({"natural_1920x1080_pitch2048", 1920, 1080, 2048, 1, 8, 256, Pattern::natural, 0, 38}, WeightKind::random, 7696,
      "_wpitch7696");
  // Rows that are not 16-byte aligned: samples (a cropped view) and weights (pitch = 4 mod 16).
  add({"uniform_1920x1080_pitch1925_unaligned", 1920, 1080, 1925, 1, 8, 256, Pattern::uniform, 0, 39, 3}, WeightKind::random,
      7684, "_wpitch7684");
  add({"natural_1000x300", 1000, 300, 0, 1, 8, 256, Pattern::natural, 0, 40}, WeightKind::constant, 4004, "_wpitch4004");
  // Fewer bins.
  add({"uniform_1921x1081_64bins", 1921, 1081, 0, 1, 8, 64, Pattern::uniform, 0, 41}, WeightKind::random);
  add({"natural_333x77_2bins", 333, 77, 0, 1, 8, 2, Pattern::natural, 0, 42}, WeightKind::centre);
  // One value over 8192x8192 with a one-block grid: every thread sees ~2^21 samples of one bin, past
  // the 16-bit counters and far past what a float sum keeps to 1e-5.
  for (auto k : {WeightKind::random, WeightKind::constant})
    add({"degenerate200_8192x8192_1block", 8192, 8192, 0, 1, 8, 256, Pattern::degenerate, 200, 1, 0, false, 1}, k);
  // 16-bit planes holding 10-bit data.
  for (auto k : {WeightKind::random, WeightKind::constant})
    add({"u16_uniform10_1921x1081_1024bins", 1921, 1081, 0, 2, 10, 1024, Pattern::uniform, 0, 51}, k);
  add({"u16_natural10_1920x1080_pitch4096_1024bins", 1920, 1080, 4096, 2, 10, 1024, Pattern::natural, 0, 52}, WeightKind::centre);
  add({"u16_uniform10_outofrange_1921x1081_1024bins", 1921, 1081, 0, 2, 10, 1024, Pattern::uniform, 0, 53, 0, true},
      WeightKind::random);
  add({"u16_degenerate1023_31x17_1024bins", 31, 17, 0, 2, 10, 1024, Pattern::degenerate, 1023}, WeightKind::constant);
  add({"u16_natural10_1921x1081_512bins", 1921, 1081, 0, 2, 10, 512, Pattern::natural, 0, 54}, WeightKind::random);
  add({"u16_uniform10_outofrange_1921x1081_256bins", 1921, 1081, 0, 2, 10, 256, Pattern::uniform, 0, 55, 0, true},
      WeightKind::centre, 7700, "_wpitch7700");
  add({"u16_uniform10_31x17_256bins", 31, 17, 0, 2, 10, 256, Pattern::uniform, 0, 56}, WeightKind::random);
  add({"u16_degenerate700_4096x4096_1block_1024bins", 4096, 4096, 0, 2, 10, 1024, Pattern::degenerate, 700, 1, 0, false, 1},
      WeightKind::random);
  add({"u16_degenerate700_4096x4096_1block_256bins", 4096, 4096, 0, 2, 10, 256, Pattern::degenerate, 700, 1, 0, false, 1},
      WeightKind::constant);
  return v;
}

std::vector<WeightedKernelCase> weighted_kernel_cases(Backend backend) {
  std::vector<WeightedKernelCase> out;
  for (const auto& e : hist::registry()) {
    if (e.info.backend != backend || !e.info.weighted) continue;
    for (const auto& wc : weighted_cases())
      if (e.info.supports(wc.c.bytes_per_sample, wc.c.bins)) out.push_back({e.info.name, wc});
  }
  return out;
}

std::string weighted_kernel_case_name(const WeightedKernelCase& kc) { return kc.kernel + "__" + kc.wc.name; }

WeightsView make_host_weights(const WeightedCase& wc, std::vector<float>& storage) {
  const HistCase& c = wc.c;
  const size_t pitch = wc.weight_pitch ? wc.weight_pitch : static_cast<size_t>(c.width) * sizeof(float);
  const size_t row_floats = pitch / sizeof(float);
  storage.assign(row_floats * c.height + 4, std::numeric_limits<float>::quiet_NaN());
  const double cx = 0.5 * c.width, cy = 0.5 * c.height;
  for (int y = 0; y < c.height; ++y) {
    float* row = storage.data() + row_floats * y;
    for (int x = 0; x < c.width; ++x) {
      switch (wc.weights) {
        case WeightKind::centre: {
          const double dx = (x + 0.5 - cx) / cx, dy = (y + 0.5 - cy) / cy;
          row[x] = static_cast<float>(std::max(0.0, 1.0 - (dx * dx + dy * dy)));
          break;
        }
        case WeightKind::random: row[x] = static_cast<float>(synth::hash_xy(x, y, c.seed + 1000) >> 8) * (1.0f / 16777216.0f); break;
        case WeightKind::constant: row[x] = 0.7f; break;
      }
    }
  }
  return {storage.data(), c.width, c.height, pitch, 32, MemoryKind::host};
}

WeightedHistogram naive_weighted_histogram(const PlaneRef& p, const WeightsView& w, int bins) {
  WeightedHistogram h{std::vector<uint32_t>(bins, 0), std::vector<double>(bins, 0.0)};
  for_each_counted(p, bins, [&](int x, int y, uint32_t b) {
    float weight;
    std::memcpy(&weight, reinterpret_cast<const unsigned char*>(w.data) + static_cast<size_t>(y) * w.pitch + 4 * static_cast<size_t>(x), 4);
    ++h.counts[b];
    h.sums[b] += weight;
  });
  return h;
}

double max_relative_error(const std::vector<float>& got, const std::vector<double>& ref, int* worst) {
  constexpr double kInf = std::numeric_limits<double>::infinity();
  double max_err = got.size() == ref.size() ? 0.0 : kInf;
  if (worst) *worst = -1;
  for (size_t b = 0; b < std::min(got.size(), ref.size()); ++b) {
    double err;
    if (std::isnan(got[b])) err = kInf;
    else if (ref[b] == 0.0) err = got[b] == 0.0f ? 0.0 : kInf;
    else err = std::fabs(static_cast<double>(got[b]) - ref[b]) / std::fabs(ref[b]);
    if (err > max_err) {
      max_err = err;
      if (worst) *worst = static_cast<int>(b);
    }
  }
  return max_err;
}

}  // namespace histeq::test
