// The equalization formula, in one place for the CPU and the GPU (HISTEQ_HD functions compiled by
// both compilers). Integer arithmetic only, so both sides give bit-identical tables (floating point
// would not: nvcc contracts a*b+c into an FMA, the host compiler does not).
//
// Definitions, for a plane of bit depth d, maxval = 2^d - 1, a histogram of bins = 2^d counters
// (one bin per value) and the levels {lo, hi, guard} the curve maps onto (fixed once per frame on
// the host, nominal_levels()):
//   limited range (video's usual, and untagged video's): lo = 16 << (d - 8), hi = 235 << (d - 8);
//   full range: lo = 0, hi = maxval; both with the guard on;
//   textbook (cv2.equalizeHist's formula, histeq's before range-aware levels): lo = 0, hi = maxval, no guard.
//   N        = the number of counted samples (sum of all bins)
//   cdf(v)   = h(0) + ... + h(v)
//   x        = clamp(v, lo, hi): samples below black and above white count, and map to the ends
//   C(x)     = N when x >= hi, else cdf(x)
//   cdf_min  = C(x0), x0 = the smallest x in [lo, hi] with C(x) > 0 (0 when nothing is counted)
//   eq(v)    = lo + round_half_up((C(x) - cdf_min) * (hi - lo) / (N - cdf_min))  when C(x) > cdf_min
//            = lo                                                               when C(x) <= cdf_min
//   Degenerate frames, N <= cdf_min (one value only, or nothing counted): eq(v) = x, the identity
//   (clamped). Stretching a one-value frame would map it to black and make flat frames (fades,
//   black) flash to black; leaving them unchanged is the only choice that keeps them as they are.
//   guard: when lo < x < hi, eq(v) is clamped to [lo + 1, hi - 1]: a level the input had above
//   black never becomes black, nor one below white white.
//   strength: a weight w in [0, 65536] (65536 = 1.0), quantized once on the host by
//   strength_weight(); out(v) = round_half_up((w * eq(v) + (65536 - w) * v) / 65536).
// With the textbook levels this is the classic formula exactly (x = v, the guard never acts):
// eq(v) = round((cdf(v) - cdf_min) * maxval / (N - cdf_min)), cdf_min = the first non-zero bin's.
// Every result lies in [0, maxval]; with strength 1, in [lo, hi]. Samples >= 2^d (possible only
// in 16-bit planes) are left unchanged by apply (they were not counted either, as in the histogram API).
#pragma once

#include <cstdint>

#include "core/cuda/hd.h"

namespace histeq::eq {

constexpr uint32_t kWeightOne = 1u << 16;  // strength 1.0
constexpr int kMaxBins = 1024;              // 10-bit video; the histogram API's limit

// The levels a tone curve maps onto (see above). lo <= hi <= maxval (validate_levels()).
struct Levels {
  uint32_t lo = 0;
  uint32_t hi = 255;
  bool guard = false;
  bool operator==(const Levels& o) const noexcept { return lo == o.lo && hi == o.hi && guard == o.guard; }
};

// The classic formula's levels: 0..maxval, no guard.
HISTEQ_HD constexpr Levels textbook_levels(uint32_t maxval) { return Levels{0, maxval, false}; }

// A limited-range level of 8-bit video (16, 235, 240) at bit depth d: v << (d - 8).
HISTEQ_HD constexpr uint32_t video_level(uint32_t v8, int bit_depth) {
  return bit_depth >= 8 ? v8 << (bit_depth - 8) : v8 >> (8 - bit_depth);
}

// The levels of a plane of bit depth d: limited or full range, or the textbook ones.
HISTEQ_HD constexpr Levels nominal_levels(int bit_depth, bool full_range, bool textbook) {
  const uint32_t maxval = (1u << bit_depth) - 1u;
  if (textbook) return textbook_levels(maxval);
  if (full_range) return Levels{0, maxval, true};
  return Levels{video_level(16, bit_depth), video_level(235, bit_depth), true};
}

HISTEQ_HD uint32_t clamp_level(uint32_t v, const Levels& l) { return v < l.lo ? l.lo : v > l.hi ? l.hi : v; }

// Whether bin v (count h_v, inclusive cdf_v) is x0, the bin whose CDF is cdf_min: the first bin of
// [lo, hi) with cdf > 0. At most one bin is; when none is (everything counted lies at or above
// hi, or nothing was counted), cdf_min = N.
HISTEQ_HD bool is_first_counted(uint32_t v, uint32_t h_v, uint32_t cdf_v, const Levels& l) {
  return v >= l.lo && v < l.hi && cdf_v != 0 && (v == l.lo || cdf_v == h_v);
}

// The guard (see above) on the equalized value e of the level x = clamp(v, lo, hi).
HISTEQ_HD uint32_t guard_level(uint32_t x, uint32_t e, const Levels& l) {
  if (!l.guard || x <= l.lo || x >= l.hi) return e;
  return e < l.lo + 1 ? l.lo + 1 : e > l.hi - 1 ? l.hi - 1 : e;
}

// The equalized value before blending. cdf_x = cdf(clamp(v, lo, hi)) (not read when v >= hi);
// total = N.
HISTEQ_HD uint32_t equalized_value(uint32_t v, uint32_t cdf_x, uint32_t cdf_min, uint32_t total, const Levels& l) {
  const uint32_t x = clamp_level(v, l);
  if (total <= cdf_min) return x;  // degenerate: identity
  const uint32_t c = x >= l.hi ? total : cdf_x;
  if (c <= cdf_min) return guard_level(x, l.lo, l);
  const uint64_t num = static_cast<uint64_t>(c - cdf_min) * (l.hi - l.lo);
  const uint64_t den = static_cast<uint64_t>(total - cdf_min);
  return guard_level(x, l.lo + static_cast<uint32_t>((2 * num + den) / (2 * den)), l);
}

// e blended with the raw value v by weight w (0..kWeightOne).
HISTEQ_HD uint32_t blend_weight(uint32_t v, uint32_t e, uint32_t weight) {
  return static_cast<uint32_t>((static_cast<uint64_t>(weight) * e + static_cast<uint64_t>(kWeightOne - weight) * v + kWeightOne / 2) >> 16);
}

// One LUT entry: eq(v) blended with the identity by weight w (0..kWeightOne).
HISTEQ_HD uint32_t lut_entry(uint32_t v, uint32_t cdf_x, uint32_t cdf_min, uint32_t total, const Levels& l, uint32_t weight) {
  return blend_weight(v, equalized_value(v, cdf_x, cdf_min, total, l), weight);
}

}  // namespace histeq::eq
