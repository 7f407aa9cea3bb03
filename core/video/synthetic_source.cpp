// The built-in synthetic source. Content, per frame n at t = n / fps (8-bit levels; 10-bit is x4):
//   100 + a static horizontal shading (+-8) + a diagonal triangle-wave ramp moving right (+-16)
//   + a horizontal sine band moving up (+-10) + moving grain (a fixed noise tile shifted each frame,
//   about +-5): low contrast, roughly 60..140 of 255;
//   a flat rectangle of exactly one value (92) bouncing left and right, with no grain;
//   a fade every 6 s: 4.5 s as is, then down to a one-value frame (all 16) and back within 1.5 s;
//   chroma: a slowly turning tint.
// Everything is tables: per frame a few rows of precomputed terms, per pixel four adds, a multiply
// and a clamp, which the compiler vectorizes (about 1 ms per 1080p frame on one core).
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <numeric>
#include <vector>

#include "core/image/synthetic.h"
#include "core/video/source.h"

namespace histeq::video {
namespace {

constexpr int kTile = 256;  // noise tile rows; the tile is kTile wider than the frame so shifts stay contiguous
constexpr double kPi = 3.14159265358979323846;

int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

Rational rate_of(double fps) {
  if (std::abs(fps - std::round(fps)) < 1e-9) return {static_cast<int>(std::lround(fps)), 1};
  int num = static_cast<int>(std::lround(fps * 1000)), den = 1000;
  const int g = std::gcd(num, den);
  return {num / g, den / g};
}

double tri(double u) {  // triangle wave, period 1, in [-1, 1]
  const double f = u - std::floor(u);
  return 1.0 - 4.0 * std::abs(f - 0.5);
}

class SyntheticSource final : public Source {
 public:
  explicit SyntheticSource(const SyntheticOptions& o) : o_(o) {
    info_.name = "synthetic";
    info_.format.width = o.width;
    info_.format.height = o.height;
    info_.format.bit_depth = o.bit_depth;
    info_.frame_rate = rate_of(o.fps);
    info_.time_base = {info_.frame_rate.den, info_.frame_rate.num};
    total_ = o.duration_s > 0 ? std::max<int64_t>(1, std::llround(o.duration_s * o.fps)) : 0;
    info_.frames_hint = total_;
    info_.frames_exact = total_ > 0;
    info_.duration_s = total_ > 0 ? total_ / o.fps : 0;
    info_.color = {1 /*MPEG range*/, 1 /*BT709*/, 1 /*BT709*/, 1 /*BT709*/, 1 /*left*/};
    char d[160];
    std::snprintf(d, sizeof(d), "synthetic %dx%d %d-bit 4:2:0, %.4g fps, %s", o.width, o.height, o.bit_depth, o.fps,
                  total_ > 0 ? (std::to_string(total_) + " frames").c_str() : "endless");
    info_.description = d;

    const int W = o.width, H = o.height;
    noise_.resize(static_cast<size_t>(kTile) * (W + kTile));
    for (int y = 0; y < kTile; ++y)
      for (int x = 0; x < W + kTile; ++x) {
        // Triangular distribution: the sum of two uniform values in [-3, 3] (wraps horizontally every kTile).
        const uint32_t h = synth::hash_xy(static_cast<uint32_t>(x % kTile), static_cast<uint32_t>(y), 0x5eed);
        noise_[static_cast<size_t>(y) * (W + kTile) + x] = static_cast<int8_t>(static_cast<int>(h % 7) + static_cast<int>((h >> 8) % 7) - 6);
      }
    shade_.resize(W);
    for (int x = 0; x < W; ++x) shade_[x] = static_cast<int16_t>(std::lround(8 * std::cos(kPi * x / W)));
    ramp_.resize(W + H / 2 + 1);
    band_.resize(H);
    row_.resize(W);
  }

  const SourceInfo& info() const override { return info_; }
  SourceCounters counters() const override {
    SourceCounters c;
    c.frames = produced_.load();
    return c;
  }

  bool can_seek() const override { return true; }
  Status seek(double time_s) override {
    // Every frame is a function of its number alone, so a seek only moves the counter.
    int64_t n = time_s > 0 ? static_cast<int64_t>(std::ceil(time_s * o_.fps - 1e-6)) : 0;
    if (total_ > 0) n = std::min(n, total_);
    n_ = n;
    return Status::ok();
  }

