#include "tests/common/histogram_cases.h"

#include <cstring>

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

std::vector<KernelCase> kernel_cases(hist::Backend backend) {
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

std::vector<uint32_t> naive_histogram(const PlaneRef& p, int bins) {
  std::vector<uint32_t> h(bins, 0);
  int shift = 0;
  while ((bins << shift) < (1 << p.bit_depth)) ++shift;
  for (int y = 0; y < p.height; ++y) {
    const unsigned char* row = static_cast<const unsigned char*>(p.data) + static_cast<size_t>(y) * p.pitch;
    for (int x = 0; x < p.width; ++x) {
      uint32_t v = 0;
      if (p.bytes_per_sample == 1) v = row[x];
      else std::memcpy(&v, row + 2 * x, 2), v &= 0xFFFF;
      if (v >= (1u << p.bit_depth)) continue;
      ++h[v >> shift];
    }
  }
  return h;
}

}  // namespace histeq::test
