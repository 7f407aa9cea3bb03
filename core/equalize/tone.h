// The integer formulas of the picture-quality controls (quality.h), in one place for the CPU and
// the GPU (HISTEQ_HD: compiled by both compilers), so that both give bit-identical frames in every
// mode, as lut.h does for plain equalization. No floating point: nvcc would contract a*b+c into an
// FMA where the host compiler does not.
//
// Clip limit (Zuiderveld 1994; the same steps as OpenCV's CLAHE for 8-bit, so that its
// createCLAHE is a reference to test against). The limit applies at 8-bit resolution: the bins
// are taken in G = bins / 256 consecutive groups (G = 1 for 256 bins or fewer, 4 for 10-bit), so
// that a picture clips alike at 8 and 10 bits, also when its 10-bit values are 8-bit ones times 4:
//   groups   = min(bins, 256); g(j) = the sum of group j's bins
//   limit    = max(1, floor(clip_q8 * N / (256 * groups)))          N = samples counted
//   kept(v)  = h(v) when g(v's group) <= limit, else floor(h(v) * limit / g)   (G = 1: min(h, limit))
//   excess   = N - sum of kept
//   share(j) = floor(excess / groups) + [j % step == 0 and j / step < residual]
//              with residual = excess % groups, step = max(1, floor(groups / residual)):
//              the excess spread evenly over the groups, its remainder one sample a group every
//              `step` groups from group 0 (OpenCV's order)
//   h'(v)    = kept(v) + floor((share(v / G) + v % G) / G): a group's share split evenly over its
//              bins. The sum of h' is N again.
//   Then, with range-aware levels, the shadow floor (below): the level groups of the dark half that
//   the frame holds raised so that the curve's slope there is at least 1.
// Tile LUT (Zuiderveld's mapping, OpenCV's calcLut, within the levels {lo, hi, guard} of lut.h):
//   lut(v) = lo + round_half_up(C'(x) * (hi - lo) / N_tile), x = clamp(v, lo, hi), C' = N_tile at
//   x >= hi, else cdf'(x); lut.h's guard; with range-aware levels black at black, Zuiderveld's slope
//   kept and the lift taken off: lo + round_half_up(((C'(x) - C'(lo)) (hi - lo) + C'(lo) (x - lo)) /
//   N_tile), lo at x <= lo (tile_lut_entry); blended with the
//   identity by the strength weight as lut.h does. With the textbook levels: round_half_up(cdf'(v) * maxval / N_tile), OpenCV's. The global
//   LUT keeps lut.h's formula (with cdf_min), on h' when clipped.
// Bilinear interpolation (clahe apply): tile c's centre along an axis is (start_c + start_{c+1}) / 2
//   in pixel coordinates (a pixel x covers [x, x + 1)); a pixel between the centres of tiles c and
//   c + 1 takes w = (x + 0.5 - centre_c) / (centre_{c+1} - centre_c) of tile c + 1's LUT, in
//   1/1024 steps (round to nearest); before the first centre and after the last one the nearest
//   tile's LUT alone. out = round(((l00 (1 - wx) + l01 wx) (1 - wy) + (l10 (1 - wx) + l11 wx) wy)).
// OpenCV's tile grid (createCLAHE; histeq's with the textbook levels, so that it is a reference on
//   any picture size): when the picture is not a whole number of tiles on both axes, it is padded
//   by reflection (BORDER_REFLECT_101, reflect_101 below) on the right and at the bottom, by n -
//   size % n samples on each axis (n when that axis was whole), and cut into tiles of `step` =
//   padded size / n samples: the tile histograms count the padding, the last tiles' centres lie
//   where the padded picture puts them (past the middle of what is left of the picture), and a
//   pixel stands at its left edge: w = (x - centre_c) / step, centre_c = (c + 1/2) step (OpenCV's
//   x / step - 1/2). histeq's own grid spreads the tiles over the picture instead, so that none is
//   mostly padding, and puts a pixel at its centre.
// Temporal filter, two parts:
//  1. the curve: state s (each LUT entry in Q12), target t (this frame's entry):
//     s += round_half_away((t * 4096 - s) * alpha_q16 / 65536): a first-order IIR, time constant
//     set by alpha = 1 - exp(-dt / tau);
//  2. the brightness: the frame's output mean luma (as the LUT applied puts it: sum h(v) lut(v) / N)
//     may move from the previous frame's by no more than the input's mean moved (no added flicker):
//     an offset c (Q12, one for the frame, added to every entry before rounding) keeps it within
//     [u_prev - D, u_prev + D], D = |m - m_prev| (m: the input's mean luma, Q12); otherwise c
//     decays as the curve does: c_prev - round_half_away(c_prev * alpha_q16 / 65536) when that
//     keeps the mean in the bounds, else the nearest offset to it that does (limit_offset), and
//     |c| <= kMaxOffset levels. The offset bends the curve rather than shifting it: the LUT applied
//     is clamp(round((s + c w(s) + dither(v)) / 4096), lo, hi), w(s) = min(1, (s - lo) / R, (hi -
//     s) / R) with R = 2 kMaxOffset levels (temporal_entry; in clahe mode every tile LUT with the
//     same c, the mean measured as the tiles put it out: every tile's entries, rounded as applied,
//     weighted by that tile's histogram, entry_terms), and lut.h's guard on bins v with
//     lo < v < hi. So the curve stays anchored at black and white and its slope never falls below
//     1 - |c| / R >= 1/2: the hold can slow a change of brightness but never merge the shadows into
//     black (a shift by up to 64 levels with R = 64 pushed a dim scene's darkest mass below
//     black). A bright object entering a dim shot cannot pump its background, a fade is followed
//     no faster than it happens, and where the input's mean moves fast (a change of light) so may
//     the output.
//  A scene cut starts the curve over (s = t * 4096); the first frame, a change of the settings and
//  a cut that is not part of a fade (free_cut: at least kCutGap frames after the last one, and the
//  input's mean not already moving the same way frame after frame) also start the brightness over
//  (c = 0): the cut's own frame (which the flicker measure leaves out) takes the new shot's curve
//  and brightness. Near black a fade's histograms change as fast as at a cut: there the brightness
//  stays limited.
// Scene cut: p(v) = floor(h(v) * 65536 / N), distance = sum |p_n(v) - p_{n-1}(v)| / 2 (Q16, the
//   total-variation distance of the consecutive normalized histograms); a cut when distance >
//   cut_q16. Within a shot (motion, noise, a bright object crossing) the distance stays below about
//   0.07 on the clips of docs/quality.md, at their hard cuts it is 0.34 and more; fades through
//   black also cross it near black, where a frame is re-equalized at once (which there changes
//   little: the clip limit bounds the stretch of a near-black frame).
// Chroma follow: for a chroma sample with the co-sited luma samples i (n of them: 4 in 4:2:0),
//   gain = (sum out_i - n black) * 4096 / max(1, sum in_i - n black),
//   s = clamp(gain, 4096, limit_q12) (Q12; 4096 = 1 when the samples got darker: colour is only ever
//   restored, never taken away), c_out = neutral + round_half_away((c - neutral) * s / 4096),
//   clamped to the chroma's nominal range: [16, 240] << (depth - 8) in limited range, [0, maxval] in
//   full range and with the textbook levels; black = 0 (full range) or 16 << (depth - 8), neutral =
//   1 << (depth - 1).
#pragma once

