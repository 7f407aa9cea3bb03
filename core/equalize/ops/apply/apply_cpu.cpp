// The apply operation on the CPU: the LUT on a plane (an AVX-512 VBMI row path chosen at run time),
// clahe's tile LUTs (the tile rows blended first, AVX2 where the CPU has it) and the colour pass,
// rows over the pool: the truth the GPU side (apply_gpu.cu) is tested against.
#include <cmath>
#include <cstring>
#include <string>
#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#endif
#include <algorithm>
#include <vector>

#include "core/equalize/ops/apply/apply.h"
#include "core/equalize/ops/checks.h"
#include "core/equalize/ops/lut/build_lut.h"
#include "core/equalize/tone.h"
#include "core/image/fork_join.h"

namespace histeq::eq {

namespace {

#if defined(__x86_64__) && defined(__GNUC__)
#define HISTEQ_HAVE_VBMI_PATH 1
// 64 samples per step with AVX-512 VBMI: the 256-entry table sits in four registers; two vpermi2b
// look up the low and high 128 entries by the sample's low 7 bits and bit 7 picks between them.
// About ten times the scalar gather's speed; the export's CPU path spends a few % less on it.
#define HISTEQ_VBMI __attribute__((target("avx512f,avx512bw,avx512vbmi")))
HISTEQ_VBMI inline __m512i lookup64(__m512i v, __m512i t0, __m512i t1, __m512i t2, __m512i t3) {
  const __m512i lo = _mm512_permutex2var_epi8(t0, v, t1);
  const __m512i hi = _mm512_permutex2var_epi8(t2, v, t3);
  return _mm512_mask_blend_epi8(_mm512_movepi8_mask(v), lo, hi);
}

HISTEQ_VBMI void apply_row_vbmi(const uint8_t* in, uint8_t* out, int n, const uint8_t* table) {
  const __m512i t0 = _mm512_loadu_si512(table), t1 = _mm512_loadu_si512(table + 64);
  const __m512i t2 = _mm512_loadu_si512(table + 128), t3 = _mm512_loadu_si512(table + 192);
  int x = 0;
  for (; x + 64 <= n; x += 64)
    _mm512_storeu_si512(out + x, lookup64(_mm512_loadu_si512(in + x), t0, t1, t2, t3));
  if (x < n) {  // the row's tail: masked, so nothing past the row is read or written
    const __mmask64 k = (1ULL << (n - x)) - 1;
    _mm512_mask_storeu_epi8(out + x, k, lookup64(_mm512_maskz_loadu_epi8(k, in + x), t0, t1, t2, t3));
  }
}

bool cpu_has_vbmi() {
  static const bool yes = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
                          __builtin_cpu_supports("avx512vbmi");
  return yes;
}
#else
bool cpu_has_vbmi() { return false; }
#endif

// Rows [y0, y1) through a byte table. The planes come in by value: a byte store may alias anything
// in memory, so a captured reference would be reloaded after every sample.
void apply_rows_u8(const PlaneView<const uint8_t> in, const PlaneView<uint8_t> out, const uint8_t* const table, int y0, int y1) {
  // A copy of our own, whose address never escapes: the compiler knows the row stores leave it be.
  alignas(64) uint8_t t[256];
  std::memcpy(t, table, sizeof(t));
  const int w = out.width;
  for (int y = y0; y < y1; ++y) {
    const uint8_t* const src = in.row(y);
    uint8_t* const dst = out.row(y);
    if (src == dst) {  // in place: the compiler then knows a store never feeds a later load
      for (int x = 0; x < w; ++x) dst[x] = t[dst[x]];
    } else {
      for (int x = 0; x < w; ++x) dst[x] = t[src[x]];
    }
  }
}

template <class T>
Status check_apply_planes(const PlaneView<const T>& in, const PlaneView<T>& p) {
  if (p.memory == MemoryKind::device || in.memory == MemoryKind::device)
    return HISTEQ_ERROR(Code::invalid_argument, "apply_lut needs host planes");
  if (in.width != p.width || in.height != p.height) return HISTEQ_ERROR(Code::invalid_argument, "apply_lut: planes of different sizes");
  if (p.empty()) return Status::ok();
  if (p.data == nullptr || in.data == nullptr) return HISTEQ_ERROR(Code::invalid_argument, "null plane");
  if (p.height > 1 && (p.pitch < p.row_bytes() || in.pitch < in.row_bytes()))
    return HISTEQ_ERROR(Code::invalid_argument, "pitch smaller than a row");
  return Status::ok();
}

// out = lut[in] row by row; `in` may be `p` itself (in place).
template <class T>
Status apply_host(const PlaneView<const T>& in, const PlaneView<T>& p, const uint16_t* lut, int bins, bool allow_simd, int shift = 0,
                  image::ForkJoin* pool = nullptr) {
  HISTEQ_TRY(validate_lut_args(bins, 0));
  if (shift < 0 || shift >= 16 || (sizeof(T) == 1 && shift != 0))
    return HISTEQ_ERROR(Code::invalid_argument, "sample shift out of range");
  HISTEQ_TRY(check_apply_planes(in, p));
  if (p.empty()) return Status::ok();
  if (lut == nullptr) return HISTEQ_ERROR(Code::invalid_argument, "null LUT");
  if constexpr (sizeof(T) == 1) {
    // A byte table covering every 8-bit value: no range test in the inner loop.
    alignas(64) uint8_t table[256];
    for (int v = 0; v < 256; ++v) table[v] = static_cast<uint8_t>(v < bins ? lut[v] : v);
#ifdef HISTEQ_HAVE_VBMI_PATH
    if (allow_simd && cpu_has_vbmi()) {
      image::for_rows(pool, p.height, [&](int y0, int y1) {
        for (int y = y0; y < y1; ++y) apply_row_vbmi(in.row(y), p.row(y), p.width, table);
      });
      return Status::ok();
    }
#endif
    image::for_rows(pool, p.height, [&in, &p, &table](int y0, int y1) { apply_rows_u8(in, p, table, y0, y1); });
  } else {
    (void)allow_simd;
    const uint32_t n = static_cast<uint32_t>(bins);
    const uint32_t low = (1u << shift) - 1u;
    image::for_rows(pool, p.height, [&](int y0, int y1) {
      for (int y = y0; y < y1; ++y) {
        const T* src = in.row(y);
        T* row = p.row(y);
        for (int x = 0; x < p.width; ++x) {
          const uint32_t v = src[x];
          const uint32_t i = v >> shift;
          row[x] = i < n ? static_cast<T>((static_cast<uint32_t>(lut[i]) << shift) | (v & low)) : static_cast<T>(v);
        }
      }
    });
  }
  return Status::ok();
}

}  // namespace

namespace detail {
bool apply_lut_has_simd() { return cpu_has_vbmi(); }
bool apply_row_simd(const uint8_t* in, uint8_t* out, int n, const uint8_t* table) {
#ifdef HISTEQ_HAVE_VBMI_PATH
  if (!cpu_has_vbmi()) return false;
  apply_row_vbmi(in, out, n, table);
  return true;
#else
  (void)in, (void)out, (void)n, (void)table;
  return false;
#endif
}
Status apply_lut_scalar(const PlaneView<uint8_t>& plane, const uint16_t* lut, int bins) {
  return apply_host<uint8_t>(plane, plane, lut, bins, false);
}
}  // namespace detail

Status apply_lut(const PlaneView<uint8_t>& plane, const uint16_t* lut, int bins, image::ForkJoin* pool) {
  return apply_host<uint8_t>(plane, plane, lut, bins, true, 0, pool);
}
Status apply_lut(const PlaneView<uint16_t>& plane, const uint16_t* lut, int bins, int shift, image::ForkJoin* pool) {
  return apply_host<uint16_t>(plane, plane, lut, bins, true, shift, pool);
}
Status apply_lut(const PlaneView<const uint8_t>& in, const PlaneView<uint8_t>& out, const uint16_t* lut, int bins, image::ForkJoin* pool) {
  return apply_host(in, out, lut, bins, true, 0, pool);
}
Status apply_lut(const PlaneView<const uint16_t>& in, const PlaneView<uint16_t>& out, const uint16_t* lut, int bins, int shift,
                 image::ForkJoin* pool) {
  return apply_host(in, out, lut, bins, true, shift, pool);
}

namespace {

#if defined(__x86_64__) && defined(__GNUC__)
// The host loops below compiled for AVX2 where the CPU has it (the build targets baseline x86-64):
// flatten inlines everything they call, so the colour pass's gains and chroma run 4 and 8 wide
// instead of 2 and 4. Integer arithmetic and one IEEE division (AVX2 brings no FMA to contract anything into): the same values as the
// baseline loops.
template <class Pass>
__attribute__((target("avx2"), flatten)) void rows_avx2(const Pass& pass, int y0, int y1) {
  pass.rows(y0, y1);
}
bool cpu_has_avx2() {
  static const bool yes = __builtin_cpu_supports("avx2");
  return yes;
}
// The 8-bit tiled apply's row (256-entry blended LUTs), 8 samples a step with two gathers: the sums
// of apply_tiles_row in 32-bit lanes (< 2^31), rounded and shifted as there. Returns the samples
// done (a multiple of 8); the caller finishes the row.
__attribute__((target("avx2"))) int tiles_row_avx2(const uint8_t* in, uint8_t* row, int width, const uint32_t* xt,
                                                   const uint32_t* blended) {
  const __m256i one = _mm256_set1_epi32(static_cast<int>(tone::kWeightOne)), mask16 = _mm256_set1_epi32(0xFFFF);
  const __m256i mask8 = _mm256_set1_epi32(0xFF), half = _mm256_set1_epi32(1 << (2 * tone::kWeightBits - 1));
  const auto* table = reinterpret_cast<const int*>(blended);
  int x = 0;
  for (; x + 8 <= width; x += 8) {
    const __m256i v = _mm256_cvtepu8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(in + x)));
    const __m256i ex = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(xt + x));
    const __m256i wx = _mm256_and_si256(ex, mask16);
    const __m256i lo = _mm256_add_epi32(_mm256_slli_epi32(_mm256_and_si256(_mm256_srli_epi32(ex, 16), mask8), 8), v);
    const __m256i hi = _mm256_add_epi32(_mm256_slli_epi32(_mm256_srli_epi32(ex, 24), 8), v);
    const __m256i a = _mm256_i32gather_epi32(table, lo, 4), b = _mm256_i32gather_epi32(table, hi, 4);
    const __m256i sum = _mm256_add_epi32(_mm256_mullo_epi32(a, _mm256_sub_epi32(one, wx)), _mm256_mullo_epi32(b, wx));
    const __m256i r = _mm256_srli_epi32(_mm256_add_epi32(sum, half), 2 * tone::kWeightBits);  // <= 255
    const __m128i w16 = _mm_packus_epi32(_mm256_castsi256_si128(r), _mm256_extracti128_si256(r, 1));
    _mm_storel_epi64(reinterpret_cast<__m128i*>(row + x), _mm_packus_epi16(w16, w16));
  }
  return x;
}
#else
int tiles_row_avx2(const uint8_t*, uint8_t*, int, const uint32_t*, const uint32_t*) { return 0; }
template <class Pass>
void rows_avx2(const Pass& pass, int y0, int y1) {
  pass.rows(y0, y1);
}
bool cpu_has_avx2() { return false; }
#endif

