// The temporal operation on the CPU: tone.h's filter through time (the scene cut, the filtered
// curves, the brightness hold), per LUT over the pool: the truth temporal_gpu.cu is tested against.
#include <algorithm>
#include <vector>

#include "core/equalize/ops/checks.h"
#include "core/equalize/ops/lut/build_lut.h"
#include "core/equalize/ops/temporal/temporal.h"
#include "core/equalize/tone.h"
#include "core/image/fork_join.h"

namespace histeq::eq {

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
