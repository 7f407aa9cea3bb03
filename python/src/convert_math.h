// The sample conversions of the module's frames, one definition for the host loops (convert.cpp)
// and the CUDA kernels (convert_gpu.cu), so that a frame converts to the same samples wherever it
// is. The formulas are the contract docs/api.md states:
//
//  - uint8 BGR/RGB <-> full-range BT.601 YCbCr (8-bit 4:4:4), as OpenCV's COLOR_BGR2YCrCb and back:
//    14-bit fixed-point coefficients 0.299, 0.587, 0.114 (Y), 0.713 (Cr), 0.564 (Cb) and back
//    1.403, -0.714, -0.344, 1.773, each product rounded half up, results saturated to 0..255;
//  - uint16 with `bits` significant bits <-> 10-bit: y = round(v * 1023 / (2^bits - 1)) and back
//    v = round(y * (2^bits - 1) / 1023) (bits 10: unchanged);
//  - float in [0, 1] <-> 10-bit: y = round(x * 1023), x = y / 1023;
//  - uint16 / float colour: the same YCbCr in real numbers on [0, 1] (Cb, Cr centred on 0.5), each
//    component quantized to 10 bits as a float sample is, and back through the inverse matrix,
//    clamped to [0, 1].
#pragma once

#include <cstdint>

// Host-and-device inline, defined here rather than taken from core/cuda/hd.h: the module is a front
// end and includes only the public API's headers and its own (tests/docs/check_layers.py).
#ifdef __CUDACC__
#define HISTEQ_PY_HD __host__ __device__ __forceinline__
#else
#define HISTEQ_PY_HD inline
#endif