// One row of the tiled apply. tone::tile_map's blend is linear with no rounding before the end, so
// the two tile rows can be blended first, per tile column and value (a contiguous pass over the
// LUTs that the compiler vectorises, skipped while the row's entry repeats), leaving two lookups
// and one blend per pixel instead of four lookups and three blends: the same integer sums, so the
// same frames, at a third of the work per pixel.
template <class T>
void apply_tiles_row(const T* in, T* row, int width, const TileLuts& t, uint32_t bins, const uint32_t* blended) {
  using tone::kWeightBits;
  using tone::kWeightOne;
  const int sh = t.shift;
  const uint32_t* xt = t.x_table;
  int x = 0;  // 8-bit samples into 256 entries (all in range): the AVX2 row first where the CPU has it
  if (sizeof(T) == 1 && bins == 256 && cpu_has_avx2())
    x = tiles_row_avx2(reinterpret_cast<const uint8_t*>(in), reinterpret_cast<uint8_t*>(row), width, xt, blended);
  for (; x < width; ++x) {
    const uint32_t v = static_cast<uint32_t>(in[x]) >> sh;
    if (v >= bins) {  // the header's contract: samples outside the LUTs stay (and are never read past)
      row[x] = in[x];
      continue;
    }
    const uint32_t ex = xt[x], wx = tone::axis_w(ex);
    const uint32_t sum = blended[tone::axis_lo(ex) * bins + v] * (kWeightOne - wx) + blended[tone::axis_hi(ex) * bins + v] * wx;
    row[x] = static_cast<T>(((sum + (1u << (2 * kWeightBits - 1))) >> (2 * kWeightBits)) << sh);
  }
}

