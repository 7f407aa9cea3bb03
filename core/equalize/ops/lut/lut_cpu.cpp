// The lut operation on the CPU: the plain LUT (lut.h's formula), the clipped one and clahe's tile
// LUTs (tone.h's clip and shadow floor): the loops the GPU side (lut_gpu.cu) is tested against.
#include <cmath>
#include <cstring>
#include <string>

#include "core/equalize/ops/lut/build_lut.h"
#include "core/equalize/tone.h"
#include "core/image/fork_join.h"

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

Status validate_levels(int bins, const Levels& levels) {
  if (levels.lo > levels.hi || levels.hi >= static_cast<uint32_t>(bins))
    return HISTEQ_ERROR(Code::invalid_argument, "levels must satisfy lo <= hi <= " + std::to_string(bins - 1) + ", not " +
                                                    std::to_string(levels.lo) + ".." + std::to_string(levels.hi));
  return Status::ok();
}

Status build_lut(const uint32_t* counts, int bins, uint32_t weight, const Levels& levels, uint16_t* lut) {
  HISTEQ_TRY(validate_lut_args(bins, weight));
  HISTEQ_TRY(validate_levels(bins, levels));
  if (counts == nullptr || lut == nullptr) return HISTEQ_ERROR(Code::invalid_argument, "null histogram or LUT");
  // 64-bit sums: a malformed histogram cannot wrap; a real one (< 2^32 samples) fits in 32 bits.
  uint64_t total = 0;
  for (int v = 0; v < bins; ++v) total += counts[v];
  if (total >= (uint64_t{1} << 32)) return HISTEQ_ERROR(Code::invalid_argument, "histogram of 2^32 samples or more");
  uint32_t cdf[kMaxBins];
  uint32_t sum = 0, cdf_min = static_cast<uint32_t>(total);  // N when no bin of [lo, hi) is counted (lut.h)
  bool found = false;
  for (int v = 0; v < bins; ++v) {
    sum += counts[v];
    cdf[v] = sum;
    if (!found && is_first_counted(static_cast<uint32_t>(v), counts[v], sum, levels)) {
      cdf_min = sum;
      found = true;
    }
  }
  for (int v = 0; v < bins; ++v) {
    const uint32_t x = clamp_level(static_cast<uint32_t>(v), levels);
    lut[v] = static_cast<uint16_t>(lut_entry(static_cast<uint32_t>(v), cdf[x], cdf_min, static_cast<uint32_t>(total), levels, weight));
  }
  return Status::ok();
}

Status build_lut(const uint32_t* counts, int bins, uint32_t weight, uint16_t* lut) {
  return build_lut(counts, bins, weight, textbook_levels(static_cast<uint32_t>(bins - 1)), lut);
}

namespace {

// Clips h in place (tone.h); total is its sum.
void clip_histogram(uint32_t* h, int bins, uint64_t total, uint32_t clip_q8) {
  const uint32_t limit = tone::clip_count(clip_q8, total, bins);
  const int g = tone::clip_group(bins);
  uint64_t kept_sum = 0;
  for (int j = 0; j < bins; j += g) {
    uint32_t group = 0;
    for (int k = 0; k < g; ++k) group += h[j + k];
    for (int k = 0; k < g; ++k) kept_sum += h[j + k] = tone::clip_kept(h[j + k], group, limit);
  }
  const uint32_t excess = static_cast<uint32_t>(total - kept_sum);
  for (int v = 0; v < bins; ++v) h[v] = tone::clipped_bin(h[v], static_cast<uint32_t>(v), excess, static_cast<uint32_t>(bins));
}

// Clips h in place, then raises its shadows (tone.h's shadow floor, which needs to know which level
// groups h held before the clip); total is its sum. Returns the new sum.
uint64_t shape_histogram(uint32_t* h, int bins, uint64_t total, uint32_t clip_q8, const Levels& l) {
  const int g = tone::clip_group(bins);
  bool held[kMaxBins];
  for (int j = 0; j < bins; j += g) {
    uint32_t sum = 0;
    for (int k = 0; k < g; ++k) sum += h[j + k];
    held[j / g] = sum != 0;
  }
  clip_histogram(h, bins, total, clip_q8);
  uint32_t group[kMaxBins];
  bool in[kMaxBins];
  for (int j = 0; j < bins; j += g) {
    uint32_t sum = 0;
    for (int k = 0; k < g; ++k) sum += h[j + k];
    for (int k = 0; k < g; ++k) group[j + k] = sum;
  }
  for (int v = 0; v < bins; ++v) in[v] = tone::in_shadows(static_cast<uint32_t>(v), held[v / g], bins, l);
  auto terms = [&](uint32_t f) {
    uint64_t t = 0;
    for (int v = 0; v < bins; ++v) t += tone::floor_terms(group[v], static_cast<uint32_t>(v), in[v], f, bins);
    return t;
  };
  const uint32_t f = tone::shadow_floor(terms, static_cast<uint32_t>(total), l);
  if (f == 0) return total;
  for (int v = 0; v < bins; ++v) {
    const uint32_t raised = tone::floored_bin(h[v], group[v], static_cast<uint32_t>(v), in[v], f, bins);
    total += raised - h[v];
    h[v] = raised;
  }
  return total;
}

}  // namespace

