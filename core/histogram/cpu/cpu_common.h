// CPU binning shared by the CPU kernels. Internal to core/histogram.
#pragma once

#include <cstdint>
#include <cstring>

#include "core/histogram/histogram.h"

namespace histeq::hist::cpu {

// Counters per thread: kWays interleaved copies of the histogram, so that runs of equal samples
// (flat regions, one-value frames) increment different memory words in turn instead of waiting on
// one store-to-load chain. The caller sums them.
constexpr int kWays = 4;

// Adds the samples with linear index [first, last) (index = y * width + x) into h[kWays * bins],
// which the caller has zeroed. Samples >= 2^bit_depth are skipped; bin = sample >> (bit_depth -
// log2(bins)); each sample goes to one of the copies (which one is the loop's business: only the
// copies' sum means anything).
// 8-bit samples into 256 bins (no shift, no range test): eight samples a 64-bit load, spread over
// the kWays copies, so the loop issues loads and increments without a dependent chain.
inline void accumulate_bytes(const uint8_t* row, uint64_t x, uint64_t end, uint32_t* h) {
  static_assert(kWays == 4, "the unrolled loop feeds four copies");
  uint32_t* h0 = h;
  uint32_t* h1 = h + 256;
  uint32_t* h2 = h + 512;
  uint32_t* h3 = h + 768;
  for (; x + 8 <= end; x += 8) {
    uint64_t a;
    std::memcpy(&a, row + x, 8);
    ++h0[a & 0xFF];
    ++h1[(a >> 8) & 0xFF];
    ++h2[(a >> 16) & 0xFF];
    ++h3[(a >> 24) & 0xFF];
    ++h0[(a >> 32) & 0xFF];
    ++h1[(a >> 40) & 0xFF];
    ++h2[(a >> 48) & 0xFF];
    ++h3[a >> 56];
  }
  for (; x < end; ++x) ++h0[row[x]];
}

template <class T>
void accumulate(const PlaneView<const T>& p, int bins, uint64_t first, uint64_t last, uint32_t* h) {
  const uint32_t shift = static_cast<uint32_t>(p.bit_depth - bins_log2(bins));
  const uint32_t limit = 1u << p.bit_depth;
  const uint64_t w = static_cast<uint64_t>(p.width);
  uint64_t y = first / w, x = first % w;
  for (uint64_t i = first; i < last; ++y, x = 0) {
    const T* row = p.row(static_cast<int>(y));
    const uint64_t end = std::min<uint64_t>(w, x + (last - i));
    if constexpr (sizeof(T) == 1) {
      if (bins == 256 && p.bit_depth == 8) {
        accumulate_bytes(row, x, end, h);
        i += end - x;
        continue;
      }
    }
    uint64_t xi = x;
    for (; xi + kWays <= end; xi += kWays) {
      for (int k = 0; k < kWays; ++k) {
        const uint32_t v = row[xi + k];
        if (sizeof(T) == 1 || v < limit) ++h[k * bins + (v >> shift)];
      }
    }
    for (; xi < end; ++xi) {
      const uint32_t v = row[xi];
      if (sizeof(T) == 1 || v < limit) ++h[v >> shift];
    }
    i += end - x;
  }
}

}  // namespace histeq::hist::cpu