// The row's tile rows blended by its vertical weight: blended[c * bins + v] = lut_lo(c, v) (1 - wy) +
// lut_hi(c, v) wy, in 1/1024 (at most 1023 * 1024: a 10-bit LUT's largest entry).
inline void blend_tile_rows(const TileLuts& t, uint32_t bins, uint32_t ey, uint32_t* blended) {
  const size_t n = static_cast<size_t>(t.grid.cols) * bins;
  const uint16_t* r0 = t.luts + tone::axis_lo(ey) * n;
  const uint16_t* r1 = t.luts + tone::axis_hi(ey) * n;
  const uint32_t wy = tone::axis_w(ey), wy0 = tone::kWeightOne - wy;
  for (size_t i = 0; i < n; ++i) blended[i] = r0[i] * wy0 + r1[i] * wy;
}

// Rows of the tiled apply from `in` into `p`, each part with its blended tile rows.
template <class T>
struct TileRows {
  PlaneView<const T> in;
  PlaneView<T> p;
  const TileLuts& t;
  uint32_t n;
  void rows(int y0, int y1) const {
    std::vector<uint32_t> blended(static_cast<size_t>(t.grid.cols) * n);
    uint32_t last = 0;
    for (int y = y0; y < y1; ++y) {
      const uint32_t ey = t.y_table[y];
      if (y == y0 || ey != last) blend_tile_rows(t, n, ey, blended.data());
      last = ey;
      apply_tiles_row(in.row(y), p.row(y), p.width, t, n, blended.data());
    }
  }
};

