// The built-in synthetic source. Content, per frame n at t = n / fps (8-bit levels; 10-bit is x4):
//   100 + a static horizontal shading (+-8) + a diagonal triangle-wave ramp moving right (+-16)
//   + a horizontal sine band moving up (+-10) + moving grain (a fixed noise tile shifted each frame,
//   about +-5): low contrast, roughly 60..140 of 255;
//   a flat rectangle of exactly one value (92) bouncing left and right, with no grain;
//   a fade every 6 s: 4.5 s as is, then down to a one-value frame (all 16) and back within 1.5 s;
//   chroma: a slowly turning tint.
// Everything is tables: per frame a few rows of precomputed terms (on the host), per pixel four adds,
// a multiply and a clamp (synthetic_render.h), done by rows in parallel on the CPU or by one GPU
// thread per sample (SyntheticOptions::on_gpu): the same integers, so the same frames.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstring>
#include <numeric>
#include <thread>
#include <vector>

#include "core/cuda/check.h"
#include "core/cuda/device.h"
#include "core/cuda/resources.h"
#include "core/image/fork_join.h"
#include "core/image/synthetic.h"
#include "core/video/source.h"
#include "core/video/synthetic_render.h"
#include "core/cuda/numbers.h"

namespace histeq::video {
namespace {

using synth_detail::kTile;
using synth_detail::SynthFrame;
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

// Device copies of the tables (GPU source): the per-source ones uploaded once, the per-frame ones
// through a pinned staging buffer each frame.
struct GpuTables {
  cuda::Stream stream;
  cuda::Buffer noise, shade, frame_tables, staging;  // frame_tables/staging: ramp | band | ucol | vrow
  std::unique_ptr<FramePool> pool;
};

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
    info_.description = "synthetic " + std::to_string(o.width) + "x" + std::to_string(o.height) + " " + std::to_string(o.bit_depth) +
                        "-bit 4:2:0, " + format_number(o.fps, 4) + " fps, " + (total_ > 0 ? std::to_string(total_) + " frames" : "endless");

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
    const FrameFormat& f = info_.format;
    // Per-frame tables, one block: ramp | band | ucol | vrow.
    ramp_n_ = static_cast<size_t>(W + H / 2 + 1);
    tables_.resize(ramp_n_ + H + f.chroma_width() + f.chroma_height());
  }