  Result<FramePtr> next(FramePool& pool) override {
    if (total_ > 0 && n_ >= total_) return FramePtr();
    if (pool.format() != info_.format) return HISTEQ_ERROR(Code::invalid_argument, "frame pool format differs from the source's");
    const int64_t t0 = now_ns();
    auto fr = pool.get();
    if (!fr) return fr.status();
    Frame& f = **fr;
    const double t = static_cast<double>(n_) / o_.fps;
    if (o_.bit_depth > 8) render(f.plane16(0), f.plane16(1), f.plane16(2), t);
    else render(f.plane8(0), f.plane8(1), f.plane8(2), t);
    f.pts = n_;
    f.time_base = info_.time_base;
    f.time_s = t;
    f.index = n_;
    f.color = info_.color;
    f.timing.start_ns = t0;
    f.timing.set(stage::decode, (now_ns() - t0) / 1e6);
    ++n_;
    ++produced_;
    return std::move(fr.value());
  }

 private:
  template <class T>
  void render(PlaneView<T> Y, PlaneView<T> U, PlaneView<T> V, double t) {
    const int W = Y.width, H = Y.height;
    const int shift = o_.bit_depth - 8;
    for (size_t s = 0; s < ramp_.size(); ++s) ramp_[s] = static_cast<int16_t>(std::lround(16 * tri((s + 240.0 * t) / 480.0)));
    for (int y = 0; y < H; ++y) band_[y] = static_cast<int16_t>(std::lround(10 * std::sin(2 * kPi * (static_cast<double>(y) / H - 0.15 * t))));
    // Fade: full for 4.5 s of every 6, then a V down to 0 and back; a short stretch at 0 is one value.
    const double p = std::fmod(t, 6.0);
    int fade = 256;
    if (p >= 4.5) {
      const double u = std::abs(2.0 * (p - 4.5) / 1.5 - 1.0);
      fade = static_cast<int>(std::clamp(std::lround(256 * (1.1 * u - 0.1)), 0L, 256L));
    }
    const int rw = std::max(1, W / 5), rh = std::max(1, H / 4);
    const int rx = static_cast<int>(std::lround((W - rw) * (0.5 + 0.5 * tri(t / 8.0))));
    const int ry = std::min(H - rh, static_cast<int>(H * 0.55));
    const int dx = static_cast<int>((static_cast<int64_t>(n_) * 37) % kTile);
    const int dy = static_cast<int>((static_cast<int64_t>(n_) * 61) % kTile);
    for (int y = 0; y < H; ++y) {
      const int8_t* nz = noise_.data() + static_cast<size_t>((y + dy) % kTile) * (W + kTile) + dx;
      const int16_t* rp = ramp_.data() + y / 2;
      const int base = 100 + band_[y];
      int16_t* r = row_.data();
      for (int x = 0; x < W; ++x) r[x] = static_cast<int16_t>(base + shade_[x] + rp[x] + nz[x]);
      if (y >= ry && y < ry + rh) std::fill(r + rx, r + rx + rw, int16_t{92});
      T* out = Y.row(y);
      for (int x = 0; x < W; ++x) {
        int v = 16 + (((r[x] - 16) * fade) >> 8);
        v = std::clamp(v, 16, 235);
        out[x] = static_cast<T>(v << shift);
      }
    }
    const double a = 2 * kPi * t / 7.0;
    ucol_.resize(U.width);
    for (int x = 0; x < U.width; ++x) ucol_[x] = static_cast<int16_t>(128 + std::lround(12 * std::cos(a + kPi * x / U.width)));
    for (int y = 0; y < U.height; ++y) {
      T* u = U.row(y);
      T* v = V.row(y);
      const int vy = 128 + static_cast<int>(std::lround(12 * std::sin(a + kPi * y / U.height)));
      for (int x = 0; x < U.width; ++x) {
        u[x] = static_cast<T>(ucol_[x] << shift);
        v[x] = static_cast<T>(vy << shift);
      }
    }
  }

  SyntheticOptions o_;
  SourceInfo info_;
  int64_t total_ = 0;
  int64_t n_ = 0;                        // the next frame's number
  std::atomic<int64_t> produced_{0};      // frames produced (seeks move n_, not this)
  std::vector<int8_t> noise_;
  std::vector<int16_t> shade_, ramp_, band_, row_, ucol_;
};

}  // namespace

Result<std::unique_ptr<Source>> open_synthetic(const SyntheticOptions& opts) {
  if (opts.width < 2 || opts.height < 2 || opts.width > 16384 || opts.height > 16384)
    return HISTEQ_ERROR(Code::invalid_argument, "synthetic size must be between 2x2 and 16384x16384");
  if (!(opts.fps > 0 && opts.fps <= 1000)) return HISTEQ_ERROR(Code::invalid_argument, "synthetic fps must be in (0, 1000]");
  if (opts.bit_depth != 8 && opts.bit_depth != 10) return HISTEQ_ERROR(Code::invalid_argument, "synthetic bit depth must be 8 or 10");
  return std::unique_ptr<Source>(new SyntheticSource(opts));
}

}  // namespace histeq::video