// `in` may be `p` itself (in place).
template <class T>
Status apply_tiles_host(const PlaneView<const T>& in, const PlaneView<T>& p, const TileLuts& t, int bins, image::ForkJoin* pool) {
  HISTEQ_TRY(check_bins(bins));
  HISTEQ_TRY(check_host_plane(p));
  HISTEQ_TRY(check_host_plane(in));
  if (in.width != p.width || in.height != p.height) return HISTEQ_ERROR(Code::invalid_argument, "apply_tiles: planes of different sizes");
  if (p.empty()) return Status::ok();
  if (t.luts == nullptr || t.x_table == nullptr || t.y_table == nullptr) return HISTEQ_ERROR(Code::invalid_argument, "null tile LUTs");
  const TileRows<T> rows{in, p, t, static_cast<uint32_t>(bins)};
  for_rows(pool, p.height, [&rows](int y0, int y1) { rows.rows(y0, y1); });
  return Status::ok();
}

// What colour_rows shares between its loops: the planes, the levels and the map, fixed per frame.
template <class T, class Map>
struct ColourPass {
  PlaneView<T> y, u, v;
  const ChromaPlanes& c;
  Map map;
  int sh = 0, step = 1, cw = 0, ch = 0;
  uint32_t n_bins = 0, neutral = 0, c_lo = 0, c_hi = 0;

