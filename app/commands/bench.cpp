// histeq bench: every histogram kernel on a matrix of sizes, pitches and contents, each checked
// against cpu_reference before it is timed.
//
// Method (DEVELOPERS.md, "Measuring"):
//  - inputs rotate over B >= 3 buffers whose total is at least twice the L2, so no run is served
//    from a cache the previous run warmed;
//  - GPU runs are timed one by one with CUDA events after a warm-up; a spin kernel is queued before
//    each batch so the whole batch is enqueued before the GPU reaches it, and host launch latency
//    does not leak into the events;
//  - median and p99 over >= 50 runs; effective GB/s = input bytes (no padding) / median;
//  - each result's ratio to cub and to the read ceiling (a read-only kernel with the same traversal)
//    are measured in the same run, on the same buffers.
// CPU kernels are timed with a steady clock, capped at --cpu-budget seconds per case (at least 5
// runs); the run count is printed with every result.
#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <fstream>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <thread>

#include "app/commands/commands.h"
#include "core/cuda/check.h"
#include "core/cuda/device.h"
#include "core/cuda/resources.h"
#include "core/histogram/histogram.h"
#include "core/image/synthetic.h"
#include "core/video/luma_reader.h"

namespace histeq::app {
namespace {

using hist::Backend;
using hist::HistogramView;
using hist::Kernel;

constexpr int kBins = 256;
constexpr int kMaxBatch = 64;  // timed runs enqueued behind one spin kernel

struct SizeSpec {
  std::string name;
  int width = 0, height = 0;
};

Result<SizeSpec> parse_size(const std::string& s) {
  if (s == "1080p") return SizeSpec{s, 1920, 1080};
  if (s == "4k") return SizeSpec{s, 3840, 2160};
  if (s == "8k") return SizeSpec{s, 8192, 8192};
  if (s == "1g") return SizeSpec{s, 32768, 32768};  // 1 GiB of 8-bit samples
  int w = 0, h = 0;
  char extra = 0;
  if (std::sscanf(s.c_str(), "%dx%d%c", &w, &h, &extra) == 2 && w > 0 && h > 0 && int64_t(w) * h < (int64_t(1) << 32))
    return SizeSpec{s, w, h};
  return HISTEQ_ERROR(Code::invalid_argument, "bad size '" + s + "' (1080p, 4k, 8k, 1g or WxH)");
}

// Padded pitch: the next multiple of 512 bytes above the row, as a pitched allocator would give.
size_t pitch_for(const SizeSpec& s, bool padded) {
  const size_t row = static_cast<size_t>(s.width);
  return padded ? (row / 512 + 1) * 512 : row;
}

struct Stats {
  double median_us = 0, p99_us = 0;
  int runs = 0;
};

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

struct Row {
  std::string size, pitch_kind, input, kernel, backend, status;
  int width = 0, height = 0;
  size_t pitch = 0, bytes = 0;
  int buffers = 0;
  Stats t;
  double gbps = 0, x_cub = 0, x_ceiling = 0;
};

// The buffers of one case: device planes (when there is a GPU) and host planes (when a CPU kernel
// runs, and always buffer 0 for the reference).
struct CaseData {
  std::vector<Plane8> dev, host;
  std::vector<uint32_t> reference;  // cpu_reference on buffer 0
  std::vector<uint32_t> reference_last;  // on the last buffer
};

// Mirror-tiles a real frame over a larger plane (or crops it), offset by (ox, oy), so that every
// size can be filled with real content without resampling its histogram away.
void tile_frame(const Plane8& frame, PlaneView<uint8_t> dst, int ox, int oy) {
  const int fw = frame.width(), fh = frame.height();
  auto body = [&](int y0, int y1) {
    std::vector<uint8_t> twice(2 * static_cast<size_t>(fw));
    for (int y = y0; y < y1; ++y) {
      const int t = (y + oy) % (2 * fh);
      const uint8_t* src = frame.view().row(t < fh ? t : 2 * fh - 1 - t);
      for (int x = 0; x < fw; ++x) twice[x] = twice[2 * fw - 1 - x] = src[x];
      uint8_t* out = dst.row(y);
      int x = 0, pos = ox % (2 * fw);
      while (x < dst.width) {
        const int n = std::min(dst.width - x, 2 * fw - pos);
        std::memcpy(out + x, twice.data() + pos, n);
        x += n;
        pos = 0;
      }
      std::memset(out + dst.width, 0xFF, dst.pitch - dst.width);  // padding marker, as synth does
    }
  };
  const int threads = std::clamp(static_cast<int>(dst.samples() >> 22), 1, static_cast<int>(std::max(1u, std::thread::hardware_concurrency())));
  std::vector<std::thread> pool;
  for (int i = 0; i < threads; ++i) pool.emplace_back(body, dst.height * int64_t(i) / threads, dst.height * int64_t(i + 1) / threads);
  for (auto& th : pool) th.join();
}

class Bench {
 public:
  explicit Bench(const BenchOptions& o) : o_(o) {}
  int run();

