// CPU side of the picture-quality controls: the loops of tone.h's formulas, the truth the GPU side
// (quality_gpu.cu) is tested against.
#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#endif
#include <algorithm>
#include <vector>

#include "core/equalize/equalize.h"
#include "core/equalize/tone.h"
#include "core/image/fork_join.h"

namespace histeq::eq {
namespace {

Status check_bins(int bins) {
  if (hist::bins_log2(bins) < 1 || bins > kMaxBins) return HISTEQ_ERROR(Code::invalid_argument, "LUT size must be a power of two in 2..1024");
  return Status::ok();
}

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

template <class T>
Status check_host_plane(const PlaneView<T>& p) {
  if (p.memory == MemoryKind::device) return HISTEQ_ERROR(Code::invalid_argument, "a host plane is needed");
  if (!p.empty() && p.data == nullptr) return HISTEQ_ERROR(Code::invalid_argument, "null plane");
  if (p.height > 1 && p.pitch < p.row_bytes()) return HISTEQ_ERROR(Code::invalid_argument, "pitch smaller than a row");
  return Status::ok();
}

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

Status sum_tiles(const uint32_t* tile_counts, int tiles, int bins, uint32_t* counts) {
  HISTEQ_TRY(check_bins(bins));
  if (tile_counts == nullptr || counts == nullptr || tiles < 1) return HISTEQ_ERROR(Code::invalid_argument, "null histograms");
  std::fill(counts, counts + bins, 0u);
  for (int t = 0; t < tiles; ++t)
    for (int v = 0; v < bins; ++v) counts[v] += tile_counts[static_cast<size_t>(t) * bins + v];
  return Status::ok();
}

void axis_table(int size, int n, uint32_t* table, int step) {
  for (int x = 0; x < size; ++x) table[x] = tone::axis_entry(x, n, size, step);
}

Status check_pad(const PlaneRef& in, const PlaneRef& out, MemoryKind memory) {
  if (in.data == nullptr || out.data == nullptr) return HISTEQ_ERROR(Code::invalid_argument, "pad_reflect: null plane");
  if (in.memory != memory || out.memory != memory) return HISTEQ_ERROR(Code::invalid_argument, "pad_reflect: planes in the wrong memory");
  if (in.bytes_per_sample != out.bytes_per_sample || (in.bytes_per_sample != 1 && in.bytes_per_sample != 2))
    return HISTEQ_ERROR(Code::invalid_argument, "pad_reflect: samples of different or unknown sizes");
  if (in.width < 1 || in.height < 1 || out.width < in.width || out.height < in.height)
    return HISTEQ_ERROR(Code::invalid_argument, "pad_reflect: the padded plane is smaller than the picture");
  return Status::ok();
}

namespace {
template <class T>
void pad_rows(const PlaneView<const T>& in, const PlaneView<T>& out) {
  for (int y = 0; y < out.height; ++y) {
    const T* src = in.row(tone::reflect_101(y, in.height));
    T* dst = out.row(y);
    std::copy(src, src + in.width, dst);
    for (int x = in.width; x < out.width; ++x) dst[x] = src[tone::reflect_101(x, in.width)];
  }
}
}  // namespace

Status pad_reflect(const PlaneRef& in, const PlaneRef& out) {
  HISTEQ_TRY(check_pad(in, out, MemoryKind::host));
  if (in.bytes_per_sample == 1) pad_rows(in.as<uint8_t>(), out.as_writable<uint8_t>());
  else pad_rows(in.as<uint16_t>(), out.as_writable<uint16_t>());
  return Status::ok();
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

Status check_temporal_args(const TemporalArgs& a, bool counts_in) {
  HISTEQ_TRY(check_bins(a.bins));
  if ((counts_in && a.counts == nullptr) || a.luts == nullptr || a.state == nullptr || a.next_hist == nullptr || a.next_scalars == nullptr ||
      (!a.restart && (a.prev_hist == nullptr || a.prev_scalars == nullptr)) || a.count < 1)
    return HISTEQ_ERROR(Code::invalid_argument, "temporal filter: null buffer");
  if (a.extra == nullptr && a.count != 1)
    return HISTEQ_ERROR(Code::invalid_argument, "temporal filter: several LUTs need the extra (mean) one");
  return validate_levels(a.bins, a.levels);
}

namespace {

// Levels a part of the temporal filter's per-level loops takes at least: 16 int32 states are a
// cache line, so parts of a state row never share one.
constexpr int kLevelsPerPart = 16;
// LUT entries (LUTs x levels) below which the filter stays on the caller's thread.
constexpr size_t kPooledEntries = 4096;

// Levels [0, bins) in parts over the pool, each a whole number of kLevelsPerPart (bins < 16: one part).
template <class F>
void for_levels(image::ForkJoin* pool, int bins, const F& f) {
  const int group = std::min(bins, kLevelsPerPart);
  image::for_parts(pool, bins / group, 1, [&](int g0, int g1) { f(g0 * group, g1 * group); });
}

// The states of every LUT stepped towards this frame's LUTs (or started over at a cut), levels [v0, v1).
void step_levels(const TemporalArgs& a, bool cut, int luts, int v0, int v1) {
  const size_t bins = static_cast<size_t>(a.bins);
  for (int k = 0; k < luts; ++k) {
    const uint16_t* lut = k < a.count ? a.luts + k * bins : a.extra;
    int32_t* state = a.state + k * bins;
    for (int v = v0; v < v1; ++v) state[v] = cut ? tone::temporal_start(lut[v]) : tone::temporal_step(state[v], lut[v], a.alpha_q16);
  }
}

// The LUTs [k0, k1) from their states and the brightness offset c.
void put_luts(const TemporalArgs& a, int32_t c, int k0, int k1) {
  const size_t bins = static_cast<size_t>(a.bins);
  const int bins_log2 = tone::log2_pow2(a.bins);
  for (int k = k0; k < k1; ++k) {
    uint16_t* lut = k < a.count ? a.luts + k * bins : a.extra;
    const int32_t* state = a.state + k * bins;
    for (int v = 0; v < a.bins; ++v) lut[v] = static_cast<uint16_t>(tone::temporal_entry_log2(state[v], c, v, bins_log2, a.levels));
  }
}

// The output's mean luma for an offset (tone.h: the brightness), measured on the entries the filter
// puts out: the reference LUT's weighted by the frame's histogram, or in clahe mode every tile's
// weighted by its own tile's (each rounded as it will be applied: rounding every tile's entry
// rather than one mean curve's keeps the hold's measure within about 0.01 of a level of the
// output's on the dark pans of docs/quality.md, where one curve's rounding missed it by up to 0.2
// and the hold turned that error into flicker). The terms of the entries that weigh something are
// taken once, each LUT's in its own slot; the search (last_at_most) walks them once more for the
// levels they pass within its range and then narrows the range on those alone, where bisection
// would measure them all a dozen times and more (64 tiles x 256 entries: 700 us a frame on 16
// cores, against 48 for the whole filter before). The walks over the entries go over the pool by
// LUTs; the sums are integers, so the parts' order does not matter.
class Measure {
 public:
  Measure(const TemporalArgs& a, uint64_t total, image::ForkJoin* pool)
      : pool_(pool), total_(total), bins_(a.bins), ramp_log2_(tone::ramp_log2(tone::log2_pow2(a.bins))) {
    const bool tiles = a.tile_counts != nullptr && a.extra != nullptr;
    luts_ = tiles ? a.count : 1;
    const size_t first = tiles ? 0 : static_cast<size_t>(a.extra != nullptr ? a.count : 0);  // the reference LUT
    const size_t slots = static_cast<size_t>(luts_) * a.bins;
    if (h_.size() < slots) h_.resize(slots), terms_.resize(slots);
    if (n_.size() < static_cast<size_t>(luts_)) n_.resize(luts_), part_.resize(luts_), steps_.resize(luts_);
    const int bins_log2 = tone::log2_pow2(a.bins);
    each([&](int k) {
      const uint32_t* h = tiles ? a.tile_counts + static_cast<size_t>(k) * a.bins : a.counts;
      const int32_t* state = a.state + (first + static_cast<size_t>(k)) * a.bins;
      const size_t at = static_cast<size_t>(k) * a.bins;
      size_t n = 0;
      for (int v = 0; v < a.bins; ++v) {  // every entry written, kept when it weighs: no branch
        h_[at + n] = h[v];
        terms_[at + n] = tone::entry_terms(state[v], v, bins_log2, a.levels);
        n += h[v] != 0;
      }
      n_[k] = n;
    });
  }
  int32_t mean(int32_t off) const {
    if (!have_last_ || off != last_off_) {  // the offset limit_offset returns is often the one it measured first
      each([&](int k) { part_[k] = sum(k, off); });
      last_sum_ = total_parts();
      last_off_ = off;
      have_last_ = true;
    }
    return tone::mean_q12(last_sum_, total_);
  }
  // tone::limit_offset's search: the largest c in [a, b) with mean(c) <= t, given mean(a) <= t < mean(b).
  int32_t last_at_most(int32_t a, int32_t b, int32_t t) const {
    each([&](int k) { part_[k] = steps(k, a, b); });
    return narrow(a, b, tone::sum_at_most(t, total_) - total_parts());
  }

 private:
  struct Step {
    int32_t c;
    uint32_t h;
  };
  template <class F>
  void each(const F& f) const {
    image::for_parts(pool_, luts_, 4, [&](int k0, int k1) {
      for (int k = k0; k < k1; ++k) f(k);
    });
  }
  uint64_t total_parts() const {
    uint64_t all = 0;
    for (int k = 0; k < luts_; ++k) all += part_[k];
    return all;
  }
  // The sum of h x entry at `off` over LUT k's entries.
  uint64_t sum(int k, int32_t off) const {
    const size_t at = static_cast<size_t>(k) * bins_;
    uint64_t total = 0;
    for (size_t i = at; i < at + n_[k]; ++i) total += static_cast<uint64_t>(h_[i]) * tone::entry_at(terms_[i], off, ramp_log2_);
    return total;
  }
  // LUT k's levels passed in (a, b], at the offsets where its entries reach them, with their weights,
  // into steps_[k]; returns its sum at a.
  uint64_t steps(int k, int32_t a, int32_t b) const {
    std::vector<Step>& out = steps_[k];
    out.clear();
    const size_t at = static_cast<size_t>(k) * bins_;
    uint64_t sum_a = 0;
    for (size_t i = at; i < at + n_[k]; ++i) {
      const tone::EntryTerms& te = terms_[i];
      const uint32_t ea = tone::entry_at(te, a, ramp_log2_), eb = tone::entry_at(te, b, ramp_log2_);
      sum_a += static_cast<uint64_t>(h_[i]) * ea;
      for (uint32_t v = ea + 1; v <= eb; ++v) out.push_back({tone::entry_threshold(te, v, ramp_log2_), h_[i]});
    }
    return sum_a;
  }
  // The largest c in [lo, hi) whose steps at or before it weigh at most `budget`, given that all of
  // (lo, hi]'s weigh more: kBuckets ways a round over the steps still within range (gathered into
  // steps_[0] after the first).
  int32_t narrow(int32_t lo, int32_t hi, uint64_t budget) const {
    constexpr int kBuckets = 1024;
    uint64_t bucket[kBuckets];
    for (int round = 0; hi - lo > 1; ++round) {
      const int64_t width = (static_cast<int64_t>(hi) - lo + kBuckets - 1) / kBuckets;
      std::fill(bucket, bucket + kBuckets, 0);
      const int lists = round == 0 ? luts_ : 1;
      for (int k = 0; k < lists; ++k)
        for (const Step& st : steps_[k]) bucket[(st.c - static_cast<int64_t>(lo) - 1) / width] += st.h;
      int j = 0;
      for (; bucket[j] <= budget; ++j) budget -= bucket[j];  // they weigh more than budget: some bucket passes it
      const int64_t nlo = lo + j * width;
      hi = static_cast<int32_t>(std::min<int64_t>(hi, nlo + width));
      lo = static_cast<int32_t>(nlo);
      std::vector<Step>& kept = steps_[0];
      size_t n = 0;
      for (int k = 0; k < lists; ++k)
        for (size_t i = 0; i < steps_[k].size(); ++i) {
          const Step st = steps_[k][i];  // n <= i while k == 0: the list compacts in place
          if (st.c > lo && st.c <= hi) {
            if (n < kept.size()) kept[n] = st;
            else kept.push_back(st);
            ++n;
          }
        }
      kept.resize(n);
    }
    return lo;
  }
  // The caller thread's, reused frame after frame (the pool's threads write into it): each LUT's
  // slot of bins entries (weights and terms; the first n[k] in use), a sum per LUT, and the
  // search's steps.
  struct Storage {
    std::vector<uint32_t> h;
    std::vector<tone::EntryTerms> terms;
    std::vector<size_t> n;
    std::vector<uint64_t> part;
    std::vector<std::vector<Step>> steps;
  };
  static Storage& storage() {
    thread_local Storage s;
    return s;
  }
  Storage& st_ = storage();
  std::vector<uint32_t>& h_ = st_.h;
  std::vector<tone::EntryTerms>& terms_ = st_.terms;
  std::vector<size_t>& n_ = st_.n;
  std::vector<uint64_t>& part_ = st_.part;
  std::vector<std::vector<Step>>& steps_ = st_.steps;
  mutable bool have_last_ = false;
  mutable int32_t last_off_ = 0;
  mutable uint64_t last_sum_ = 0;
  image::ForkJoin* pool_;
  int luts_ = 1;
  uint64_t total_;
  int bins_;
  int ramp_log2_;
};

// The frame's brightness offset (tone::limit_offset).
int32_t brightness_offset(const TemporalArgs& a, const Measure& u, int32_t m, bool free) {
  if (free) return 0;
  const int32_t d = m > a.prev_scalars[2] ? m - a.prev_scalars[2] : a.prev_scalars[2] - m;
  auto u_of = [&u](int32_t off) { return u.mean(off); };
  auto search = [&u](int32_t lo, int32_t hi, int32_t t) { return u.last_at_most(lo, hi, t); };
  return tone::limit_offset(u_of, search, a.prev_scalars[0], a.alpha_q16, a.prev_scalars[1] - d, a.prev_scalars[1] + d,
                            tone::max_offset(a.bins));
}

}  // namespace

// The per-LUT loops (65 LUTs of bins levels in clahe 8x8: most of a frame's filter) go over the
// pool; the brightness search stays on the caller (a few dozen means of one LUT's levels).
Status temporal_update(const TemporalArgs& a, image::ForkJoin* pool) {
  HISTEQ_TRY(check_temporal_args(a));
  const int bins = a.bins;
  uint64_t total = 0, sum_hv = 0;
  for (int v = 0; v < bins; ++v) {
    total += a.counts[v];
    sum_hv += static_cast<uint64_t>(a.counts[v]) * static_cast<uint64_t>(v);
  }
  const int32_t m = tone::mean_q12(sum_hv, total);
  uint32_t diff = 0;
  for (int v = 0; v < bins; ++v) {
    const uint32_t p = tone::normalized_bin(a.counts[v], total);
    if (!a.restart) diff += p > a.prev_hist[v] ? p - a.prev_hist[v] : a.prev_hist[v] - p;
    a.next_hist[v] = p;
  }
  const bool cut = a.restart || diff / 2 > a.cut_q16;
  const int luts = a.count + (a.extra != nullptr ? 1 : 0);
  // Global mode's one or two LUTs are less work than waking the pool (and leaving it polling).
  if (static_cast<size_t>(luts) * static_cast<size_t>(bins) < kPooledEntries) pool = nullptr;
  for_levels(pool, bins, [&](int v0, int v1) { step_levels(a, cut, luts, v0, v1); });
  const Measure u(a, total, pool);
  const bool free = a.restart || (cut && tone::free_cut(a.prev_scalars[4], m - a.prev_scalars[2], a.prev_scalars[5], bins));
  const int32_t c = brightness_offset(a, u, m, free);
  image::for_parts(pool, luts, 4, [&](int k0, int k1) { put_luts(a, c, k0, k1); });
  a.next_scalars[0] = c;
  a.next_scalars[1] = u.mean(c);
  a.next_scalars[2] = m;
  a.next_scalars[3] = cut ? 1 : 0;
  a.next_scalars[4] = cut ? 0 : std::min(a.restart ? 1 : a.prev_scalars[4] + 1, 1 << 20);
  a.next_scalars[5] = a.restart ? 0 : m - a.prev_scalars[2];
  return Status::ok();
}

}  // namespace histeq::eq