  ColourPass(const PlaneView<T>& luma, const ChromaPlanes& cp, int bins, Map m)
      : y(luma), u(cp.planes[0].as_writable<T>()), v(cp.interleaved ? u : cp.planes[1].as_writable<T>()), c(cp), map(m) {
    // P010 (shift 6): everything below works on v >> shift and stores out << shift.
    sh = c.shift;
    const uint32_t depth = static_cast<uint32_t>(y.bit_depth - sh);
    const uint32_t maxval = (1u << depth) - 1;
    neutral = 1u << (depth - 1);
    n_bins = static_cast<uint32_t>(bins);
    c_lo = c.lo;
    c_hi = std::min(c.hi, maxval);
    cw = c.interleaved ? u.width / 2 : u.width;
    ch = u.height;
    step = c.interleaved ? 2 : 1;
  }
  uint32_t mapped(int x, int yy, uint32_t in) const { return sizeof(T) == 1 || in < n_bins ? map(x, yy, in) : in; }
  // The chroma pair at (cx, cy) scaled by the gain of the luma it covers.
  void scale(int cx, int cy, uint32_t sum_in, uint32_t sum_out, uint32_t count) const {
    const uint32_t s = tone::chroma_scale(sum_in, sum_out, count, c.black, c.limit_q12);
    T* su = u.row(cy) + cx * step;
    T* sv = (c.interleaved ? u.row(cy) + 1 : v.row(cy)) + cx * step;
    *su = static_cast<T>(tone::scale_chroma(static_cast<uint32_t>(*su) >> sh, s, neutral, c_lo, c_hi) << sh);
    *sv = static_cast<T>(tone::scale_chroma(static_cast<uint32_t>(*sv) >> sh, s, neutral, c_lo, c_hi) << sh);
  }
  // Any layout: the luma samples of one chroma sample, mapped, then its chroma.
  void block(int cx, int cy) const {
    const int y0 = cy << c.shift_y, y1 = std::min(y.height, (cy + 1) << c.shift_y);
    const int x0 = cx << c.shift_x, x1 = std::min(y.width, (cx + 1) << c.shift_x);
    uint32_t sum_in = 0, sum_out = 0, count = 0;
    for (int yy = y0; yy < y1; ++yy) {
      T* row = y.row(yy);
      for (int xx = x0; xx < x1; ++xx) {
        const uint32_t in = static_cast<uint32_t>(row[xx]) >> sh;
        const uint32_t out = mapped(xx, yy, in);
        row[xx] = static_cast<T>(out << sh);
        sum_in += in;
        sum_out += out;
        ++count;
      }
    }
    if (count > 0) scale(cx, cy, sum_in, sum_out, count);  // none: a chroma sample past the luma
  }
  // 4:2:0 with both luma rows: the four samples without loops (the usual case: most of the CPU
  // path's time). The luma and the sums, then the gains, then the chroma: the last two are
  // branch-free loops the compiler vectorises. Everything the loops read is in locals: a byte store
  // may alias any member, and would make the compiler reload it after every sample.
  void quad_row(int cy, int quads) const {
    T* const r0 = y.row(2 * cy);
    T* const r1 = y.row(2 * cy + 1);
    const Map m = map;
    const int s = sizeof(T) == 1 ? 0 : sh;  // 8-bit samples never sit in high bits: no shifts
    const uint32_t bins = n_bins;
    auto look = [m, bins](int x, int yy, uint32_t v) { return sizeof(T) == 1 || v < bins ? m(x, yy, v) : v; };
    constexpr int kChunk = 256;
    uint32_t sums_in[kChunk], sums_out[kChunk];
    for (int base = 0; base < quads; base += kChunk) {
      const int n = std::min(kChunk, quads - base);
      for (int i = 0; i < n; ++i) {
        const int x = 2 * (base + i);
        const uint32_t a = static_cast<uint32_t>(r0[x]) >> s, b = static_cast<uint32_t>(r0[x + 1]) >> s;
        const uint32_t d = static_cast<uint32_t>(r1[x]) >> s, e = static_cast<uint32_t>(r1[x + 1]) >> s;
        const uint32_t ma = look(x, 2 * cy, a), mb = look(x + 1, 2 * cy, b);
        const uint32_t md = look(x, 2 * cy + 1, d), me = look(x + 1, 2 * cy + 1, e);
        r0[x] = static_cast<T>(ma << s);
        r0[x + 1] = static_cast<T>(mb << s);
        r1[x] = static_cast<T>(md << s);
        r1[x + 1] = static_cast<T>(me << s);
        sums_in[i] = a + b + d + e;
        sums_out[i] = ma + mb + md + me;
      }
      chroma_span(cy, base, n, sums_in, sums_out);
    }
  }
  // Chroma pairs [base, base + n) of row cy (n <= 256), scaled by the gains of their four luma
  // samples' sums in and out: branch-free loops the compiler vectorises.
  void chroma_span(int cy, int base, int n, const uint32_t* sums_in, const uint32_t* sums_out) const {
    const int s = sizeof(T) == 1 ? 0 : sh, st = step;
    const uint32_t black = c.black, limit = c.limit_q12, mid = neutral, lo = c_lo, hi = c_hi;
    uint32_t gain[256];
    for (int i = 0; i < n; ++i) gain[i] = tone::chroma_scale_branchless(sums_in[i], sums_out[i], 4, black, limit);
    T* const pu = u.row(cy) + base * st;
    T* const pv = (c.interleaved ? u.row(cy) + 1 : v.row(cy)) + base * st;
    for (int i = 0; i < n; ++i) {
      pu[i * st] = static_cast<T>(tone::scale_chroma(static_cast<uint32_t>(pu[i * st]) >> s, gain[i], mid, lo, hi) << s);
      pv[i * st] = static_cast<T>(tone::scale_chroma(static_cast<uint32_t>(pv[i * st]) >> s, gain[i], mid, lo, hi) << s);
    }
  }
  void rows(int cy0, int cy1) const {
    const bool quads = c.shift_x == 1 && c.shift_y == 1;
    for (int cy = cy0; cy < cy1; ++cy) {
      int cx = 0;
      if (quads && 2 * cy + 1 < y.height) {
        cx = std::min(cw, y.width / 2);
        quad_row(cy, cx);
      }
      for (; cx < cw; ++cx) block(cx, cy);
    }
  }
};

