#include "lab/engine.h"

#include <algorithm>
#include <chrono>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <functional>
#include <thread>

#include "core/cuda/check.h"
#include "core/cuda/numbers.h"

namespace histeq::lab {
namespace {

constexpr int kMaxBatch = 64;      // timed runs enqueued behind one spin kernel
constexpr int kMaxBins = 1024;

template <class F>
void parallel_rows(int height, size_t samples, F&& body) {
  const int threads = std::clamp(static_cast<int>(samples >> 22), 1, static_cast<int>(std::max(1u, std::thread::hardware_concurrency())));
  if (threads == 1) return body(0, height);
  std::vector<std::thread> pool;
  for (int i = 0; i < threads; ++i)
    pool.emplace_back(body, static_cast<int>(int64_t(height) * i / threads), static_cast<int>(int64_t(height) * (i + 1) / threads));
  for (auto& t : pool) t.join();
}

// Mirror-tiles a real frame over a larger plane (or crops it), offset by (ox, oy), so that every
// size can be filled with real content without resampling its histogram away. 16-bit planes get the
// 8-bit luma shifted up to their bit depth.
template <class T>
void tile_frame(const Plane8& frame, PlaneView<T> dst, int ox, int oy) {
  const int fw = frame.width(), fh = frame.height();
  const int shift = dst.bit_depth - 8;
  parallel_rows(dst.height, dst.samples(), [&](int y0, int y1) {
    std::vector<T> twice(2 * static_cast<size_t>(fw));
    for (int y = y0; y < y1; ++y) {
      const int t = (y + oy) % (2 * fh);
      const uint8_t* src = frame.view().row(t < fh ? t : 2 * fh - 1 - t);
      for (int x = 0; x < fw; ++x) twice[x] = twice[2 * fw - 1 - x] = static_cast<T>(shift >= 0 ? src[x] << shift : src[x] >> -shift);
      T* out = dst.row(y);
      int x = 0, pos = ox % (2 * fw);
      while (x < dst.width) {
        const int n = std::min(dst.width - x, 2 * fw - pos);
        std::memcpy(out + x, twice.data() + pos, n * sizeof(T));
        x += n;
        pos = 0;
      }
      const T marker = static_cast<T>((1u << dst.bit_depth) - 1u);  // padding marker, as synth does
      std::fill(out + dst.width, reinterpret_cast<T*>(reinterpret_cast<unsigned char*>(out) + dst.pitch), marker);
    }
  });
}

Result<AnyPlane> allocate(MemoryKind kind, const CaseSpec& s, size_t pitch) {
  AnyPlane a;
  a.bytes_per_sample = s.bytes_per_sample;
  if (s.bytes_per_sample == 1) {
    auto p = Plane8::allocate(kind, s.size.width, s.size.height, pitch, s.bit_depth);
    if (!p) return p.status();
    a.p8 = std::move(p.value());
  } else {
    auto p = Plane16::allocate(kind, s.size.width, s.size.height, pitch, s.bit_depth);
    if (!p) return p.status();
    a.p16 = std::move(p.value());
  }
  return a;
}

Status copy_any(const AnyPlane& src, AnyPlane& dst, cudaStream_t stream) {
  return dst.bytes_per_sample == 1 ? copy_plane(src.ref(), dst.p8.view(), stream) : copy_plane(src.ref(), dst.p16.view(), stream);
}

}  // namespace

Result<SizeSpec> parse_size(const std::string& s) {
  if (s == "1080p") return SizeSpec{s, 1920, 1080};
  if (s == "4k") return SizeSpec{s, 3840, 2160};
  if (s == "8k") return SizeSpec{s, 8192, 8192};
  if (s == "1g") return SizeSpec{s, 32768, 32768};
  int w = 0, h = 0;
  if (parse_dimensions(s, "size", 1 << 20, w, h) && int64_t(w) * h < (int64_t(1) << 32)) return SizeSpec{s, w, h};
  return HISTEQ_ERROR(Code::invalid_argument, "bad size '" + s + "' (1080p, 4k, 8k, 1g or WxH)");
}

size_t pitch_for(const SizeSpec& s, int bytes_per_sample, bool padded) {
  const size_t row = static_cast<size_t>(s.width) * bytes_per_sample;
  return padded ? (row / 512 + 1) * 512 : row;
}

Result<InputSpec> parse_input(const std::string& s) {
  InputSpec in;
  in.name = s;
  if (s == "real") {
    in.real = true;
    return in;
  }
  // "gaussian8" is "gaussian:8"
  std::string spec = s;
  if (s.size() > 8 && s.compare(0, 8, "gaussian") == 0 && std::isdigit(static_cast<unsigned char>(s[8]))) spec = "gaussian:" + s.substr(8);
  const auto colon = spec.find(':');
  auto p = synth::parse_pattern(spec.substr(0, colon));
  if (!p) return HISTEQ_ERROR(Code::invalid_argument, "unknown input '" + s + "' (uniform, degenerate, natural, real, gaussian:SIGMA, colours:N)");
  in.pattern = *p;
  if (colon != std::string::npos) {
    char* end = nullptr;
    const unsigned long v = std::strtoul(spec.c_str() + colon + 1, &end, 10);
    if (end == spec.c_str() + colon + 1 || *end != '\0') return HISTEQ_ERROR(Code::invalid_argument, "bad parameter in input '" + s + "'");
    in.value = static_cast<uint32_t>(v);
  } else if (in.pattern == synth::Pattern::gaussian || in.pattern == synth::Pattern::colours) {
    return HISTEQ_ERROR(Code::invalid_argument, "input '" + s + "' needs a parameter, e.g. gaussian:32 or colours:5");
  }
  return in;
}

Stats summarize(std::vector<double> us) {
  Stats s;
  s.runs = static_cast<int>(us.size());
  if (us.empty()) return s;
  std::sort(us.begin(), us.end());
  const size_t n = us.size();
  s.median_us = n % 2 ? us[n / 2] : 0.5 * (us[n / 2 - 1] + us[n / 2]);
  s.p99_us = us[std::min(n - 1, static_cast<size_t>(std::ceil(0.99 * n)) - 1)];
  return s;
}

Result<std::unique_ptr<Engine>> Engine::create(const EngineOptions& opts) {
  std::unique_ptr<Engine> e(new Engine());
  e->o_ = opts;
  e->gpu_ = cuda::have_device();
  if (!e->gpu_) return e;
  auto d = cuda::device_info();
  if (!d) return d.status();
  e->dev_ = *d;
  auto st = cuda::Stream::create();
  if (!st) return st.status();
  e->stream_ = std::move(st.value());
  auto dh = cuda::DeviceArray<uint32_t>::allocate(size_t{kMaxBins} * hist::kMaxTiles * hist::kMaxTiles);
  if (!dh) return dh.status();
  e->d_hist_ = std::move(dh.value());
  auto dsum = cuda::DeviceArray<float>::allocate(kMaxBins);
  if (!dsum) return dsum.status();
  e->d_sums_ = std::move(dsum.value());
  auto ds = cuda::DeviceArray<uint32_t>::allocate(1);
  if (!ds) return ds.status();
  e->d_sink_ = std::move(ds.value());
  for (int i = 0; i < kMaxBatch; ++i) {
    auto a = cuda::Event::create(), b = cuda::Event::create();
    if (!a) return a.status();
    if (!b) return b.status();
    e->ev_start_.push_back(std::move(a.value()));
    e->ev_stop_.push_back(std::move(b.value()));
  }
  return e;
}

Status Engine::fill_real(const CaseSpec& spec, size_t index, AnyPlane& host) {
  if (frames_.empty()) return HISTEQ_ERROR(Code::invalid_argument, "input 'real' needs frames (give a video or image file)");
  const size_t f = spec.input.frame >= 0 ? static_cast<size_t>(spec.input.frame) % frames_.size() : index % frames_.size();
  const int ox = static_cast<int>(97 * index), oy = static_cast<int>(61 * index);
  if (host.bytes_per_sample == 1) tile_frame(frames_[f], host.p8.view(), ox, oy);
  else tile_frame(frames_[f], host.p16.view(), ox, oy);
  return Status::ok();
}

Status Engine::build(const CaseSpec& spec, CaseData& cd) {
  cd = CaseData{};
  cd.spec = spec;
  cd.pitch = pitch_for(spec.size, spec.bytes_per_sample, spec.padded);
  cd.bytes = static_cast<size_t>(spec.size.width) * spec.size.height * (spec.bytes_per_sample + (spec.weighted ? sizeof(float) : 0));
  const size_t bytes = cd.pitch * spec.size.height;
  // Rotate over enough buffers that their total is at least twice the L2 (or a typical CPU L3).
  const size_t cache = gpu_ ? dev_.l2_bytes : (size_t{64} << 20);
  size_t buffers = std::max<size_t>(3, (2 * cache + bytes - 1) / bytes);
  if (gpu_) {
    const size_t budget = dev_.global_mem_bytes / 2;
    if (buffers * bytes > budget) buffers = std::max<size_t>(1, budget / bytes);
    if (buffers < 3) return HISTEQ_ERROR(Code::out_of_memory, "not enough device memory for 3 buffers of " + spec.size.name);
  }
  const bool keep_all = !gpu_ || o_.keep_host_buffers;
  for (size_t i = 0; i < buffers; ++i) HISTEQ_TRY(build_buffer(spec, i, keep_all || i == 0 || i + 1 == buffers, cd));
  if (spec.weighted) HISTEQ_TRY(build_weights(spec, buffers, keep_all, cd));
  return build_references(cd);
}

Status Engine::build_buffer(const CaseSpec& spec, size_t i, bool keep, CaseData& cd) {
  AnyPlane host;
  if (keep || spec.input.real) {
    auto h = allocate(gpu_ ? MemoryKind::pinned : MemoryKind::host, spec, cd.pitch);
    if (!h) return h.status();
    host = std::move(h.value());
  }
  const uint32_t seed = 1000u + static_cast<uint32_t>(i);
  if (gpu_) {
    auto d = allocate(MemoryKind::device, spec, cd.pitch);
    if (!d) return d.status();
    if (spec.input.real) {
      HISTEQ_TRY(fill_real(spec, i, host));
      HISTEQ_TRY(copy_any(host, *d, stream_.get()));
    } else {
      HISTEQ_TRY(d->bytes_per_sample == 1 ? synth::fill_device(d->p8.view(), spec.input.pattern, seed, spec.input.value, stream_.get())
                                          : synth::fill_device(d->p16.view(), spec.input.pattern, seed, spec.input.value, stream_.get()));
      if (keep) HISTEQ_TRY(copy_any(*d, host, stream_.get()));
    }
    HISTEQ_TRY(stream_.synchronize());
    cd.dev.push_back(std::move(d.value()));
  } else if (spec.input.real) {
    HISTEQ_TRY(fill_real(spec, i, host));
  } else {
    HISTEQ_TRY(host.bytes_per_sample == 1 ? synth::fill_host(host.p8.view(), spec.input.pattern, seed, spec.input.value)
                                          : synth::fill_host(host.p16.view(), spec.input.pattern, seed, spec.input.value));
  }
  if (keep) cd.host.push_back(std::move(host));
  return Status::ok();
}

Status Engine::build_references(CaseData& cd) {
  const CaseSpec& spec = cd.spec;
  auto ref = hist::create_kernel("cpu_reference");
  if (!ref) return ref.status();
  for (bool last : {false, true}) {
    auto& out = last ? cd.reference_last : cd.reference_first;
    out.assign(spec.counters(), 0);
    const PlaneRef plane = (last ? cd.host.back() : cd.host.front()).ref();
    if (spec.tiled) {
      HISTEQ_TRY(hist::compute_tiles(**ref, plane, spec.tiles, {out.data(), spec.bins, MemoryKind::host}));
      continue;
    }
    if (!spec.weighted) {
      HISTEQ_TRY(hist::compute(**ref, plane, {out.data(), spec.bins, MemoryKind::host}));
      continue;
    }
    auto& sums = last ? cd.ref_sums_last : cd.ref_sums_first;
    sums.assign(spec.bins, 0.f);
    HISTEQ_TRY(hist::compute(**ref, plane, (last ? cd.weights_host.back() : cd.weights_host.front()).cview(),
                             {out.data(), spec.bins, MemoryKind::host, sums.data()}));
  }
  return Status::ok();
}

Status Engine::build_weights(const CaseSpec& spec, size_t buffers, bool keep_all, CaseData& cd) {
  const int w = spec.size.width, h = spec.size.height;
  for (size_t i = 0; i < buffers; ++i) {
    const bool keep = keep_all || i == 0 || i + 1 == buffers;
    auto host = PlaneF::allocate(gpu_ ? MemoryKind::pinned : MemoryKind::host, w, h);
    if (!host) return host.status();
    const uint32_t seed = 5000u + static_cast<uint32_t>(i);
    parallel_rows(h, host->view().samples(), [&](int y0, int y1) {
      for (int y = y0; y < y1; ++y) {
        float* row = host->view().row(y);
        for (int x = 0; x < w; ++x)
          row[x] = static_cast<float>(synth::hash_xy(static_cast<uint32_t>(x), static_cast<uint32_t>(y), seed) >> 8) * (1.f / 16777216.f);
      }
    });
    if (gpu_) {
      auto dev = PlaneF::allocate(MemoryKind::device, w, h);
      if (!dev) return dev.status();
      HISTEQ_CUDA_TRY(cudaMemcpy2DAsync(dev->data(), dev->pitch(), host->data(), host->pitch(), host->view().row_bytes(), h,
                                        cudaMemcpyHostToDevice, stream_.get()));
      HISTEQ_TRY(stream_.synchronize());
      cd.weights_dev.push_back(std::move(dev.value()));
    }
    if (keep) cd.weights_host.push_back(std::move(host.value()));
  }
  return Status::ok();
}

Status Engine::run_kernel(hist::Kernel& k, const CaseData& cd, size_t i, bool device, uint32_t* counts, float* sums) {
  const CaseSpec& spec = cd.spec;
  const PlaneRef plane = device ? cd.dev[i].ref() : cd.host[i].ref();
  const hist::HistogramView out{counts, spec.bins, device ? MemoryKind::device : MemoryKind::host, spec.weighted ? sums : nullptr};
  cudaStream_t stream = device ? stream_.get() : nullptr;
  if (spec.tiled) return hist::compute_tiles(k, plane, spec.tiles, out, stream);
  if (spec.weighted) return hist::compute(k, plane, (device ? cd.weights_dev[i] : cd.weights_host[i]).cview(), out, stream);
  return hist::compute(k, plane, out, stream);
}

Result<std::vector<uint32_t>> Engine::histogram_of(hist::Kernel& k, const CaseData& cd, bool last, std::vector<float>& sums) {
  const size_t n = cd.spec.counters();
  const int bins = cd.spec.bins;
  const bool weighted = cd.spec.weighted;
  std::vector<uint32_t> h(n, 0xDEADBEEFu);  // poisoned: a counter the kernel skips shows up
  sums.assign(weighted ? bins : 0, std::nanf(""));
  if (k.info().backend == Backend::cpu) {
    HISTEQ_TRY(run_kernel(k, cd, last ? cd.host.size() - 1 : 0, false, h.data(), sums.data()));
    return h;
  }
  HISTEQ_CUDA_TRY(cudaMemsetAsync(d_hist_.data(), 0xA5, d_hist_.bytes(), stream_.get()));
  HISTEQ_CUDA_TRY(cudaMemsetAsync(d_sums_.data(), 0xFF, d_sums_.bytes(), stream_.get()));  // NaN poison
  HISTEQ_TRY(run_kernel(k, cd, last ? cd.dev.size() - 1 : 0, true, d_hist_.data(), d_sums_.data()));
  HISTEQ_CUDA_TRY(cudaMemcpyAsync(h.data(), d_hist_.data(), sizeof(uint32_t) * n, cudaMemcpyDeviceToHost, stream_.get()));
  if (weighted)
    HISTEQ_CUDA_TRY(cudaMemcpyAsync(sums.data(), d_sums_.data(), sizeof(float) * bins, cudaMemcpyDeviceToHost, stream_.get()));
  HISTEQ_TRY(stream_.synchronize());
  return h;
}

Result<Stats> Engine::time_gpu(const std::function<Status(size_t)>& launch, size_t buffers) {
  for (int i = 0; i < o_.warmup; ++i) HISTEQ_TRY(launch(static_cast<size_t>(i) % buffers));
  HISTEQ_TRY(stream_.synchronize());
  std::vector<double> us;
  us.reserve(o_.runs);
  size_t next = 1;
  while (static_cast<int>(us.size()) < o_.runs) {
    const int batch = std::min(kMaxBatch, o_.runs - static_cast<int>(us.size()));
    // Enqueueing costs the host ~10 us a run; the spin covers that, capped at 20 ms.
    HISTEQ_TRY(hist::gpu_busy_wait(std::min(20000.0, batch * 15.0 + 100.0), stream_.get()));
    for (int b = 0; b < batch; ++b) {
      HISTEQ_TRY(ev_start_[b].record(stream_.get()));
      HISTEQ_TRY(launch(next++ % buffers));
      HISTEQ_TRY(ev_stop_[b].record(stream_.get()));
    }
    for (int b = 0; b < batch; ++b) {
      auto ms = cuda::elapsed_ms(ev_start_[b], ev_stop_[b]);
      if (!ms) return ms.status();
      us.push_back(1000.0 * *ms);
    }
  }
  return summarize(std::move(us));
}

Result<Stats> Engine::time_cpu(hist::Kernel& k, const CaseData& cd) {
  std::vector<uint32_t> h(cd.spec.counters());
  std::vector<float> sums(cd.spec.bins);
  const size_t n = cd.host.size();
  auto run = [&](size_t i) { return run_kernel(k, cd, i % n, false, h.data(), sums.data()); };
  using clock = std::chrono::steady_clock;
  for (int i = 0; i < std::min(o_.warmup, 2); ++i) HISTEQ_TRY(run(i));
  std::vector<double> us;
  const auto budget_end = clock::now() + std::chrono::duration<double>(o_.cpu_budget_s);
  for (int i = 0; i < o_.runs; ++i) {
    const auto t0 = clock::now();
    HISTEQ_TRY(run(i + 1));
    const auto t1 = clock::now();
    us.push_back(std::chrono::duration<double, std::micro>(t1 - t0).count());
    if (i + 1 >= 5 && t1 > budget_end) break;
  }
  return summarize(std::move(us));
}

Measurement Engine::ceiling(const CaseData& cd) {
  Measurement m;
  if (!gpu_) {
    m.status = "error: no GPU";
    return m;
  }
  size_t span = 0;
  auto t = time_gpu([&](size_t i) -> Status {
    auto bytes = hist::read_ceiling(cd.dev[i].ref(), d_sink_.data(), stream_.get());
    if (!bytes) return bytes.status();
    span = *bytes;
    return Status::ok();
  }, cd.dev.size());
  if (!t) {
    m.status = "error: " + t.status().to_string();
    return m;
  }
  m.status = "ok";
  m.t = *t;
  m.gbps = span / (m.t.median_us * 1e3);  // bytes it read, padding included
  return m;
}

Measurement Engine::measure(hist::Kernel& k, const CaseData& cd) {
  Measurement m;
  const bool on_gpu = k.info().backend == Backend::gpu;
  if (cd.spec.weighted && !k.info().weighted) {
    m.status = "error: kernel '" + k.info().name + "' does not compute weighted histograms";
    return m;
  }
  if (cd.spec.tiled && !k.info().tiles) {
    m.status = "error: kernel '" + k.info().name + "' does not compute tiled histograms";
    return m;
  }
  if (on_gpu && !gpu_) {
    m.status = "error: no GPU";
    return m;
  }
  for (bool last : {false, true}) {
    std::vector<float> sums;
    auto h = histogram_of(k, cd, last, sums);
    if (!h) {
      m.status = "error: " + h.status().to_string();
      return m;
    }
    const auto& ref = last ? cd.reference_last : cd.reference_first;
    for (size_t i = 0; i < ref.size(); ++i) {
      if ((*h)[i] != ref[i]) {
        const std::string where = cd.spec.tiled ? "tile " + std::to_string(i / cd.spec.bins) + " bin " + std::to_string(i % cd.spec.bins)
                                                : "bin " + std::to_string(i);
        m.status = "FAILED: " + where + " is " + std::to_string((*h)[i]) + ", expected " + std::to_string(ref[i]);
        return m;
      }
    }
    // Weight sums: within 1e-5 relative of the double-precision reference (the API's promise).
    const auto& ref_sums = last ? cd.ref_sums_last : cd.ref_sums_first;
    for (size_t i = 0; i < ref_sums.size(); ++i) {
      const double want = ref_sums[i], got = sums[i];
      if (!(std::fabs(got - want) <= 1e-5 * std::max(1.0, std::fabs(want)))) {
        m.status = "FAILED: weight sum of bin " + std::to_string(i) + " is " + std::to_string(got) + ", expected " + std::to_string(want);
        return m;
      }
    }
  }
  Result<Stats> t = on_gpu ? time_gpu([&](size_t i) { return run_kernel(k, cd, i, true, d_hist_.data(), d_sums_.data()); },
                                    cd.dev.size())
                           : time_cpu(k, cd);
  if (!t) {
    m.status = "error: " + t.status().to_string();
    return m;
  }
  m.status = "ok";
  m.t = *t;
  m.gbps = cd.bytes / (m.t.median_us * 1e3);
  return m;
}

}  // namespace histeq::lab