Status build_lut_clipped(const uint32_t* counts, int bins, uint32_t weight, uint32_t clip_q8, const Levels& levels, uint16_t* lut) {
  if (clip_q8 == 0) return build_lut(counts, bins, weight, levels, lut);
  HISTEQ_TRY(validate_lut_args(bins, weight));
  HISTEQ_TRY(validate_levels(bins, levels));
  if (counts == nullptr || lut == nullptr) return HISTEQ_ERROR(Code::invalid_argument, "null histogram or LUT");
  uint32_t h[kMaxBins];
  uint64_t total = 0;
  for (int v = 0; v < bins; ++v) total += h[v] = counts[v];
  if (total >= (uint64_t{1} << 32)) return HISTEQ_ERROR(Code::invalid_argument, "histogram of 2^32 samples or more");
  shape_histogram(h, bins, total, clip_q8, levels);
  return build_lut(h, bins, weight, levels, lut);
}

namespace {

// One tile's LUT (tone::tile_lut_entry over its clipped, floored CDF); total < 2^32.
void tile_lut(const uint32_t* in, int bins, uint32_t weight, uint32_t clip_q8, const Levels& levels, uint16_t* out) {
  uint32_t h[kMaxBins];
  uint64_t total = 0;
  for (int v = 0; v < bins; ++v) total += h[v] = in[v];
  if (clip_q8 != 0) total = shape_histogram(h, bins, total, clip_q8, levels);
  uint32_t cdf = 0;
  for (int v = 0; v < bins; ++v) h[v] = cdf += h[v];  // h becomes the CDF
  for (int v = 0; v < bins; ++v) {
    const uint32_t x = clamp_level(static_cast<uint32_t>(v), levels);
    out[v] = static_cast<uint16_t>(tone::tile_lut_entry(static_cast<uint32_t>(v), h[x], h[levels.lo], static_cast<uint32_t>(total), levels, weight));
  }
}

}  // namespace

Status build_tile_luts(const uint32_t* tile_counts, int tiles, int bins, uint32_t weight, uint32_t clip_q8, const Levels& levels,
                       uint16_t* tile_luts, uint16_t* mean_lut, image::ForkJoin* pool) {
  HISTEQ_TRY(validate_lut_args(bins, weight));
  HISTEQ_TRY(validate_levels(bins, levels));
  if (tile_counts == nullptr || tile_luts == nullptr || tiles < 1) return HISTEQ_ERROR(Code::invalid_argument, "null tile histograms or LUTs");
  // Checked before the threads start, so that they have no error to report.
  for (int t = 0; t < tiles; ++t) {
    uint64_t total = 0;
    for (int v = 0; v < bins; ++v) total += tile_counts[static_cast<size_t>(t) * bins + v];
    if (total >= (uint64_t{1} << 32)) return HISTEQ_ERROR(Code::invalid_argument, "tile histogram of 2^32 samples or more");
  }
  // A tile's clip and shadow-floor search cost several microseconds: one tile is worth a thread.
  image::for_parts(pool, tiles, 1, [&](int t0, int t1) {
    for (int t = t0; t < t1; ++t)
      tile_lut(tile_counts + static_cast<size_t>(t) * bins, bins, weight, clip_q8, levels, tile_luts + static_cast<size_t>(t) * bins);
  });
  if (mean_lut != nullptr) {
    for (int v = 0; v < bins; ++v) {
      uint32_t sum = 0;
      for (int t = 0; t < tiles; ++t) sum += tile_luts[static_cast<size_t>(t) * bins + v];
      mean_lut[v] = static_cast<uint16_t>((sum + static_cast<uint32_t>(tiles) / 2) / static_cast<uint32_t>(tiles));
    }
  }
  return Status::ok();
}

}  // namespace histeq::eq
