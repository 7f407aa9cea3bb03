// CPU binning shared by the CPU kernels. Internal to core/histogram.
#pragma once

#include <cstdint>

#include "core/histogram/histogram.h"

namespace histeq::hist::cpu {

// Counters per thread: kWays interleaved copies of the histogram, so that runs of equal samples
// (flat regions, one-value frames) increment different memory words in turn instead of waiting on
// one store-to-load chain. The caller sums them.
constexpr int kWays = 4;

// Adds the samples with linear index [first, last) (index = y * width + x) into h[kWays * bins],
// which the caller has zeroed. Samples >= 2^bit_depth are skipped; bin = sample >> (bit_depth -
// log2(bins)); sample x of a row goes to copy x % kWays.
template <class T>
void accumulate(const PlaneView<const T>& p, int bins, uint64_t first, uint64_t last, uint32_t* h) {
  const uint32_t shift = static_cast<uint32_t>(p.bit_depth - bins_log2(bins));
  const uint32_t limit = 1u << p.bit_depth;
  const uint64_t w = static_cast<uint64_t>(p.width);
  uint64_t y = first / w, x = first % w;
  for (uint64_t i = first; i < last; ++y, x = 0) {
    const T* row = p.row(static_cast<int>(y));
    const uint64_t end = std::min<uint64_t>(w, x + (last - i));
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
