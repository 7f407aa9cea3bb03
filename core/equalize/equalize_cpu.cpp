#include <cmath>
#include <cstring>

#include "core/equalize/equalize.h"
#include "core/histogram/histogram.h"

namespace histeq::eq {

Result<uint32_t> strength_weight(double strength) {
  if (!(strength >= 0.0 && strength <= 1.0))  // also rejects NaN
    return HISTEQ_ERROR(Code::invalid_argument, "strength must be between 0 and 1");
  return static_cast<uint32_t>(std::lround(strength * kWeightOne));
}

Status validate_lut_args(int bins, uint32_t weight) {
  if (hist::bins_log2(bins) < 1 || bins > kMaxBins)
    return HISTEQ_ERROR(Code::invalid_argument, "LUT size must be a power of two in 2..1024");
  if (weight > kWeightOne) return HISTEQ_ERROR(Code::invalid_argument, "strength weight above 1.0");
  return Status::ok();
}

Status build_lut(const uint32_t* counts, int bins, uint32_t weight, uint16_t* lut) {
  HISTEQ_TRY(validate_lut_args(bins, weight));
  if (counts == nullptr || lut == nullptr) return HISTEQ_ERROR(Code::invalid_argument, "null histogram or LUT");
  // 64-bit sums: a malformed histogram cannot wrap; a real one (< 2^32 samples) fits in 32 bits.
  uint64_t total = 0, cdf_min = 0;
  for (int v = 0; v < bins; ++v) {
    if (cdf_min == 0 && counts[v] != 0) cdf_min = counts[v];
    total += counts[v];
  }
  if (total >= (uint64_t{1} << 32)) return HISTEQ_ERROR(Code::invalid_argument, "histogram of 2^32 samples or more");
  const uint32_t maxval = static_cast<uint32_t>(bins - 1);
  uint32_t cdf = 0;
  for (int v = 0; v < bins; ++v) {
    cdf += counts[v];
    lut[v] = static_cast<uint16_t>(lut_entry(static_cast<uint32_t>(v), cdf, static_cast<uint32_t>(cdf_min),
                                             static_cast<uint32_t>(total), maxval, weight));
  }
  return Status::ok();
}

namespace {

template <class T>
Status apply_host(const PlaneView<T>& p, const uint16_t* lut, int bins) {
  HISTEQ_TRY(validate_lut_args(bins, 0));
  if (p.memory == MemoryKind::device) return HISTEQ_ERROR(Code::invalid_argument, "apply_lut needs a host plane");
  if (p.empty()) return Status::ok();
  if (p.data == nullptr || lut == nullptr) return HISTEQ_ERROR(Code::invalid_argument, "null plane or LUT");
  if (p.height > 1 && p.pitch < p.row_bytes()) return HISTEQ_ERROR(Code::invalid_argument, "pitch smaller than a row");
  if constexpr (sizeof(T) == 1) {
    // A byte table covering every 8-bit value: the inner loop is a plain gather with no range test.
    uint8_t table[256];
    for (int v = 0; v < 256; ++v) table[v] = static_cast<uint8_t>(v < bins ? lut[v] : v);
    for (int y = 0; y < p.height; ++y) {
      T* row = p.row(y);
      for (int x = 0; x < p.width; ++x) row[x] = table[row[x]];
    }
  } else {
    const uint32_t n = static_cast<uint32_t>(bins);
    for (int y = 0; y < p.height; ++y) {
      T* row = p.row(y);
      for (int x = 0; x < p.width; ++x) {
        const uint32_t v = row[x];
        if (v < n) row[x] = lut[v];
      }
    }
  }
  return Status::ok();
}

}  // namespace

Status apply_lut(const PlaneView<uint8_t>& plane, const uint16_t* lut, int bins) { return apply_host(plane, lut, bins); }
Status apply_lut(const PlaneView<uint16_t>& plane, const uint16_t* lut, int bins) { return apply_host(plane, lut, bins); }

}  // namespace histeq::eq