  Status init(bool gpu, int threads) {
    if (gpu) {
      gpu_ = std::make_unique<GpuTables>();
      auto st = cuda::Stream::create();
      if (!st) return st.status();
      gpu_->stream = std::move(st.value());
      auto up = [&](cuda::Buffer& dst, const void* src, size_t bytes) -> Status {
        auto b = cuda::Buffer::allocate(MemoryKind::device, bytes);
        if (!b) return b.status();
        dst = std::move(b.value());
        HISTEQ_CUDA_TRY(cudaMemcpy(dst.data(), src, bytes, cudaMemcpyHostToDevice));
        return Status::ok();
      };
      HISTEQ_TRY(up(gpu_->noise, noise_.data(), noise_.size()));
      HISTEQ_TRY(up(gpu_->shade, shade_.data(), shade_.size() * sizeof(int16_t)));
      const size_t bytes = tables_.size() * sizeof(int16_t);
      auto t = cuda::Buffer::allocate(MemoryKind::device, bytes);
      if (!t) return t.status();
      gpu_->frame_tables = std::move(t.value());
      auto s = cuda::Buffer::allocate(MemoryKind::pinned, bytes);
      if (!s) return s.status();
      gpu_->staging = std::move(s.value());
      auto pool = FramePool::create(info_.format, MemoryKind::device);
      if (!pool) return pool.status();
      gpu_->pool = std::move(pool.value());
      auto dev = cuda::device_info();
      info_.decoder = "synthetic, drawn on the GPU (" + (dev ? dev->name : std::string("CUDA device")) + ")";
    } else {
      threads = std::max(1, threads);
      if (threads > 1) workers_ = std::make_unique<image::ForkJoin>(threads - 1);
      info_.decoder = "synthetic, drawn on the CPU (" + std::to_string(threads) + (threads == 1 ? " thread)" : " threads)");
    }
    return Status::ok();
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
    const double t = static_cast<double>(n_) / o_.fps;
    const SynthFrame sf = prepare(t);
    Result<FramePtr> fr = gpu_ ? gpu_->pool->get() : pool.get();
    if (!fr) return fr.status();
    Frame& f = **fr;
    if (gpu_) HISTEQ_TRY(render_on_gpu(sf, f));
    else render_on_cpu(sf, f);
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
  // The frame's tables and scalars (host): the only floating point of the picture, computed once.
  SynthFrame prepare(double t) {
    const int W = o_.width, H = o_.height;
    const FrameFormat& fmt = info_.format;
    int16_t* ramp = tables_.data();
    int16_t* band = ramp + ramp_n_;
    int16_t* ucol = band + H;
    int16_t* vrow = ucol + fmt.chroma_width();
    for (size_t s = 0; s < ramp_n_; ++s) ramp[s] = static_cast<int16_t>(std::lround(16 * tri((s + 240.0 * t) / 480.0)));
    for (int y = 0; y < H; ++y) band[y] = static_cast<int16_t>(std::lround(10 * std::sin(2 * kPi * (static_cast<double>(y) / H - 0.15 * t))));
    const double a = 2 * kPi * t / 7.0;
    for (int x = 0; x < fmt.chroma_width(); ++x)
      ucol[x] = static_cast<int16_t>(128 + std::lround(12 * std::cos(a + kPi * x / fmt.chroma_width())));
    for (int y = 0; y < fmt.chroma_height(); ++y)
      vrow[y] = static_cast<int16_t>(128 + static_cast<int>(std::lround(12 * std::sin(a + kPi * y / fmt.chroma_height()))));
    SynthFrame f;
    f.width = W;
    f.height = H;
    f.chroma_width = fmt.chroma_width();
    f.chroma_height = fmt.chroma_height();
    f.shift = o_.bit_depth - 8;
    // Fade: full for 4.5 s of every 6, then a V down to 0 and back; a short stretch at 0 is one value.
    const double p = std::fmod(t, 6.0);
    f.fade = 256;
    if (p >= 4.5) {
      const double u = std::abs(2.0 * (p - 4.5) / 1.5 - 1.0);
      f.fade = static_cast<int>(std::clamp(std::lround(256 * (1.1 * u - 0.1)), 0L, 256L));
    }
    f.rw = std::max(1, W / 5);
    f.rh = std::max(1, H / 4);
    f.rx = static_cast<int>(std::lround((W - f.rw) * (0.5 + 0.5 * tri(t / 8.0))));
    f.ry = std::min(H - f.rh, static_cast<int>(H * 0.55));
    f.dx = static_cast<int>((static_cast<int64_t>(n_) * 37) % kTile);
    f.dy = static_cast<int>((static_cast<int64_t>(n_) * 61) % kTile);
    f.ramp = ramp;
    f.band = band;
    f.ucol = ucol;
    f.vrow = vrow;
    f.shade = shade_.data();
    f.noise = noise_.data();
    return f;
  }

  void render_on_cpu(const SynthFrame& sf, Frame& f) {
    const int bands = workers_ ? workers_->size() : 1;
    auto rows = [&](int b) {
      const int y0 = static_cast<int>(static_cast<int64_t>(sf.height) * b / bands);
      const int y1 = static_cast<int>(static_cast<int64_t>(sf.height) * (b + 1) / bands);
      const int c0 = static_cast<int>(static_cast<int64_t>(sf.chroma_height) * b / bands);
      const int c1 = static_cast<int>(static_cast<int64_t>(sf.chroma_height) * (b + 1) / bands);
      if (o_.bit_depth > 8) draw_rows(sf, f.plane16(0), f.plane16(1), f.plane16(2), y0, y1, c0, c1);
      else draw_rows(sf, f.plane8(0), f.plane8(1), f.plane8(2), y0, y1, c0, c1);
    };
    if (workers_) workers_->run(bands, rows);
    else rows(0);
  }

  template <class T>
  static void draw_rows(const SynthFrame& sf, PlaneView<T> Y, PlaneView<T> U, PlaneView<T> V, int y0, int y1, int c0, int c1) {
    // synth_detail::luma_at, with what depends on the row hoisted out of the loop so that the
    // compiler vectorizes it (the same integers: the GPU's kernel calls luma_at itself).
    const int W = sf.width;
    const int flat = std::clamp(16 + (((92 - 16) * sf.fade) >> 8), 16, 235) << sf.shift;
    for (int y = y0; y < y1; ++y) {
      const int8_t* nz = sf.noise + static_cast<int64_t>((y + sf.dy) % synth_detail::kTile) * (W + synth_detail::kTile) + sf.dx;
      const int16_t* rp = sf.ramp + y / 2;
      const int16_t* sh = sf.shade;
      const int base = 100 + sf.band[y];
      const int fade = sf.fade, shift = sf.shift;
      T* out = Y.row(y);
      for (int x = 0; x < W; ++x) {
        int v = 16 + (((base + sh[x] + rp[x] + nz[x] - 16) * fade) >> 8);
        v = v < 16 ? 16 : (v > 235 ? 235 : v);
        out[x] = static_cast<T>(v << shift);
      }
      if (y >= sf.ry && y < sf.ry + sf.rh) std::fill(out + sf.rx, out + sf.rx + sf.rw, static_cast<T>(flat));
    }
    for (int y = c0; y < c1; ++y) {
      T* u = U.row(y);
      T* v = V.row(y);
      const T vy = static_cast<T>(sf.vrow[y] << sf.shift);
      for (int x = 0; x < sf.chroma_width; ++x) {
        u[x] = static_cast<T>(sf.ucol[x] << sf.shift);
        v[x] = vy;
      }
    }
  }

  Status render_on_gpu(SynthFrame sf, Frame& f) {
    const size_t bytes = tables_.size() * sizeof(int16_t);
    // The staging buffer is free: the previous frame's copy completed before that frame was handed out.
    std::memcpy(gpu_->staging.data(), tables_.data(), bytes);
    const cudaStream_t st = gpu_->stream.get();
    HISTEQ_CUDA_TRY(cudaMemcpyAsync(gpu_->frame_tables.data(), gpu_->staging.data(), bytes, cudaMemcpyHostToDevice, st));
    const auto* base = static_cast<const int16_t*>(gpu_->frame_tables.data());
    sf.ramp = base;
    sf.band = base + (sf.band - tables_.data());
    sf.ucol = base + (sf.ucol - tables_.data());
    sf.vrow = base + (sf.vrow - tables_.data());
    sf.shade = static_cast<const int16_t*>(gpu_->shade.data());
    sf.noise = static_cast<const int8_t*>(gpu_->noise.data());
    HISTEQ_TRY(synth_detail::render_gpu(sf, f.plane(0), f.plane(1), f.plane(2), st));
    // The frame is handed out complete: whoever takes it may use it on any stream.
    return gpu_->stream.synchronize();
  }

  SyntheticOptions o_;
  SourceInfo info_;
  int64_t total_ = 0;
  int64_t n_ = 0;                        // the next frame's number
  std::atomic<int64_t> produced_{0};      // frames produced (seeks move n_, not this)
  std::vector<int8_t> noise_;
  std::vector<int16_t> shade_;
  std::vector<int16_t> tables_;          // this frame's ramp | band | ucol | vrow
  size_t ramp_n_ = 0;
  std::unique_ptr<image::ForkJoin> workers_;
  std::unique_ptr<GpuTables> gpu_;
};

}  // namespace

