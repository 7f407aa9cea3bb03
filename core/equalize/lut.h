// The equalization formula, in one place for the CPU and the GPU (HISTEQ_HD functions compiled by
// both compilers). Integer arithmetic only, so both sides give bit-identical tables (floating point
// would not: nvcc contracts a*b+c into an FMA, the host compiler does not).
//
// Definitions, for a plane of bit depth d, maxval = 2^d - 1, and a histogram of bins = 2^d counters
// (one bin per value):
//   N        = the number of counted samples (sum of all bins)
//   cdf(v)   = h(0) + ... + h(v)
//   cdf_min  = cdf at the smallest value present = h(vmin)
//   eq(v)    = round_half_up((cdf(v) - cdf_min) * maxval / (N - cdf_min))   when cdf(v) > cdf_min
//            = 0                                                            when cdf(v) <= cdf_min
//   Degenerate frames, N == cdf_min (one value only, or nothing counted): eq(v) = v, the identity.
//   Stretching a one-value frame would map it to 0 and make flat frames (fades, black) flash to
//   black; leaving them unchanged is the only choice that keeps such frames as they are.
//   strength: a weight w in [0, 65536] (65536 = 1.0), quantized once on the host by
//   strength_weight(); out(v) = round_half_up((w * eq(v) + (65536 - w) * v) / 65536).
// Every result lies in [0, maxval]. Samples >= 2^d (possible only in 16-bit planes) are left
// unchanged by apply (they were not counted either, as in the histogram API).
#pragma once

#include <cstdint>

#include "core/cuda/hd.h"

namespace histeq::eq {

constexpr uint32_t kWeightOne = 1u << 16;  // strength 1.0
constexpr int kMaxBins = 1024;              // 10-bit video; the histogram API's limit

// The equalized value before blending. cdf_v = cdf(v); total = N.
HISTEQ_HD uint32_t equalized_value(uint32_t v, uint32_t cdf_v, uint32_t cdf_min, uint32_t total, uint32_t maxval) {
  if (total <= cdf_min) return v;  // degenerate: identity
  if (cdf_v <= cdf_min) return 0;
  const uint64_t num = static_cast<uint64_t>(cdf_v - cdf_min) * maxval;
  const uint64_t den = static_cast<uint64_t>(total - cdf_min);
  return static_cast<uint32_t>((2 * num + den) / (2 * den));
}

// One LUT entry: eq(v) blended with the identity by weight w (0..kWeightOne).
HISTEQ_HD uint32_t lut_entry(uint32_t v, uint32_t cdf_v, uint32_t cdf_min, uint32_t total, uint32_t maxval,
                             uint32_t weight) {
  const uint64_t e = equalized_value(v, cdf_v, cdf_min, total, maxval);
  return static_cast<uint32_t>((weight * e + (kWeightOne - weight) * static_cast<uint64_t>(v) + kWeightOne / 2) >> 16);
}

}  // namespace histeq::eq
