// The temporal denoiser on the CPU (denoise.h), row by row, 2R + 1 rows of differences at a time:
// the same integer steps as denoise_gpu.cu, reading state plane `parity` and writing the other.
#include <algorithm>
#include <cmath>
#include <vector>

#include "core/equalize/ops/denoise/denoise.h"

namespace histeq::eq {
namespace {

template <class T>
const T* row_of(const PlaneRef& p, int y) {
  return reinterpret_cast<const T*>(static_cast<const unsigned char*>(p.data) + static_cast<size_t>(y) * p.pitch);
}

const uint16_t* prev_state(const DenoiseArgs& a) { return a.state + static_cast<size_t>(a.parity) * a.luma.samples(); }
uint16_t* next_state(const DenoiseArgs& a) { return a.state + static_cast<size_t>(a.parity ^ 1) * a.luma.samples(); }

// a(x, y) for one row into out (width entries).
template <class T>
void diff_row(const DenoiseArgs& a, int y, uint32_t* out) {
  const T* v = row_of<T>(a.luma, y);
  const uint16_t* s = prev_state(a) + static_cast<size_t>(y) * a.luma.width;
  for (int x = 0; x < a.luma.width; ++x) out[x] = denoise::diff(denoise::level(v[x], a.params), s[x]);
}

template <class T>
uint64_t cut_sum(const DenoiseArgs& a) {
  std::vector<uint32_t> d(static_cast<size_t>(a.luma.width));
  uint64_t sum = 0;
  for (int y = 0; y < a.luma.height; y += denoise::kCutRowStep) {
    diff_row<T>(a, y, d.data());
    for (uint32_t e : d) sum += e;
  }
  return sum;
}

// D for every sample of row y: the column sums over the rows y - R..y + R (clamped), then the
// sums of 2R + 1 of them (clamped): rows[] holds the differences of row r at r % (2R + 1). The
// interior loops have no clamps, so that the compiler vectorizes them.
void window_sums(const std::vector<std::vector<uint32_t>>& rows, int y, int w, int h, std::vector<uint32_t>& col,
                 std::vector<uint32_t>& out) {
  constexpr int r = denoise::kRadius, n = 2 * r + 1;
  const uint32_t* src[n];
  for (int dy = -r; dy <= r; ++dy) src[dy + r] = rows[static_cast<size_t>(std::clamp(y + dy, 0, h - 1) % n)].data();
  uint32_t* c = col.data();
  for (int x = 0; x < w; ++x) c[x] = src[0][x] + src[1][x] + src[2][x] + src[3][x] + src[4][x];
  static_assert(n == 5, "the column sum above adds five rows");
  auto clamped = [&](int x) {
    uint32_t sum = 0;
    for (int dx = -r; dx <= r; ++dx) sum += c[std::clamp(x + dx, 0, w - 1)];
    return sum;
  };
  uint32_t* o = out.data();
  const int lo = std::min(r, w), hi = std::max(lo, w - r);
  for (int x = 0; x < lo; ++x) o[x] = clamped(x);
  for (int x = lo; x < hi; ++x) o[x] = c[x - 2] + c[x - 1] + c[x] + c[x + 1] + c[x + 2];
  for (int x = hi; x < w; ++x) o[x] = clamped(x);
}

// One row's blend, the planes distinct (restrict) and the shift known to be 0 where it is (all but
// P010), so that the compiler vectorizes the loop.
template <class T, bool kShifted>
void blend_row(T* __restrict v, const uint16_t* __restrict s, uint16_t* __restrict ns, const uint32_t* __restrict d, int w,
               denoise::Params p) {
  if (!kShifted) p.shift = 0;
  for (int x = 0; x < w; ++x) {
    const uint32_t n = denoise::blend(s[x], denoise::level(v[x], p), denoise::gain(d[x], p));
    ns[x] = static_cast<uint16_t>(n);
    v[x] = static_cast<T>(denoise::store(v[x], n, p));
  }
}

template <class T>
void filter(const DenoiseArgs& a, bool start_over) {
  constexpr int r = denoise::kRadius, n = 2 * r + 1;
  const int w = a.luma.width, h = a.luma.height;
  const denoise::Params& p = a.params;
  std::vector<std::vector<uint32_t>> rows(n, std::vector<uint32_t>(static_cast<size_t>(w)));
  std::vector<uint32_t> col(static_cast<size_t>(w)), sums(static_cast<size_t>(w));
  if (!start_over)
    for (int y = 0; y < std::min(r, h); ++y) diff_row<T>(a, y, rows[static_cast<size_t>(y % n)].data());
  for (int y = 0; y < h; ++y) {
    if (!start_over) {
      if (y + r < h) diff_row<T>(a, y + r, rows[static_cast<size_t>((y + r) % n)].data());
      window_sums(rows, y, w, h, col, sums);
    }
    T* v = const_cast<T*>(row_of<T>(a.luma, y));
    const uint16_t* s = prev_state(a) + static_cast<size_t>(y) * w;
    uint16_t* ns = next_state(a) + static_cast<size_t>(y) * w;
    if (start_over) std::fill(sums.begin(), sums.end(), 0xFFFFFFFFu);  // k = 256 everywhere
    if (p.shift == 0) blend_row<T, false>(v, s, ns, sums.data(), w, p);
    else blend_row<T, true>(v, s, ns, sums.data(), w, p);
  }
}

template <class T>
Status run(const DenoiseArgs& a) {
  bool start_over = a.restart;
  if (!start_over) {
    a.sums[a.parity] += cut_sum<T>(a);
    start_over = a.sums[a.parity] > a.params.cut_q4 * denoise::cut_samples(a.luma.width, a.luma.height);
  }
  a.sums[a.parity ^ 1] = 0;
  filter<T>(a, start_over);
  return Status::ok();
}

}  // namespace

denoise::Params denoise_params(double sigma, int bit_depth, int shift) {
  denoise::Params p;
  const double scale = std::ldexp(1.0, bit_depth - 8);
  const auto sigma_q4 = static_cast<uint32_t>(std::lround(sigma * (1u << denoise::kFracBits) * scale));
  p.lo = denoise::kWindow * sigma_q4;
  p.span = std::max<uint32_t>(1, denoise::kWindow * sigma_q4 / 4);
  p.slope = ((256 - denoise::kFloor) << 16) / p.span;
  p.cut_q4 = static_cast<uint32_t>(std::lround(denoise::kCutLevels * (1u << denoise::kFracBits) * scale));
  p.maxval = (1u << bit_depth) - 1;
  p.shift = shift;
  return p;
}

Status check_denoise_args(const DenoiseArgs& a) {
  const PlaneRef& l = a.luma;
  if (l.data == nullptr || a.state == nullptr || a.sums == nullptr)
    return HISTEQ_ERROR(Code::invalid_argument, "denoise: null luma, state or sums");
  if (l.width <= 0 || l.height <= 0 || l.pitch < l.row_bytes())
    return HISTEQ_ERROR(Code::invalid_argument, "denoise: bad plane size or pitch");
  if (l.bytes_per_sample != 1 && l.bytes_per_sample != 2) return HISTEQ_ERROR(Code::invalid_argument, "denoise: 8- or 16-bit samples only");
  if (a.params.maxval > 1023 || a.params.shift < 0 || a.params.shift > 8 || (a.parity != 0 && a.parity != 1))
    return HISTEQ_ERROR(Code::invalid_argument, "denoise: up to 10 bits a sample");
  return Status::ok();
}

Status denoise_frame(const DenoiseArgs& a) {
  HISTEQ_TRY(check_denoise_args(a));
  return a.luma.bytes_per_sample == 1 ? run<uint8_t>(a) : run<uint16_t>(a);
}

}  // namespace histeq::eq