// The colour pass on 4:2:0 (both luma rows of a chroma row) with the luma mapped a whole row at a
// time by the fast row of the luma's own apply, `RowMap::map(yy, row, n, scratch)`, and each
// block's sums taken before and after: the same values as the pass's per-sample loop, at the
// speed of the luma-only apply (CLAHE: two lookups a sample instead of tile_map's four; a LUT:
// 64 samples a step with AVX-512 VBMI). Other rows and the last column of an odd width go through
// the pass's own block().
template <class T, class Map, class RowMap>
struct RowColourRows {
  const ColourPass<T, Map>& pass;
  RowMap row_map;
  // The four samples' sum of each of n quads from quad `base`, after a shift of s.
  static void quad_sums(T* const r[2], int base, int n, int s, uint32_t* sums) {
    for (int i = 0, x = 2 * base; i < n; ++i, x += 2)
      sums[i] = (static_cast<uint32_t>(r[0][x]) >> s) + (static_cast<uint32_t>(r[0][x + 1]) >> s) +
                (static_cast<uint32_t>(r[1][x]) >> s) + (static_cast<uint32_t>(r[1][x + 1]) >> s);
  }
  void rows(int cy0, int cy1) const {
    const PlaneView<T>& y = pass.y;
    const int s = sizeof(T) == 1 ? 0 : pass.sh, quads = std::min(pass.cw, y.width / 2);
    std::vector<uint32_t> scratch, sums_in(static_cast<size_t>(quads));
    uint32_t sums_out[256];
    for (int cy = cy0; cy < cy1; ++cy) {
      int cx = 0;
      if (pass.c.shift_x == 1 && pass.c.shift_y == 1 && 2 * cy + 1 < y.height) {
        T* const r[2] = {y.row(2 * cy), y.row(2 * cy + 1)};
        quad_sums(r, 0, quads, s, sums_in.data());
        for (int k = 0; k < 2; ++k) row_map.map(2 * cy + k, r[k], 2 * quads, scratch);
        for (int base = 0; base < quads; base += 256) {
          const int n = std::min(256, quads - base);
          quad_sums(r, base, n, s, sums_out);
          pass.chroma_span(cy, base, n, sums_in.data() + base, sums_out);
        }
        cx = quads;
      }
      for (; cx < pass.cw; ++cx) pass.block(cx, cy);
    }
  }
};