#include <cmath>
#include <cstddef>
#include <algorithm>
#include <cstdint>

#include "core/cuda/hd.h"
#include "core/equalize/lut.h"

namespace histeq::eq::tone {

// --- clip limit ---------------------------------------------------------------------------------

HISTEQ_HD int clip_group(int bins) { return bins > 256 ? bins / 256 : 1; }  // bins a group

HISTEQ_HD uint32_t clip_count(uint32_t clip_q8, uint64_t total, int bins) {
  const uint64_t groups = static_cast<uint64_t>(bins / clip_group(bins));
  const uint64_t l = static_cast<uint64_t>(clip_q8) * total / (256ull * groups);
  return l < 1 ? 1u : l > 0xFFFFFFFFull ? 0xFFFFFFFFu : static_cast<uint32_t>(l);
}

// What a bin keeps of its count h, its group counting g.
HISTEQ_HD uint32_t clip_kept(uint32_t h, uint32_t g, uint32_t limit) {
  return g > limit ? static_cast<uint32_t>(static_cast<uint64_t>(h) * limit / g) : h;
}

// h'(v) given what the bin kept and the histogram's total excess.
HISTEQ_HD uint32_t clipped_bin(uint32_t kept, uint32_t v, uint32_t excess, uint32_t bins) {
  const uint32_t g = static_cast<uint32_t>(clip_group(static_cast<int>(bins))), groups = bins / g, j = v / g;
  uint32_t share = excess / groups;
  const uint32_t residual = excess % groups;
  if (residual != 0) {
    const uint32_t q = groups / residual;
    const uint32_t step = q > 0 ? q : 1u;
    if (j % step == 0 && j / step < residual) ++share;
  }
  return kept + (share + v % g) / g;
}

// --- shadow floor -------------------------------------------------------------------------------

// With the clip limit on and range-aware levels (l.guard; never with the textbook levels), the
// clipped histogram's level groups in the shadows that the frame holds are raised to a floor, so
// that the curve's slope there is at least 1: a level step in the input's darkest part never maps
// to a smaller step in the output (the clip bounds the slope from above; in a bright
// picture the sparse dark half got a slope of 0.6-0.75 and its texture was flattened). At 8-bit
// resolution, as the clip: G = clip_group(bins) bins a group, g(j) = group j's clipped count.
//   region   = the groups j the frame holds (a count before the clip) with lo < j G and (j + 1) G <=
//              mid, mid = lo + (hi - lo) / 2: the dark half of the range above black. Levels the
//              frame does not hold are not raised, so they take no room from those it does (a dim
//              picture's empty levels above its mass), and its darkest level still goes to black
//   F        = the least integer with F (hi - lo) >= N + A(F), A(F) = sum over the region of
//              d(j) = max(0, G F - g(j)), N = the clipped histogram's total: the raised histogram's
//              total is N + A(F), so a raised group's step of the CDF, G F at least, gives an output
//              step of G levels at least (one of 8 bits) in both mappings (lut.h's, whose
//              denominator N' - cdf_min is smaller still, and the tile mapping's N'), and rounding
//              keeps a step >= G a step >= G
//   h''(v)   = h'(v) + floor((d(j) + v % G) / G) in the region (d(j) split evenly over the group's
//              bins, as the clip's shares are), h'(v) elsewhere
// F is found by Newton's method from below on phi(F) = F (hi - lo) - A(F), which is concave and
// increasing (the region's bins are fewer than (hi - lo) / 2): from F, no F' below F + ceil((N -
// phi(F)) / (hi - lo - G k)), k = the region's groups with g <= G F, can qualify, so the steps
// never pass the least one, and every step moves F up. None (F = 0) when hi - lo < 2, N = 0 or
// N >= 2^30 (so that N + A(F) <= 2 N + hi - lo stays within 32 bits).
HISTEQ_HD uint32_t shadow_end(const Levels& l) { return l.lo + (l.hi - l.lo) / 2; }

// Whether bin v's group is in the region, `held` telling whether the frame holds the group.
HISTEQ_HD bool in_shadows(uint32_t v, bool held, int bins, const Levels& l) {
  const uint32_t g = static_cast<uint32_t>(clip_group(bins)), first = v - v % g;
  return held && first > l.lo && first + g <= shadow_end(l);
}

// d(j) for the group of clipped count `group` (0 outside the region) and floor f.
HISTEQ_HD uint32_t floor_deficit(uint32_t group, bool in, uint32_t f, int bins) {
  const uint64_t want = static_cast<uint64_t>(f) * static_cast<uint64_t>(clip_group(bins));
  return in && want > group ? static_cast<uint32_t>(want - group) : 0u;
}

// What bin v (in the region or not, its group's clipped count `group`) adds to A(F) << 16 and to G k:
// its part of d(j), and G on the group's first bin when g <= G F (A(F) < 2^31 and G k <= 512:
// the sum of these keeps both apart).
HISTEQ_HD uint64_t floor_terms(uint32_t group, uint32_t v, bool in, uint32_t f, int bins) {
  if (!in) return 0;
  const uint32_t g = static_cast<uint32_t>(clip_group(bins));
  const uint64_t share = (floor_deficit(group, in, f, bins) + v % g) / g;
  const bool counts = v % g == 0 && static_cast<uint64_t>(group) <= static_cast<uint64_t>(f) * g;
  return share << 16 | (counts ? g : 0u);
}

// h''(v) of a bin of the clipped histogram (count h, its group's count `group`).
HISTEQ_HD uint32_t floored_bin(uint32_t h, uint32_t group, uint32_t v, bool in, uint32_t f, int bins) {
  return h + static_cast<uint32_t>(floor_terms(group, v, in, f, bins) >> 16);
}

// F, given `terms(f)`: the sum of floor_terms over the bins for that f (on the GPU a block reduction
// every thread calls with the same f: the loop's branches are the same for the whole block).
#ifdef __CUDACC__
#pragma nv_exec_check_disable
#endif
template <class Terms>
HISTEQ_HD uint32_t shadow_floor(Terms&& terms, uint32_t total, const Levels& l) {
  const uint32_t range = l.hi - l.lo;
  if (!l.guard || range < 2 || total == 0 || total >= (1u << 30)) return 0;
  uint64_t f = (total + range - 1) / range;
  for (;;) {
    const uint64_t t = terms(static_cast<uint32_t>(f));
    const uint64_t deficit = t >> 16, gk = t & 0xFFFFu;
    const int64_t phi = static_cast<int64_t>(f * range) - static_cast<int64_t>(deficit);
    if (phi >= static_cast<int64_t>(total)) return static_cast<uint32_t>(f);
    const uint64_t slope = range - gk;  // > range / 2: G k <= the region's bins < range / 2
    f += (static_cast<uint64_t>(static_cast<int64_t>(total) - phi) + slope - 1) / slope;
  }
}

// --- tile LUTs ----------------------------------------------------------------------------------

// Zuiderveld's mapping within the levels (lut.h): x = clamp(v, lo, hi), C(x) = total when x >= hi
// else cdf(x) (cdf_x = cdf(x), not read when v >= hi), e = lo + round_half_up(C(x) (hi - lo) /
// total), lut.h's guard, blended with the raw value by the weight. An empty tile (only samples
// that were not counted) maps every level to x. With range-aware levels (l.guard) black stays
// black: e = lo + round_half_up(((C(x) - C(lo)) (hi - lo) + C(lo) (x - lo)) / total) (cdf_lo =
// C(lo)), so x <= lo maps to lo and hi to hi; a tile whose samples all lie at or below black maps
// every level to x. Zuiderveld's own mapping gives a tile's black its share of the clipped
// histogram (its samples at or below black and its part of the redistributed excess), which lifted
// letterbox bars at 16 to about 18. The lift C(lo) (hi - lo) / total is taken off and
// given back spread evenly over the levels (the C(lo) (x - lo) term), so the curve keeps
// Zuiderveld's slope plus C(lo) / total at most: mapping from black (C(lo) off the denominator, as
// lut.h's cdf_min does) steepened the whole curve by total / (total - C(lo)), and with it the noise
// of flat areas (docs/quality.md, "CLAHE's noise and flicker"); snapping black alone to black would
// put the lift into the one step above black. The guard keeps a level above black from becoming
// black; this keeps black from becoming a grey.
HISTEQ_HD uint32_t tile_lut_entry(uint32_t v, uint32_t cdf_x, uint32_t cdf_lo, uint32_t total, const Levels& l, uint32_t weight) {
  const uint32_t x = clamp_level(v, l);
  const uint32_t base = l.guard ? cdf_lo : 0u;
  if (total <= base) return blend_weight(v, x, weight);
  if (l.guard && x <= l.lo) return blend_weight(v, l.lo, weight);
  const uint32_t c = x >= l.hi ? total : cdf_x;
  const uint64_t num = static_cast<uint64_t>(c - base) * (l.hi - l.lo) + static_cast<uint64_t>(base) * (x - l.lo), den = total;
  const uint32_t e = l.lo + static_cast<uint32_t>((2 * num + den) / (2 * den));
  return blend_weight(v, guard_level(x, e, l), weight);
}

// --- bilinear interpolation ---------------------------------------------------------------------

constexpr int kWeightBits = 10;
constexpr uint32_t kWeightOne = 1u << kWeightBits;

// One axis entry: the two tiles a pixel blends (lo, hi) and hi's weight in 1/1024, packed as
// w | lo << 16 | hi << 24.
HISTEQ_HD uint32_t axis_pack(uint32_t lo, uint32_t hi, uint32_t w) { return w | lo << 16 | hi << 24; }
HISTEQ_HD uint32_t axis_lo(uint32_t e) { return (e >> 16) & 0xFFu; }
HISTEQ_HD uint32_t axis_hi(uint32_t e) { return e >> 24; }
HISTEQ_HD uint32_t axis_w(uint32_t e) { return e & 0xFFFFu; }

// The entry of pixel x on an axis of `size` pixels cut into n tiles: step 0, histeq's grid (tile
// starts floor(i * size / n), the pixel at its centre); step > 0, OpenCV's (tile starts i * step over
// the padded axis, n * step >= size; the pixel at its left edge).
HISTEQ_HD uint32_t axis_entry(int x, int n, int size, int step = 0) {
  // Doubled coordinates keep the centres integer: C_i = start_i + start_{i+1}, P = 2x + 1 (2x).
  auto start = [&](int i) { return step > 0 ? static_cast<int64_t>(i) * step : static_cast<int64_t>(i) * size / n; };
  const int64_t p = 2 * static_cast<int64_t>(x) + (step > 0 ? 0 : 1);
  if (n == 1 || p <= start(0) + start(1)) return axis_pack(0, 0, 0);
  if (p >= start(n - 1) + start(n)) return axis_pack(n - 1, n - 1, 0);
  // The tile whose centre is the last one at or before p: centres are increasing.
  int i = step > 0 ? x / step : static_cast<int>((static_cast<int64_t>(x) * n) / size);  // x's own tile; its centre or the one before
  if (start(i) + start(i + 1) > p) --i;
  const int64_t c0 = start(i) + start(i + 1), c1 = start(i + 1) + start(i + 2);
  const int64_t d = c1 - c0;
  const uint32_t w = static_cast<uint32_t>(((p - c0) * kWeightOne + d / 2) / d);
  return axis_pack(static_cast<uint32_t>(i), static_cast<uint32_t>(i + 1), w);
}

// The sample of an axis of `len` samples that position p (>= 0) of the padded axis repeats:
// OpenCV's BORDER_REFLECT_101 (..., len - 3, len - 2 | past the end; again from the start when the
// padding is longer than the axis).
HISTEQ_HD int reflect_101(int p, int len) {
  if (len <= 1) return 0;
  while (p < 0 || p >= len) p = p < 0 ? -p : 2 * (len - 1) - p;
  return p;
}

// The interpolated mapping of value v (< bins) at the pixel whose axis entries are ex, ey; `luts`
// holds the tiles' LUTs, tile-major, `cols` tiles a row.
HISTEQ_HD uint32_t tile_map(const uint16_t* luts, int cols, int bins, uint32_t ex, uint32_t ey, uint32_t v) {
  const uint32_t wx = axis_w(ex), wy = axis_w(ey);
  const uint16_t* r0 = luts + static_cast<size_t>(axis_lo(ey) * cols) * bins;
  const uint16_t* r1 = luts + static_cast<size_t>(axis_hi(ey) * cols) * bins;
  const size_t c0 = static_cast<size_t>(axis_lo(ex)) * bins + v, c1 = static_cast<size_t>(axis_hi(ex)) * bins + v;
  const uint32_t top = r0[c0] * (kWeightOne - wx) + r0[c1] * wx;
  const uint32_t bottom = r1[c0] * (kWeightOne - wx) + r1[c1] * wx;
  return (top * (kWeightOne - wy) + bottom * wy + (1u << (2 * kWeightBits - 1))) >> (2 * kWeightBits);
}

// --- temporal filter ----------------------------------------------------------------------------

constexpr int kStateBits = 12;
constexpr int kMaxOffset = 64;   // levels of 255 (x4 at 10 bits): the most the brightness is held
constexpr int kCutGap = 8;       // frames: a cut this soon after another is part of a fade through black
constexpr int kFadeStep = 1;     // levels of 255 a frame: a mean moving this fast the same way twice is a fade

// Whether a frame that starts the curve over (a cut) may also start the brightness over: not soon
// after another cut, and not in the middle of a fade (the input's mean moving at least kFadeStep a
// frame the same way at this frame and the one before). dm, dm_prev: the mean's changes, Q12.
HISTEQ_HD bool free_cut(int32_t since_last_cut, int32_t dm, int32_t dm_prev, int bins) {
  if (since_last_cut < kCutGap) return false;
  const int32_t step = (kFadeStep * (bins / 256 > 0 ? bins / 256 : 1)) << kStateBits;
  const bool fading = (dm >= step && dm_prev >= step) || (dm <= -step && dm_prev <= -step);
  return !fading;
}

HISTEQ_HD int32_t round_shift16(int64_t m) { return static_cast<int32_t>((m + (m >= 0 ? 32768 : -32768)) / 65536); }

HISTEQ_HD int32_t temporal_step(int32_t state, uint32_t target, uint32_t alpha_q16) {
  const int64_t d = (static_cast<int64_t>(target) << kStateBits) - state;
  return state + round_shift16(d * static_cast<int64_t>(alpha_q16));
}
HISTEQ_HD int32_t temporal_start(uint32_t target) { return static_cast<int32_t>(target << kStateBits); }
// The LUT entry of bin v from its state and the frame's offset. The offset bends the curve: it
// moves an entry by offset x min(1, d / R), d = the state's distance to the nearer of lo and hi,
// R = 2 kMaxOffset levels. So the ends stay where the curve put them, and as |offset| <= R / 2 the
// slope of the bent curve stays within [1/2, 3/2] of the curve's: entries stay in order, and no
// two levels that the curve kept apart merge for the hold's sake (a shift with R = kMaxOffset, as
// before the range-aware curves, took the slope to 0 at the ends). Then lut.h's guard for lo < v < hi. The
// rounding threshold moves with v by up to half a level either way (v / bins of a level, less half
// a level): with an offset of 0 a state that is a whole level (every entry after a cut) rounds to
// itself, entries stay in order (state and threshold both grow with v), and as the offset moves
// the entries change one after another rather than all at once, so the frame's mean can be held to
// a small fraction of a level instead of jumping by whole ones.
// (bins is a power of two and so is the ramp: the divisions are shifts, written out because the
// brightness search evaluates this for every entry at many offsets a frame, and a 64-bit division
// on the GPU cost 20 us a frame; a signed quotient still truncates towards zero.)
HISTEQ_HD int log2_pow2(int n) {
  int k = 0;
  while ((1 << (k + 1)) <= n) ++k;
  return k;
}
// log2 of R in Q12: 2 kMaxOffset levels, x bins / 256 above 256 bins.
constexpr int kRampLog2 = 7 + kStateBits;
static_assert((1 << 7) == 2 * kMaxOffset, "the ramp R is 2 kMaxOffset levels");
HISTEQ_HD int ramp_log2(int bins_log2) { return kRampLog2 + (bins_log2 > 8 ? bins_log2 - 8 : 0); }

// An entry as a function of the offset alone (its state and bin fixed for the frame), the form the
// brightness search evaluates: entry_at(entry_terms(s, v, ...), c, ramp) == temporal_entry_log2(s,
// c, v, ...) for every c, by construction (temporal_entry_log2 is written through them).
struct EntryTerms {
  int32_t y;      // state + the bin's dither + half a level (Q12): the rounding folded in
  int32_t w;      // min(d, R), d = the state's distance to the nearer end, at least 0 (Q12)
  uint16_t lo;    // the entry's bounds: the levels', narrowed by lut.h's guard for lo < v < hi
  uint16_t hi;
};
HISTEQ_HD EntryTerms entry_terms(int32_t state, int v, int bins_log2, const Levels& l) {
  const int32_t ramp = 1 << ramp_log2(bins_log2);
  const int32_t lo = static_cast<int32_t>(l.lo) << kStateBits, hi = static_cast<int32_t>(l.hi) << kStateBits;
  int32_t w = state - lo < hi - state ? state - lo : hi - state;
  w = w < 0 ? 0 : w > ramp ? ramp : w;
  const int32_t dither = static_cast<int32_t>((static_cast<int64_t>(v) << kStateBits) >> bins_log2) - (1 << (kStateBits - 1));
  const uint32_t x = clamp_level(static_cast<uint32_t>(v), l);
  const bool guarded = l.guard && x > l.lo && x < l.hi;
  return {state + dither + (1 << (kStateBits - 1)), w, static_cast<uint16_t>(guarded ? l.lo + 1 : l.lo),
          static_cast<uint16_t>(guarded ? l.hi - 1 : l.hi)};
}
// The entry for offset c: moved = c w / R truncated towards zero (w = R: c itself), then rounded
// and clamped. The state (< 2^22), the dither and |c| <= 2^20 keep y + moved within 32 bits.
HISTEQ_HD uint32_t entry_at(const EntryTerms& t, int32_t offset, int ramp_log2) {
  const int64_t m = static_cast<int64_t>(offset) * t.w;
  const int32_t moved = static_cast<int32_t>((m + (m < 0 ? (int64_t{1} << ramp_log2) - 1 : 0)) >> ramp_log2);
  const int32_t e = (t.y + moved) >> kStateBits;  // arithmetic: at or below 0 when the sum is
  return e < static_cast<int32_t>(t.lo) ? t.lo : e > static_cast<int32_t>(t.hi) ? t.hi : static_cast<uint32_t>(e);
}
// (bins_log2 = log2(bins): callers with many entries compute it once.)
HISTEQ_HD uint32_t temporal_entry_log2(int32_t state, int32_t offset, int v, int bins_log2, const Levels& l) {
  return entry_at(entry_terms(state, v, bins_log2, l), offset, ramp_log2(bins_log2));
}
// The smallest offset at which the entry reaches level k, for a k above its value at some offset
// and at most its value at a larger one (so w > 0 and k within its bounds, where the clamp leaves
// the rounded value alone): moved(c) = trunc(c w / R) >= d = k - y (Q12) holds from c = ceil(d R /
// w) when d > 0, and from 1 - ceil((1 - d) R / w) when d <= 0 (truncation towards zero). The
// quotient comes from a double division (d R < 2^42, so its error is far below 1 / w) and is then
// made exact in integers, so both sides get the same one. The brightness search finds where the
// mean crosses a bound from these, the levels each entry passes between two offsets, rather than
// from the mean at many offsets.
HISTEQ_HD int32_t entry_threshold(const EntryTerms& t, uint32_t k, int ramp_log2) {
  const int64_t d = (static_cast<int64_t>(k) << kStateBits) - t.y;
  const int64_t num = (d > 0 ? d : 1 - d) << ramp_log2, w = t.w;
  auto q = static_cast<int64_t>(ceil(static_cast<double>(num) / static_cast<double>(w)));
  while (q * w < num) ++q;
  while ((q - 1) * w >= num) --q;
  return static_cast<int32_t>(d > 0 ? q : 1 - q);
}

HISTEQ_HD uint32_t temporal_entry(int32_t state, int32_t offset, int v, int bins, const Levels& l) {
  return temporal_entry_log2(state, offset, v, log2_pow2(bins), l);
}

// limit_offset's step towards the bound from the last two points: the excess over their slope (a
// slope of 1 at the start: the mean moves at most as fast as the offset), or twice the last step
// where the mean did not move; then the margin past it. So the bracket the search gets is about
// the margin wide, where a step of the excess alone, with a slope of 1/2, fell short and left the
// search the whole range (the search's cost grows with the levels the entries pass within it).
HISTEQ_HD int32_t offset_step(int64_t excess, int64_t du, int64_t dc, int32_t margin) {
  const int64_t to = (du > 0 ? excess * dc / du : 2 * dc) + margin;
  return static_cast<int32_t>(to < (int64_t{1} << 30) ? to : int64_t{1} << 30);  // past either end: clamped there
}

// Given u(a) <= t < u(b): narrows [a, b) to a few margins around the crossing (secant points a
// margin to the far end's side of it, while the bracket stays wide, at most four), so the
// search's range is small.
#ifdef __CUDACC__
#pragma nv_exec_check_disable
#endif
template <class U>
HISTEQ_HD void narrow_bracket(U&& u_of, int32_t& a, int32_t ua, int32_t& b, int32_t ub, int32_t t, int32_t margin) {
  for (int k = 0; k < 4 && b - a > 4 * margin; ++k) {
    const int64_t est = a + static_cast<int64_t>(t - ua) * (b - a) / (ub > ua ? ub - ua : 1);
    const int64_t at = est - a > b - est ? est - margin : est + margin;
    const int32_t m = static_cast<int32_t>(at <= a ? a + 1 : at >= b ? b - 1 : at);
    const int32_t um = u_of(m);
    (um > t ? b : a) = m;  // the end on m's side of the crossing moves to m
    (um > t ? ub : ua) = um;
  }
}

// offset_towards, once the mean crossed the bound t between p (c's side, u(p) = up_u) and q: the
// search over the bracket between them, narrowed.
#ifdef __CUDACC__
#pragma nv_exec_check_disable
#endif
template <class U, class Search>
HISTEQ_HD int32_t search_crossed(U&& u_of, Search&& last_at_most, bool up, int32_t p, int32_t up_u, int32_t q, int32_t uq,
                                 int32_t t, int32_t margin) {
  int32_t a = up ? p : q, b = up ? q : p;  // u(a) <= t' < u(b)
  const int32_t t2 = up ? t - 1 : t;
  narrow_bracket(u_of, a, up ? up_u : uq, b, up ? uq : up_u, t2, margin);
  return last_at_most(a, b, t2) + (up ? 1 : 0);
}

// Down: the largest c' <= c with u(c') <= t, given u(c) = u > t (-most when none is). Up: the
// smallest c' >= c with u(c') >= t, given u(c) = u < t (most when none is). Steps from c towards
// the bound until the mean crosses it, then searches the bracket.
#ifdef __CUDACC__
#pragma nv_exec_check_disable
#endif
template <class U, class Search>
HISTEQ_HD int32_t offset_towards(U&& u_of, Search&& last_at_most, bool up, int32_t c, int32_t u, int32_t t, int32_t most,
                                 int32_t margin) {
  const int64_t sign = up ? 1 : -1;  // the steps' direction, and the excess's
  int32_t p = c, up_u = u;           // the last point on c's side of the bound
  int32_t to = offset_step(sign * (t - u), 1, 1, margin);
  for (;;) {
    const int64_t next = p + sign * to;
    const int32_t q = static_cast<int32_t>(next < -most ? -most : next > most ? most : next);
    const int32_t uq = u_of(q);
    if (sign * (uq - t) >= 0) return search_crossed(u_of, last_at_most, up, p, up_u, q, uq, t, margin);
    if (q == sign * most) return q;
    to = offset_step(sign * (t - uq), sign * (uq - up_u), sign * (q - p), margin);
    p = q;
    up_u = uq;
  }
}

// The previous frame's offset decayed by the filter's alpha, within +-most: where limit_offset
// starts.
HISTEQ_HD int32_t decayed_offset(int32_t c_prev, uint32_t alpha_q16, int32_t most) {
  const int32_t c = c_prev - round_shift16(static_cast<int64_t>(c_prev) * alpha_q16);
  return c < -most ? -most : c > most ? most : c;
}

// The brightness offset of a frame (see the header comment): `u_of(c)` is the output's mean luma
// (Q12) with offset c, exactly as the LUT rounds and clamps it; it never decreases as c grows. The
// previous offset, decayed, if that keeps the mean within [lo, hi]; otherwise the nearest offset
// towards it that does, within +-most (or the end of that range when none does). That offset is
// unique, so how it is searched does not change it: `last_at_most(a, b, t)` returns the largest c
// in [a, b) with u(c) <= t, given u(a) <= t < u(b) (both sides from the levels the entries pass
// between a and b: entry_threshold). The bracket is found by secant steps. On the GPU u_of and last_at_most are
// collective (block reductions): every thread calls them with the same arguments, so the branches
// here are the same for the whole block.
#ifdef __CUDACC__
#pragma nv_exec_check_disable
#endif
template <class U, class Search>
HISTEQ_HD int32_t limit_offset(U&& u_of, Search&& last_at_most, int32_t c_prev, uint32_t alpha_q16, int32_t lo, int32_t hi,
                               int32_t most) {
  const int32_t c = decayed_offset(c_prev, alpha_q16, most);
  const int32_t u = u_of(c);
  const int32_t margin = most >> 8;  // a quarter of a level
  if (u > hi) return offset_towards(u_of, last_at_most, false, c, u, hi, most, margin);
  if (u < lo) return offset_towards(u_of, last_at_most, true, c, u, lo, most, margin);
  return c;
}

// last_at_most by bisection (the tests' reference search).
template <class U>
HISTEQ_HD int32_t bisect_at_most(U&& u_of, int32_t a, int32_t b, int32_t t) {
  while (b - a > 1) {
    const int32_t mid = a + (b - a) / 2;
    if (u_of(mid) <= t) a = mid;
    else b = mid;
  }
  return a;
}

HISTEQ_HD int32_t max_offset(int bins) { return (kMaxOffset * (bins / 256 > 0 ? bins / 256 : 1)) << kStateBits; }

// The mean luma in Q12 from sum h(v) v; a bin's share of the histogram in Q16.
HISTEQ_HD int32_t mean_q12(uint64_t sum_hv, uint64_t total) { return total == 0 ? 0 : static_cast<int32_t>((sum_hv << kStateBits) / total); }
// The largest sum whose mean_q12 over total is at most t (t >= 0): sum 4096 < (t + 1) total.
HISTEQ_HD uint64_t sum_at_most(int32_t t, uint64_t total) {
  return total == 0 ? ~uint64_t{0} : ((static_cast<uint64_t>(t) + 1) * total - 1) >> kStateBits;
}
HISTEQ_HD uint32_t normalized_bin(uint32_t h, uint64_t total) {
  return total == 0 ? 0u : static_cast<uint32_t>((static_cast<uint64_t>(h) << 16) / total);
}

// --- chroma follow ------------------------------------------------------------------------------

constexpr int kChromaBits = 12;

// The chroma scale (Q12) for co-sited luma sums in/out over n samples (n <= 4, samples < 2^16:
// 32-bit arithmetic, as 64-bit division is slow on both sides and emulated on the GPU).
HISTEQ_HD uint32_t chroma_scale(uint32_t sum_in, uint32_t sum_out, uint32_t n, uint32_t black, uint32_t limit_q12) {
  constexpr uint32_t kOne = 1u << kChromaBits;
  const uint32_t nb = n * black;
  if (sum_out <= sum_in || sum_out <= nb) return kOne;  // darkened or unchanged: chroma kept
  const uint32_t top = (sum_out - nb) << kChromaBits;  // sums < 2^18, so < 2^30
  const uint32_t den = sum_in > nb ? sum_in - nb : 1u;
  // The limit first (exact: g >= limit iff top >= limit * den; 64-bit: den * limit can pass 2^32
  // for 16-bit samples), so the division is needed only below it.
  if (static_cast<uint64_t>(top) >= static_cast<uint64_t>(limit_q12) * den) return limit_q12;
  const uint32_t g = top / den;
  return g < kOne ? kOne : g;
}

// chroma_scale's value without branches, for the host's vector loops (ops/apply/apply_cpu.cpp): the same
// for every input where top < 2^30 (tested exhaustively at 8 and 10 bits). The division in double
// is exact after truncation: a quotient below an integer k is below it by at least 1/den, far
// more than double's rounding at these magnitudes.
inline uint32_t chroma_scale_branchless(uint32_t sum_in, uint32_t sum_out, uint32_t n, uint32_t black, uint32_t limit_q12) {
  // Signed 32-bit throughout (sums < 2^18, top < 2^30): the conversions to and from double that
  // vector units have.
  constexpr int32_t kOne = 1 << kChromaBits;
  const auto nb = static_cast<int32_t>(n * black), in = static_cast<int32_t>(sum_in), out = static_cast<int32_t>(sum_out);
  const int32_t up = static_cast<int32_t>(out > in) & static_cast<int32_t>(out > nb);
  const int32_t top = std::max(out - nb, 0) << kChromaBits;
  const int32_t den = std::max(in - nb, 1);
  const auto q = static_cast<int32_t>(static_cast<double>(top) / static_cast<double>(den));
  const int32_t g = std::max(std::min(q, static_cast<int32_t>(limit_q12)), kOne);
  return static_cast<uint32_t>(kOne + up * (g - kOne));
}

// |c - neutral| < 2^16 and scale <= 4 x 4096: the product fits 32 bits. The result is clamped to
// [lo, hi], the chroma's nominal range.
HISTEQ_HD uint32_t scale_chroma(uint32_t c, uint32_t scale_q12, uint32_t neutral, uint32_t lo, uint32_t hi) {
  const int32_t m = (static_cast<int32_t>(c) - static_cast<int32_t>(neutral)) * static_cast<int32_t>(scale_q12);
  const int32_t r = static_cast<int32_t>(neutral) + (m + (m >= 0 ? 2048 : -2048)) / 4096;
  return static_cast<uint32_t>(r < static_cast<int32_t>(lo) ? static_cast<int32_t>(lo) : r > static_cast<int32_t>(hi) ? static_cast<int32_t>(hi) : r);
}

}  // namespace histeq::eq::tone
