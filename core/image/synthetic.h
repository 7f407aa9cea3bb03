// Synthetic test content, identical on host and device (the same functions compile for both), so
// that a bench can fill gigabytes on the GPU and a test can fill the same picture on the CPU.
//
//   uniform     every sample independent and uniform over [0, 2^bit_depth)
//   degenerate  every sample the same value (never zero by default: zeros hide unwritten output)
//   natural     smooth, spatially correlated value noise (three octaves) with a skewed tone curve
//               and a little per-pixel noise: a stand-in for photographs
//   gaussian    independent samples, approximately normal around the middle of the range with
//               standard deviation `value` (in sample units; Irwin-Hall sum of four uniforms),
//               clamped to the range; value 0 is one value (Xu et al., figure 9's sweep)
//   colours     `value` distinct values spread evenly over the range, each equally likely
//               (the course report's 1, 2, 5, 256 colour sweep)
//
// Pure functions of (x, y, seed): no state, thread-safe.
#pragma once

#include <cstdint>
#include <string>

#include "core/cuda/hd.h"
#include "core/cuda/status.h"
#include "core/image/plane.h"


namespace histeq::synth {

enum class Pattern { uniform, degenerate, natural, gaussian, colours };

const char* pattern_name(Pattern p) noexcept;
Result<Pattern> parse_pattern(const std::string& name);

HISTEQ_HD uint32_t hash32(uint32_t x) {
  // lowbias32 (Chris Wellons): a well-mixed 32-bit integer hash.
  x ^= x >> 16;
  x *= 0x7feb352dU;
  x ^= x >> 15;
  x *= 0x846ca68bU;
  x ^= x >> 16;
  return x;
}

HISTEQ_HD uint32_t hash_xy(uint32_t x, uint32_t y, uint32_t seed) {
  return hash32(x ^ hash32(y ^ hash32(seed)));
}

// Value noise at one octave, in 16-bit fixed point [0, 65535]: smoothstep interpolation of hashed
// lattice values. Integer arithmetic only, so host and device give bit-identical pictures (floats
// would not: nvcc contracts to FMA, the host compiler does not).
HISTEQ_HD int64_t value_noise_q16(uint32_t x, uint32_t y, uint32_t cell, uint32_t seed) {
  const uint32_t cx = x / cell, cy = y / cell;
  const int64_t fx = (static_cast<int64_t>(x % cell) << 16) / cell, fy = (static_cast<int64_t>(y % cell) << 16) / cell;
  const int64_t sx = (fx * fx >> 16) * (3 * 65536 - 2 * fx) >> 32, sy = (fy * fy >> 16) * (3 * 65536 - 2 * fy) >> 32;
  const int64_t a = hash_xy(cx, cy, seed) >> 16, b = hash_xy(cx + 1, cy, seed) >> 16;
  const int64_t c = hash_xy(cx, cy + 1, seed) >> 16, d = hash_xy(cx + 1, cy + 1, seed) >> 16;
  const int64_t top = a + ((b - a) * sx >> 16), bottom = c + ((d - c) * sx >> 16);
  return top + ((bottom - top) * sy >> 16);
}

// One sample of `pattern` at (x, y), in [0, 2^bit_depth).
HISTEQ_HD uint32_t sample(Pattern pattern, uint32_t x, uint32_t y, uint32_t seed, int bit_depth, uint32_t value) {
  const uint32_t maxval = (1u << bit_depth) - 1u;
  switch (pattern) {
    case Pattern::uniform: return hash_xy(x, y, seed) & maxval;
    case Pattern::degenerate: return value & maxval;
    case Pattern::gaussian: {
      // Sum of four 16-bit uniforms: mean 2^17, standard deviation 65536 * sqrt(4/12) ~= 37837.
      const uint32_t h1 = hash_xy(x, y, seed), h2 = hash_xy(x, y, seed + 7);
      const int64_t sum = static_cast<int64_t>(h1 & 0xFFFF) + (h1 >> 16) + (h2 & 0xFFFF) + (h2 >> 16) - 131070;
      int64_t v = static_cast<int64_t>((maxval + 1) / 2) + sum * static_cast<int64_t>(value) / 37837;
      v = v < 0 ? 0 : (v > static_cast<int64_t>(maxval) ? static_cast<int64_t>(maxval) : v);
      return static_cast<uint32_t>(v);
    }
    case Pattern::colours: {
      const uint32_t n = value == 0 ? 1u : (value > maxval + 1 ? maxval + 1 : value);
      const uint32_t k = hash_xy(x, y, seed) % n;
      return static_cast<uint32_t>((static_cast<uint64_t>(k) * (maxval + 1)) / n);
    }
    case Pattern::natural:
    default: {
      int64_t v = (60 * value_noise_q16(x, y, 256, seed) + 28 * value_noise_q16(x, y, 48, seed + 1) +
                   12 * value_noise_q16(x, y, 9, seed + 2)) / 100;
      // Skew towards the dark end, as many photographs are: v * v * (1.4 - 0.4 v).
      v = ((v * v) >> 16) * (91750 - v * 2 / 5) >> 16;
      v += (static_cast<int64_t>(hash_xy(x, y, seed + 3) & 0xFFFF) - 32768) * 3 / 100;  // +-1.5% noise
      v = v < 0 ? 0 : (v > 65535 ? 65535 : v);
      return static_cast<uint32_t>((v * maxval + 32768) >> 16);
    }
  }
}

// Fills a host plane (pageable or pinned). Uses all cores for large planes.
Status fill_host(PlaneView<uint8_t> p, Pattern pattern, uint32_t seed, uint32_t value = 77);
Status fill_host(PlaneView<uint16_t> p, Pattern pattern, uint32_t seed, uint32_t value = 77);

// Fills a device plane on `stream` with exactly the samples fill_host would write. Padding bytes
// between rows get a marker value, so a kernel that reads them miscounts visibly.
Status fill_device(PlaneView<uint8_t> p, Pattern pattern, uint32_t seed, uint32_t value = 77, cudaStream_t stream = nullptr);
Status fill_device(PlaneView<uint16_t> p, Pattern pattern, uint32_t seed, uint32_t value = 77, cudaStream_t stream = nullptr);

}  // namespace histeq::synth