// Luma rows through the tiled apply's row (its blended tile rows in the scratch).
template <class T>
struct TiledRowMap {
  const TileLuts& t;
  uint32_t bins;
  void map(int yy, T* row, int n, std::vector<uint32_t>& scratch) const {
    scratch.resize(static_cast<size_t>(t.grid.cols) * bins);
    blend_tile_rows(t, bins, t.y_table[yy], scratch.data());
    apply_tiles_row(row, row, n, t, bins, scratch.data());
  }
};

// 8-bit luma rows through a byte table with the LUT apply's SIMD row (the caller checked it runs).
struct TableRowMap {
  const uint8_t* table;
  void map(int, uint8_t* row, int n, std::vector<uint32_t>&) const { detail::apply_row_simd(row, row, n, table); }
};

template <class T, class Map, class RowMap>
void row_colour_host(const ColourPass<T, Map>& pass, const RowMap& row_map, image::ForkJoin* pool) {
  const RowColourRows<T, Map, RowMap> rows{pass, row_map};
  const bool avx2 = cpu_has_avx2();
  for_rows(pool, pass.ch, [&rows, avx2](int cy0, int cy1) { avx2 ? rows_avx2(rows, cy0, cy1) : rows.rows(cy0, cy1); });
}

template <class T, class Map>
void colour_host(const PlaneView<T>& y, const ChromaPlanes& c, int bins, Map map, image::ForkJoin* pool) {
  // Chroma rows over the pool's threads: each covers its own luma rows, so they share nothing.
  const ColourPass<T, Map> pass(y, c, bins, map);
  const bool avx2 = cpu_has_avx2();
  for_rows(pool, pass.ch, [&pass, avx2](int cy0, int cy1) { avx2 ? rows_avx2(pass, cy0, cy1) : pass.rows(cy0, cy1); });
}