namespace histeq::py::cvt {

enum class Sample : int { u8 = 0, u16 = 1, f16 = 2, f32 = 3, f64 = 4 };

// numpy's name of a sample type.
inline const char* sample_name(Sample s) {
  switch (s) {
    case Sample::u8: return "uint8";
    case Sample::u16: return "uint16";
    case Sample::f16: return "float16";
    case Sample::f32: return "float32";
    case Sample::f64: return "float64";
  }
  return "?";
}

HISTEQ_PY_HD int clamp_int(int v, int lo, int hi) { return v < lo ? lo : v > hi ? hi : v; }
HISTEQ_PY_HD float clamp01(float v) { return v < 0.f ? 0.f : v > 1.f ? 1.f : v; }

// IEEE half <-> float by their bits (no CUDA header on the host side; round to nearest even).
HISTEQ_PY_HD float half_to_float(uint16_t h) {
  const uint32_t sign = (h & 0x8000u) << 16, e = (h >> 10) & 0x1fu, m = h & 0x3ffu;
  float v;
  if (e == 0) {
    v = static_cast<float>(m) * (1.f / 16777216.f);  // subnormal: m * 2^-24
  } else if (e == 31) {
    union { uint32_t u; float f; } b{sign | 0x7f800000u | (m << 13)};
    return b.f;
  } else {
    union { uint32_t u; float f; } b{((e + 112u) << 23) | (m << 13)};
    v = b.f;
  }
  return sign ? -v : v;
}
HISTEQ_PY_HD uint16_t float_to_half(float f) {
  // Only values in [0, 1] reach here (results of the conversions): normal or subnormal positives.
  if (!(f > 0.f)) return 0;
  if (f >= 65504.f) return 0x7bffu;
  union { float f; uint32_t u; } b{f};
  const int e = static_cast<int>((b.u >> 23) & 0xffu) - 127 + 15;
  uint32_t m = b.u & 0x7fffffu;
  if (e <= 0) {  // subnormal half
    m |= 0x800000u;
    const int shift = 14 - e;
    if (shift > 24) return 0;
    uint32_t r = m >> shift;
    const uint32_t rest = m & ((1u << shift) - 1), half = 1u << (shift - 1);
    if (rest > half || (rest == half && (r & 1u))) ++r;
    return static_cast<uint16_t>(r);
  }
  uint32_t r = (static_cast<uint32_t>(e) << 10) | (m >> 13);
  const uint32_t rest = m & 0x1fffu;
  if (rest > 0x1000u || (rest == 0x1000u && (r & 1u))) ++r;  // may carry into the exponent: still right
  return static_cast<uint16_t>(r);
}

// A sample of type `s` at `p` as a real number on [0, 1] (uint16: over 2^bits - 1; uint8: 255).
HISTEQ_PY_HD float unit_value(const void* p, Sample s, int bits) {
  switch (s) {
    case Sample::u8: return static_cast<float>(*static_cast<const uint8_t*>(p)) * (1.f / 255.f);
    case Sample::u16: return static_cast<float>(*static_cast<const uint16_t*>(p)) / static_cast<float>((1 << bits) - 1);
    case Sample::f16: return half_to_float(*static_cast<const uint16_t*>(p));
    case Sample::f32: return *static_cast<const float*>(p);
    case Sample::f64: return static_cast<float>(*static_cast<const double*>(p));
  }
  return 0.f;
}
HISTEQ_PY_HD void put_unit_value(void* p, Sample s, int bits, float v) {
  v = clamp01(v);
  switch (s) {
    case Sample::u8: *static_cast<uint8_t*>(p) = static_cast<uint8_t>(v * 255.f + 0.5f); break;
    case Sample::u16:
      *static_cast<uint16_t*>(p) = static_cast<uint16_t>(v * static_cast<float>((1 << bits) - 1) + 0.5f);
      break;
    case Sample::f16: *static_cast<uint16_t*>(p) = float_to_half(v); break;
    case Sample::f32: *static_cast<float*>(p) = v; break;
    case Sample::f64: *static_cast<double*>(p) = static_cast<double>(v); break;
  }
}

// ---- one plane: a sample <-> the work plane's (8-bit for uint8, else 10-bit) -------------------

HISTEQ_PY_HD uint16_t to_ten_bits(const void* p, Sample s, int bits) {
  if (s == Sample::u16) {
    const uint32_t v = *static_cast<const uint16_t*>(p);
    if (bits == 10) return static_cast<uint16_t>(v);
    const uint32_t m = (1u << bits) - 1;
    return static_cast<uint16_t>((v * 1023u + (m >> 1)) / m);
  }
  if (s == Sample::f64) {  // in double: x * 1023 exactly as the caller's numbers have it
    const double x = *static_cast<const double*>(p);
    return static_cast<uint16_t>(clamp_int(static_cast<int>(x * 1023.0 + 0.5), 0, 1023));
  }
  return static_cast<uint16_t>(clamp_int(static_cast<int>(unit_value(p, s, bits) * 1023.f + 0.5f), 0, 1023));
}
HISTEQ_PY_HD void from_ten_bits(void* p, Sample s, int bits, uint32_t y) {
  if (s == Sample::u16) {
    const uint32_t m = (1u << bits) - 1;
    *static_cast<uint16_t*>(p) = static_cast<uint16_t>(bits == 10 ? y : (y * m + 511u) / 1023u);
  } else if (s == Sample::f64) {
    *static_cast<double*>(p) = static_cast<double>(y) / 1023.0;
  } else {
    put_unit_value(p, s, bits, static_cast<float>(y) / 1023.f);
  }
}

// ---- colour: uint8 as OpenCV's fixed point -----------------------------------------------------

constexpr int kShift = 14;
HISTEQ_PY_HD int descale(int x) { return (x + (1 << (kShift - 1))) >> kShift; }

// R, G, B -> Y, Cb, Cr (the planes' order: Y, U = Cb, V = Cr).
HISTEQ_PY_HD void rgb8_to_ycbcr(int r, int g, int b, uint8_t& y, uint8_t& cb, uint8_t& cr) {
  const int yy = descale(r * 4899 + g * 9617 + b * 1868);
  y = static_cast<uint8_t>(clamp_int(yy, 0, 255));
  cr = static_cast<uint8_t>(clamp_int(descale((r - yy) * 11682 + (128 << kShift)), 0, 255));
  cb = static_cast<uint8_t>(clamp_int(descale((b - yy) * 9241 + (128 << kShift)), 0, 255));
}
HISTEQ_PY_HD void ycbcr8_to_rgb(int y, int cb, int cr, uint8_t& r, uint8_t& g, uint8_t& b) {
  cb -= 128;
  cr -= 128;
  r = static_cast<uint8_t>(clamp_int(y + descale(cr * 22987), 0, 255));
  g = static_cast<uint8_t>(clamp_int(y + descale(cr * -11698 + cb * -5636), 0, 255));
  b = static_cast<uint8_t>(clamp_int(y + descale(cb * 29049), 0, 255));
}

// ---- colour: real numbers, 10-bit planes -------------------------------------------------------

HISTEQ_PY_HD uint16_t ten_bits(float v) { return static_cast<uint16_t>(clamp_int(static_cast<int>(v * 1023.f + 0.5f), 0, 1023)); }

HISTEQ_PY_HD void rgb_to_ycbcr10(float r, float g, float b, uint16_t& y, uint16_t& cb, uint16_t& cr) {
  const float yy = 0.299f * r + 0.587f * g + 0.114f * b;
  y = ten_bits(yy);
  cr = ten_bits((r - yy) * 0.713f + 0.5f);
  cb = ten_bits((b - yy) * 0.564f + 0.5f);
}
HISTEQ_PY_HD void ycbcr10_to_rgb(uint32_t y, uint32_t cb, uint32_t cr, float& r, float& g, float& b) {
  const float yy = static_cast<float>(y) / 1023.f, u = static_cast<float>(cb) / 1023.f - 0.5f,
              v = static_cast<float>(cr) / 1023.f - 0.5f;
  r = clamp01(yy + 1.403f * v);
  g = clamp01(yy - 0.714f * v - 0.344f * u);
  b = clamp01(yy + 1.773f * u);
}

}  // namespace histeq::py::cvt