Result<std::unique_ptr<Source>> open_synthetic(const SyntheticOptions& opts) {
  if (opts.width < 2 || opts.height < 2 || opts.width > 16384 || opts.height > 16384)
    return HISTEQ_ERROR(Code::invalid_argument, "synthetic size must be between 2x2 and 16384x16384");
  if (!(opts.fps > 0 && opts.fps <= 1000)) return HISTEQ_ERROR(Code::invalid_argument, "synthetic fps must be in (0, 1000]");
  if (opts.bit_depth != 8 && opts.bit_depth != 10) return HISTEQ_ERROR(Code::invalid_argument, "synthetic bit depth must be 8 or 10");
  if (opts.on_gpu && !cuda::have_device())
    return HISTEQ_ERROR(Code::no_device, "the synthetic source on the GPU needs a CUDA device");
  auto s = std::make_unique<SyntheticSource>(opts);
  // CPU: rows in parallel, as many threads as a frame's size calls for (about 1 per 2 Mpixels,
  // so 1080p60 fits one core and 4K60/8K spread over the machine's cores).
  const int want = static_cast<int>((static_cast<int64_t>(opts.width) * opts.height + 1'000'000) / 2'000'000);
  const int cores = image::usable_cores();
  HISTEQ_TRY(s->init(opts.on_gpu, opts.threads > 0 ? opts.threads : std::clamp(want, 1, std::min(cores, 8))));
  return std::unique_ptr<Source>(std::move(s));
}

}  // namespace histeq::video