 private:
  Status prepare_kernels();
  Status build_case(const SizeSpec& s, bool padded, const std::string& input, CaseData& cd);
  Result<std::vector<uint32_t>> histogram_of(Kernel& k, const CaseData& cd, size_t buffer);
  Result<Stats> time_gpu(const std::function<Status(size_t)>& launch, size_t buffers);
  Result<Stats> time_cpu(Kernel& k, const CaseData& cd);
  void print_header() const;
  void print_row(const Row& r) const;
  Status write_outputs() const;

  const BenchOptions& o_;
  bool gpu_ = false;
  cuda::DeviceInfo dev_;
  std::vector<std::unique_ptr<Kernel>> kernels_;
  std::vector<std::string> labels_;  // kernel name, or name@blocks in a --max-blocks sweep
  std::vector<Plane8> real_frames_;
  cuda::Stream stream_;
  std::vector<cuda::Event> ev_start_, ev_stop_;
  cuda::DeviceArray<uint32_t> d_hist_, d_sink_;
  std::vector<Row> rows_;
};

Status Bench::prepare_kernels() {
  std::vector<std::string> names = o_.kernels;
  const bool explicit_kernels = !names.empty();
  if (names.empty()) names = hist::kernel_names();
  for (const auto& n : names) {
    const hist::KernelEntry* e = hist::find_kernel(n);
    if (e == nullptr) return hist::create_kernel(n).status();  // the "unknown kernel (known: ...)" message
    // By default, no aliases (they repeat their target) and no kernel that cannot do kBins bins.
    if (!explicit_kernels && (!e->info.alias_of.empty() || !e->info.supports(1, kBins))) continue;
    if (e->info.backend == Backend::gpu && !gpu_) {
      if (explicit_kernels) return HISTEQ_ERROR(Code::no_device, "kernel '" + n + "' needs a CUDA device and none is available");
      continue;
    }
    for (int mb : o_.max_blocks) {
      if (mb < 0) return HISTEQ_ERROR(Code::invalid_argument, "--max-blocks values must be >= 0");
      auto k = hist::create_kernel(n, {mb});
      if (!k) return k.status();
      kernels_.push_back(std::move(k.value()));
      labels_.push_back(mb == 0 ? n : n + "@" + std::to_string(mb));
    }
  }
  if (kernels_.empty()) return HISTEQ_ERROR(Code::invalid_argument, "no kernel to run");
  return Status::ok();
}

Status Bench::build_case(const SizeSpec& s, bool padded, const std::string& input, CaseData& cd) {
  const size_t pitch = pitch_for(s, padded);
  const size_t bytes = pitch * s.height;
  // Rotate over enough buffers that their total is at least twice the L2 (or a typical CPU L3).
  const size_t cache = gpu_ ? dev_.l2_bytes : (size_t{64} << 20);
  size_t buffers = std::max<size_t>(3, (2 * cache + bytes - 1) / bytes);
  const bool need_host_all = std::any_of(kernels_.begin(), kernels_.end(), [](auto& k) { return k->info().backend == Backend::cpu; });
  if (gpu_) {
    const size_t free_target = dev_.global_mem_bytes / 2;
    if (buffers * bytes > free_target) buffers = std::max<size_t>(1, free_target / bytes);
    if (buffers < 3) return HISTEQ_ERROR(Code::out_of_memory, "not enough device memory for 3 buffers of " + s.name);
  }
  const bool is_real = input == "real";
  Result<synth::Pattern> pattern = is_real ? Result<synth::Pattern>(synth::Pattern::natural) : synth::parse_pattern(input);
  if (!pattern) return pattern.status();

  for (size_t i = 0; i < buffers; ++i) {
    const bool host_copy = !gpu_ || need_host_all || i == 0 || i + 1 == buffers || is_real;
    Plane8 host;
    if (host_copy) {
      auto h = Plane8::allocate(gpu_ ? MemoryKind::pinned : MemoryKind::host, s.width, s.height, pitch);
      if (!h) return h.status();
      host = std::move(h.value());
    }
    const uint32_t seed = 1000u + static_cast<uint32_t>(i);
    if (gpu_) {
      auto d = Plane8::allocate(MemoryKind::device, s.width, s.height, pitch);
      if (!d) return d.status();
      if (is_real) {
        tile_frame(real_frames_[i % real_frames_.size()], host.view(), static_cast<int>(97 * i), static_cast<int>(61 * i));
        HISTEQ_TRY(copy_plane(host, d->view(), stream_.get()));
      } else {
        HISTEQ_TRY(synth::fill_device(d->view(), *pattern, seed, 77, stream_.get()));
        if (host_copy) HISTEQ_TRY(copy_plane(*d, host.view(), stream_.get()));
      }
      HISTEQ_TRY(stream_.synchronize());
      cd.dev.push_back(std::move(d.value()));
    } else if (is_real) {
      tile_frame(real_frames_[i % real_frames_.size()], host.view(), static_cast<int>(97 * i), static_cast<int>(61 * i));
    } else {
      HISTEQ_TRY(synth::fill_host(host.view(), *pattern, seed, 77));
    }
    // Keep host planes only where they are used: all of them for CPU kernels, else the two checked.
    if (host_copy && (need_host_all || !gpu_ || i == 0 || i + 1 == buffers)) cd.host.push_back(std::move(host));
  }
  auto ref = hist::create_kernel("cpu_reference");
  if (!ref) return ref.status();
  for (int which : {0, 1}) {
    auto& out = which == 0 ? cd.reference : cd.reference_last;
    out.assign(kBins, 0);
    HISTEQ_TRY(hist::compute(**ref, which == 0 ? cd.host.front() : cd.host.back(), {out.data(), kBins, MemoryKind::host}));
  }
  return Status::ok();
}

Result<std::vector<uint32_t>> Bench::histogram_of(Kernel& k, const CaseData& cd, size_t buffer) {
  std::vector<uint32_t> h(kBins, 0xDEADBEEFu);  // poisoned: a counter the kernel skips shows up
  if (k.info().backend == Backend::cpu) {
    HISTEQ_TRY(hist::compute(k, cd.host[buffer == 0 ? 0 : cd.host.size() - 1], {h.data(), kBins, MemoryKind::host}));
    return h;
  }
  HISTEQ_CUDA_TRY(cudaMemsetAsync(d_hist_.data(), 0xA5, d_hist_.bytes(), stream_.get()));
  HISTEQ_TRY(hist::compute(k, cd.dev[buffer], {d_hist_.data(), kBins, MemoryKind::device}, stream_.get()));
  HISTEQ_CUDA_TRY(cudaMemcpyAsync(h.data(), d_hist_.data(), d_hist_.bytes(), cudaMemcpyDeviceToHost, stream_.get()));
  HISTEQ_TRY(stream_.synchronize());
  return h;
}

Result<Stats> Bench::time_gpu(const std::function<Status(size_t)>& launch, size_t buffers) {
  for (int i = 0; i < o_.warmup; ++i) HISTEQ_TRY(launch(static_cast<size_t>(i) % buffers));
  HISTEQ_TRY(stream_.synchronize());
  // One timed run to size the spin that hides the host's enqueueing of each batch.
  HISTEQ_TRY(ev_start_[0].record(stream_.get()));
  HISTEQ_TRY(launch(0));
  HISTEQ_TRY(ev_stop_[0].record(stream_.get()));
  auto first = cuda::elapsed_ms(ev_start_[0], ev_stop_[0]);
  if (!first) return first.status();
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

Result<Stats> Bench::time_cpu(Kernel& k, const CaseData& cd) {
  std::vector<uint32_t> h(kBins);
  const size_t n = cd.host.size();
  using clock = std::chrono::steady_clock;
  for (int i = 0; i < std::min(o_.warmup, 2); ++i)
    HISTEQ_TRY(hist::compute(k, cd.host[i % n], {h.data(), kBins, MemoryKind::host}));
  std::vector<double> us;
  const auto budget_end = clock::now() + std::chrono::duration<double>(o_.cpu_budget_s);
  for (int i = 0; i < o_.runs; ++i) {
    const auto t0 = clock::now();
    HISTEQ_TRY(hist::compute(k, cd.host[(i + 1) % n], {h.data(), kBins, MemoryKind::host}));
    const auto t1 = clock::now();
    us.push_back(std::chrono::duration<double, std::micro>(t1 - t0).count());
    if (i + 1 >= 5 && t1 > budget_end) break;
  }
  return summarize(std::move(us));
}

void Bench::print_header() const {
  std::printf("%-10s %-6s %-10s %-18s %10s %10s %9s %7s %7s %5s  %s\n", "size", "pitch", "input", "kernel", "median_us",
              "p99_us", "GB/s", "x_cub", "x_ceil", "runs", "status");
}

void Bench::print_row(const Row& r) const {
  if (r.status != "ok") {
    std::printf("%-10s %-6s %-10s %-18s %10s %10s %9s %7s %7s %5s  %s\n", r.size.c_str(), r.pitch_kind.c_str(), r.input.c_str(),
                r.kernel.c_str(), "-", "-", "-", "-", "-", "-", r.status.c_str());
  } else {
    auto ratio = [](double v) {
      char b[16];
      if (v > 0) std::snprintf(b, sizeof(b), "%.2f", v);
      else std::snprintf(b, sizeof(b), "-");
      return std::string(b);
    };
    std::printf("%-10s %-6s %-10s %-18s %10.1f %10.1f %9.1f %7s %7s %5d  %s\n", r.size.c_str(), r.pitch_kind.c_str(),
                r.input.c_str(), r.kernel.c_str(), r.t.median_us, r.t.p99_us, r.gbps, ratio(r.x_cub).c_str(),
                ratio(r.x_ceiling).c_str(), r.t.runs, r.status.c_str());
  }
  std::fflush(stdout);
}

int Bench::run() {
  gpu_ = cuda::have_device();
  if (gpu_) {
    auto d = cuda::device_info();
    if (!d) return fail(d.status().to_string());
    dev_ = *d;
    std::printf("device: %s, %d SMs, L2 %zu MiB, driver %s, runtime %s\n", dev_.name.c_str(), dev_.sm_count,
                dev_.l2_bytes >> 20, cuda::version_string(dev_.driver_version).c_str(),
                cuda::version_string(dev_.runtime_version).c_str());
  } else {
    std::printf("device: none (no usable CUDA device): timing the CPU kernels only\n");
  }
  if (o_.runs < 1 || o_.warmup < 0) return fail("--runs must be >= 1 and --warmup >= 0", 2);
  if (Status s = prepare_kernels(); !s) return fail(s.to_string(), s.code() == Code::not_found ? 2 : 1);

  std::vector<std::string> inputs = o_.inputs;
  std::vector<std::string> sizes = o_.quick ? std::vector<std::string>{"1080p", "1921x1081"} : o_.sizes;
  for (const auto& in : inputs) {
    if (in != "real" && !synth::parse_pattern(in)) return fail("unknown input '" + in + "' (uniform, degenerate, natural, real)", 2);
  }
  if (std::find(inputs.begin(), inputs.end(), "real") != inputs.end()) {
    if (o_.input_file.empty()) {
      std::printf("note: input 'real' skipped: give a video or image file with --input\n");
      inputs.erase(std::remove(inputs.begin(), inputs.end(), "real"), inputs.end());
    } else {
      auto frames = video::read_luma_frames(o_.input_file, 8);
      if (!frames) return fail(frames.status().message());
      real_frames_ = std::move(frames.value());
      std::printf("real frames: %zu from %s (%dx%d), mirror-tiled to each size\n", real_frames_.size(), o_.input_file.c_str(),
                  real_frames_[0].width(), real_frames_[0].height());
    }
  }
  std::vector<SizeSpec> specs;
  for (const auto& s : sizes) {
    auto sp = parse_size(s);
    if (!sp) return fail(sp.status().message(), 2);
    specs.push_back(*sp);
  }
  for (const auto& p : o_.pitches)
    if (p != "tight" && p != "padded") return fail("bad pitch '" + p + "' (tight, padded)", 2);

  if (gpu_) {
    auto st = cuda::Stream::create();
    auto dh = cuda::DeviceArray<uint32_t>::allocate(kBins);
    auto ds = cuda::DeviceArray<uint32_t>::allocate(1);
    if (!st || !dh || !ds) return fail("cannot allocate benchmark resources on the GPU");
    stream_ = std::move(st.value());
    d_hist_ = std::move(dh.value());
    d_sink_ = std::move(ds.value());
    for (int i = 0; i < kMaxBatch; ++i) {
      auto a = cuda::Event::create(), b = cuda::Event::create();
      if (!a || !b) return fail("cannot create CUDA events");
      ev_start_.push_back(std::move(a.value()));
      ev_stop_.push_back(std::move(b.value()));
    }
  }

  print_header();
  for (const auto& spec : specs) {
    for (const auto& pk : o_.pitches) {
      const bool padded = pk == "padded";
      for (const auto& input : inputs) {
        CaseData cd;
        Row base;
        base.size = spec.name;
        base.width = spec.width;
        base.height = spec.height;
        base.pitch_kind = pk;
        base.pitch = pitch_for(spec, padded);
        base.input = input;
        base.bytes = static_cast<size_t>(spec.width) * spec.height;
        if (Status s = build_case(spec, padded, input, cd); !s) {
          Row r = base;
          r.kernel = "*";
          r.status = "error: " + s.to_string();
          print_row(r);
          rows_.push_back(r);
          continue;
        }
        base.buffers = static_cast<int>(gpu_ ? cd.dev.size() : cd.host.size());
        const size_t first_row = rows_.size();

        double ceiling_gbps = 0;
        if (gpu_) {
          size_t span = 0;
          auto t = time_gpu([&](size_t i) -> Status {
            auto bytes = hist::read_ceiling(cd.dev[i], d_sink_.data(), stream_.get());
            if (!bytes) return bytes.status();
            span = *bytes;
            return Status::ok();
          }, cd.dev.size());
          Row r = base;
          r.kernel = "read_ceiling";
          r.backend = "gpu";
          if (t) {
            r.t = *t;
            r.gbps = span / (r.t.median_us * 1e3);  // bytes it read, padding included
            ceiling_gbps = r.gbps;
            r.x_ceiling = 1.0;
            r.status = "ok";
          } else {
            r.status = "error: " + t.status().to_string();
          }
          rows_.push_back(r);
        }
        for (size_t ki = 0; ki < kernels_.size(); ++ki) {
          auto& k = kernels_[ki];
          Row r = base;
          r.kernel = labels_[ki];
          r.backend = k->info().backend == Backend::gpu ? "gpu" : "cpu";
          // Correctness first: the first and the last buffer must match cpu_reference exactly.
          std::string verdict = "ok";
          for (size_t b : {size_t{0}, static_cast<size_t>(base.buffers - 1)}) {
            auto h = histogram_of(*k, cd, b);
            if (!h) { verdict = "error: " + h.status().to_string(); break; }
            const auto& ref = b == 0 ? cd.reference : cd.reference_last;
            for (int i = 0; i < kBins; ++i) {
              if ((*h)[i] != ref[i]) {
                verdict = "FAILED: bin " + std::to_string(i) + " is " + std::to_string((*h)[i]) + ", expected " + std::to_string(ref[i]);
                break;
              }
            }
            if (verdict != "ok") break;
          }
          if (verdict == "ok") {
            Result<Stats> t = k->info().backend == Backend::gpu
                                  ? time_gpu([&](size_t i) {
                                      return hist::compute(*k, cd.dev[i], {d_hist_.data(), kBins, MemoryKind::device}, stream_.get());
                                    }, cd.dev.size())
                                  : time_cpu(*k, cd);
            if (t) {
              r.t = *t;
              r.gbps = base.bytes / (r.t.median_us * 1e3);
              r.x_ceiling = ceiling_gbps > 0 ? r.gbps / ceiling_gbps : 0;
            } else {
              verdict = "error: " + t.status().to_string();
            }
          }
          r.status = verdict;
          rows_.push_back(r);
        }
        // Ratios to cub, measured in this same case.
        double cub_us = 0;
        for (size_t i = first_row; i < rows_.size(); ++i)
          if (rows_[i].kernel == "cub" && rows_[i].status == "ok") cub_us = rows_[i].t.median_us;
        for (size_t i = first_row; i < rows_.size(); ++i) {
          if (cub_us > 0 && rows_[i].status == "ok") rows_[i].x_cub = cub_us / rows_[i].t.median_us;
          print_row(rows_[i]);
        }
      }
    }
  }
  if (Status s = write_outputs(); !s) return fail(s.to_string());
  const bool failed = std::any_of(rows_.begin(), rows_.end(), [](const Row& r) { return r.status != "ok"; });
  std::printf("\nx_cub = cub median / kernel median (>1: faster than cub); x_ceil = GB/s / read-ceiling GB/s.\n");
  if (failed) return fail("some kernels FAILED or errored (see the status column)");
  return 0;
}

Status Bench::write_outputs() const {
  std::string cmd;
  for (const auto& a : o_.argv) cmd += (cmd.empty() ? "" : " ") + a;
  if (!o_.csv.empty()) {
    const std::string tmp = o_.csv + ".tmp";
    std::ofstream f(tmp);
    if (!f) return HISTEQ_ERROR(Code::io_error, "cannot write " + o_.csv);
    f << "# " << cmd << "\n# device: " << (gpu_ ? dev_.name : std::string("none")) << "\n";
    f << "size,width,height,pitch_kind,pitch,input,kernel,backend,status,buffers,runs,median_us,p99_us,gbps,x_cub,x_ceiling\n";
    for (const auto& r : rows_) {
      std::string status = r.status;
      std::replace(status.begin(), status.end(), ',', ';');
      f << r.size << ',' << r.width << ',' << r.height << ',' << r.pitch_kind << ',' << r.pitch << ',' << r.input << ','
        << r.kernel << ',' << r.backend << ',' << status << ',' << r.buffers << ',' << r.t.runs << ',' << r.t.median_us << ','
        << r.t.p99_us << ',' << r.gbps << ',' << r.x_cub << ',' << r.x_ceiling << '\n';
    }
    f.close();
    if (!f || std::rename(tmp.c_str(), o_.csv.c_str()) != 0) return HISTEQ_ERROR(Code::io_error, "cannot write " + o_.csv);
  }
  if (!o_.json.empty()) {
    nlohmann::json j;
    j["command"] = cmd;
    const std::time_t now = std::time(nullptr);
    char stamp[32];
    std::strftime(stamp, sizeof(stamp), "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&now));
    j["date"] = stamp;
    if (gpu_) {
      j["device"] = {{"name", dev_.name}, {"sm_count", dev_.sm_count}, {"l2_bytes", dev_.l2_bytes},
                     {"driver", cuda::version_string(dev_.driver_version)},
                     {"runtime", cuda::version_string(dev_.runtime_version)}};
    } else {
      j["device"] = nullptr;
    }
    j["results"] = nlohmann::json::array();
    for (const auto& r : rows_) {
      j["results"].push_back({{"size", r.size}, {"width", r.width}, {"height", r.height}, {"pitch_kind", r.pitch_kind},
                              {"pitch", r.pitch}, {"input", r.input}, {"kernel", r.kernel}, {"backend", r.backend},
                              {"status", r.status}, {"buffers", r.buffers}, {"runs", r.t.runs},
                              {"median_us", r.t.median_us}, {"p99_us", r.t.p99_us}, {"gbps", r.gbps},
                              {"x_cub", r.x_cub}, {"x_ceiling", r.x_ceiling}});
    }
    const std::string tmp = o_.json + ".tmp";
    std::ofstream f(tmp);
    if (!f) return HISTEQ_ERROR(Code::io_error, "cannot write " + o_.json);
    f << j.dump(2) << '\n';
    f.close();
    if (!f || std::rename(tmp.c_str(), o_.json.c_str()) != 0) return HISTEQ_ERROR(Code::io_error, "cannot write " + o_.json);
  }
  return Status::ok();
}

}  // namespace

void add_bench_command(CLI::App& app, BenchOptions& o) {
  CLI::App* b = app.add_subcommand("bench", "time the histogram kernels (checked against cpu_reference first)");
  b->add_option("-k,--kernel", o.kernels, "kernels to run (default: all but aliases and 64-bin-only kernels); repeat or comma-separate")->delimiter(',');
  b->add_option("--inputs", o.inputs, "contents: uniform, degenerate, natural, real")->delimiter(',')->capture_default_str();
  b->add_option("--sizes", o.sizes, "sizes: 1080p, 4k, 8k, 1g (32768x32768 = 1 GiB), WxH")->delimiter(',')->capture_default_str();
  b->add_option("--pitches", o.pitches, "tight and/or padded")->delimiter(',')->capture_default_str();
  b->add_option("-i,--input", o.input_file, "video or image file for the 'real' input");
  b->add_option("--runs", o.runs, "timed runs per kernel and case (>= 50 for the published figures)")->capture_default_str();
  b->add_option("--warmup", o.warmup, "untimed runs first")->capture_default_str();
  b->add_option("--cpu-budget", o.cpu_budget_s, "seconds of timed runs per CPU kernel and case (at least 5 runs)")->capture_default_str();
  b->add_flag("--quick", o.quick, "only 1080p and 1921x1081");
  b->add_option("--max-blocks", o.max_blocks,
                "grid caps to sweep (0 = the policy's grid); each kernel runs once per value, labelled name@N")
      ->delimiter(',')->capture_default_str();
  b->add_option("--csv", o.csv, "write the results as CSV");
  b->add_option("--json", o.json, "write the results as JSON");
}

int run_bench(const BenchOptions& opts) { return Bench(opts).run(); }

}  // namespace histeq::app