template <class T>
Status apply_colour_host(const PlaneRef& luma, const ChromaPlanes& c, const uint16_t* lut, const TileLuts* tiles, int bins,
                         image::ForkJoin* pool) {
  const PlaneView<T> y = luma.as_writable<T>();
  HISTEQ_TRY(check_host_plane(y));
  for (int i = 0; i < (c.interleaved ? 1 : 2); ++i) {
    const PlaneRef& p = c.planes[i];
    if (p.bytes_per_sample != luma.bytes_per_sample || p.on_device() || (p.data == nullptr && p.samples() > 0))
      return HISTEQ_ERROR(Code::invalid_argument, "chroma planes must be host planes of the luma's sample size");
  }
  if (y.empty()) return Status::ok();
  if (tiles != nullptr) {
    auto map = [tiles, bins](int x, int yy, uint32_t v) {
      return tone::tile_map(tiles->luts, tiles->grid.cols, bins, tiles->x_table[x], tiles->y_table[yy], v);
    };
    // The row path wherever its samples outside the LUTs are block()'s: all 8-bit samples in
    // range (256 entries) or 16-bit ones, with the tiles' shift the chroma's.
    if ((sizeof(T) == 2 || bins == 256) && tiles->shift == c.shift) {
      row_colour_host(ColourPass<T, decltype(map)>(y, c, bins, map), TiledRowMap<T>{*tiles, static_cast<uint32_t>(bins)}, pool);
    } else {
      colour_host(y, c, bins, map, pool);
    }
  } else if constexpr (sizeof(T) == 1) {
    // A byte table for every 8-bit value: one load a sample, no range test.
    alignas(64) uint8_t table[256];
    for (int v = 0; v < 256; ++v) table[v] = static_cast<uint8_t>(v < bins ? lut[v] : v);
    // The table by value: each loop's copy is its own, which no store of theirs can alias.
    auto map = [table](int, int, uint32_t v) { return static_cast<uint32_t>(table[v]); };
    // With the SIMD row (VBMI) the luma goes a row at a time; without, the per-sample loop is faster
    // than a separate scalar pass.
    if (detail::apply_lut_has_simd())
      row_colour_host(ColourPass<uint8_t, decltype(map)>(y, c, bins, map), TableRowMap{table}, pool);
    else
      colour_host(y, c, bins, map, pool);
  } else {
    colour_host(y, c, bins, [lut](int, int, uint32_t v) { return static_cast<uint32_t>(lut[v]); }, pool);
  }
  return Status::ok();
}

}  // namespace

void axis_table(int size, int n, uint32_t* table, int step) {
  for (int x = 0; x < size; ++x) table[x] = tone::axis_entry(x, n, size, step);
}

Status apply_tiles(const PlaneView<uint8_t>& plane, const TileLuts& t, int bins, image::ForkJoin* pool) {
  return apply_tiles_host<uint8_t>(plane, plane, t, bins, pool);
}
Status apply_tiles(const PlaneView<uint16_t>& plane, const TileLuts& t, int bins, image::ForkJoin* pool) {
  return apply_tiles_host<uint16_t>(plane, plane, t, bins, pool);
}
Status apply_tiles(const PlaneView<const uint8_t>& in, const PlaneView<uint8_t>& out, const TileLuts& t, int bins, image::ForkJoin* pool) {
  return apply_tiles_host(in, out, t, bins, pool);
}
Status apply_tiles(const PlaneView<const uint16_t>& in, const PlaneView<uint16_t>& out, const TileLuts& t, int bins,
                   image::ForkJoin* pool) {
  return apply_tiles_host(in, out, t, bins, pool);
}

Status apply_colour(const PlaneRef& luma, const ChromaPlanes& chroma, const uint16_t* lut, const TileLuts* tiles, int bins,
                    image::ForkJoin* pool) {
  HISTEQ_TRY(check_bins(bins));
  if (tiles == nullptr && lut == nullptr) return HISTEQ_ERROR(Code::invalid_argument, "null LUT");
  if (luma.bytes_per_sample == 1) return apply_colour_host<uint8_t>(luma, chroma, lut, tiles, bins, pool);
  return apply_colour_host<uint16_t>(luma, chroma, lut, tiles, bins, pool);
}

}  // namespace histeq::eq
