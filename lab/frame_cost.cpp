// The equalization's cost per frame (frame_cost.h gives the method).
#include "lab/frame_cost.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <thread>

#include <nlohmann/json.hpp>

#include "lab/results.h"
#include "core/cuda/check.h"
#include "core/equalize/runner.h"
#include "core/video/frame.h"

namespace histeq::lab {
namespace {

int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// Paints a host frame: the luma from `real` (tiled) or a darkened synthetic picture, the chroma a tint.
void paint(video::Frame& f, const std::vector<Plane8>& real, int n) {
  const PlaneView<uint8_t> y = f.plane8(0);
  for (int r = 0; r < y.height; ++r) {
    uint8_t* row = y.row(r);
    for (int x = 0; x < y.width; ++x) {
      if (!real.empty()) {
        const Plane8& p = real[static_cast<size_t>(n) % real.size()];
        row[x] = p.view().row(r % p.height())[x % p.width()];
      } else {
        row[x] = static_cast<uint8_t>(16 + synth::sample(synth::Pattern::natural, x, r, 100 + n, 8, 0) * 5 / 8);
      }
    }
  }
  for (int i = 1; i < f.plane_count(); ++i) {
    const PlaneView<uint8_t> c = f.plane8(i);
    for (int r = 0; r < c.height; ++r)
      for (int x = 0; x < c.width; ++x) c.row(r)[x] = static_cast<uint8_t>(128 + (i == 1 ? 1 : -1) * ((x * 40) / c.width - 20));
  }
}

// The samples of one case: the whole list's time per frame, and each operation's.
struct Samples {
  std::vector<double> total;
  std::vector<std::vector<double>> per;
  std::vector<bool> ran;  // the operations that worked (Operation::active)
};

// The GPU's timing: an event before the first operation and after each one (also one that sat
// out, so that the spans stay consecutive), of the frames of one batch.
class BatchEvents final : public eq::TimingHook {
 public:
  static Result<BatchEvents> create(size_t frames, size_t ops, std::vector<bool>& ran) {
    BatchEvents b(ran);
    b.ev_.resize(frames);
    for (auto& e : b.ev_)
      for (size_t k = 0; k <= ops; ++k) {
        auto x = cuda::Event::create(true);
        if (!x) return x.status();
        e.push_back(std::move(x.value()));
      }
    return b;
  }
  Status begin(size_t frame, cudaStream_t stream) {
    frame_ = frame;
    return ev_[frame][0].record(stream);
  }
  Status finished(size_t k, const eq::Operation&, bool ran, cudaStream_t stream) override {
    if (ran) (*ran_)[k] = true;
    return ev_[frame_][k + 1].record(stream);
  }
  // Frame b's span from after operation k-1 (or the start) to after operation k, in microseconds.
  Result<double> span_us(size_t b, size_t from, size_t to) const {
    auto t = cuda::elapsed_ms(ev_[b][from], ev_[b][to]);
    if (!t) return t.status();
    return *t * 1000;
  }

 private:
  explicit BatchEvents(std::vector<bool>& ran) : ran_(&ran) {}
  std::vector<bool>* ran_;
  std::vector<std::vector<cuda::Event>> ev_;
  size_t frame_ = 0;
};

// The CPU's timing: the host clock after each operation's turn.
class HostClock final : public eq::TimingHook {
 public:
  HostClock(std::vector<int64_t>& marks, std::vector<bool>& ran) : marks_(marks), ran_(ran) {}
  Status finished(size_t k, const eq::Operation&, bool ran, cudaStream_t) override {
    if (ran) ran_[k] = true;
    marks_.push_back(now_ns());
    return Status::ok();
  }

 private:
  std::vector<int64_t>& marks_;
  std::vector<bool>& ran_;
};

// One case's runner and settings, on the rotating frames of one size.
class CaseRun {
 public:
  CaseRun(Backend backend, const video::FrameFormat& fmt, const std::vector<video::FramePtr>& frames)
      : backend_(backend), fmt_(fmt), frames_(frames) {}
  CaseRun(const CaseRun&) = delete;
  CaseRun& operator=(const CaseRun&) = delete;

  Status prepare(const FrameCostCase& c, const std::string& kernel) {
    auto r = eq::Runner::create(backend_, 1, fmt_);
    // No location: the message is the whole story for the user, as it was when the CLI said it.
    if (!r) return r.status().code() == Code::out_of_memory ? Status(Code::out_of_memory, "cannot allocate the histogram") : r.status();
    runner_ = std::move(r.value());
    settings_.kernel = eq::tiles_kernel(kernel, c.quality.mode, backend_);
    settings_.weight = eq::kWeightOne;
    settings_.quality = c.quality;
    settings_.fold = c.fold;
    const size_t n = runner_.operations().size();
    s_.per.assign(n, {});
    s_.ran.assign(n, false);
    return Status::ok();
  }

  // The next frame (frame n of the rotation) through the runner.
  Status run_frame(int n, cudaStream_t stream, eq::TimingHook* hook) {
    const video::Frame& f = *frames_[static_cast<size_t>(n) % frames_.size()];
    eq::FrameInput in;
    in.luma = f.plane(0);
    in.chroma[0] = f.plane(1);
    in.chroma[1] = f.plane(2);
    in.index = frame_no_;
    in.time_s = frame_no_ / 60.0;
    ++frame_no_;
    return runner_.run(in, settings_, 0, stream, hook);
  }

  Status time_gpu(int runs, const cuda::Stream& stream);
  Status time_cpu(int runs);
  FrameCost result(const FrameCostCase& c, const std::string& size, double plain_us) const;

 private:
  Backend backend_;
  const video::FrameFormat& fmt_;
  const std::vector<video::FramePtr>& frames_;
  eq::Runner runner_;
  eq::Settings settings_;
  int64_t frame_no_ = 0;
  Samples s_;
};

Status CaseRun::time_gpu(int runs, const cuda::Stream& stream) {
  constexpr int kBatch = 50;
  const size_t nops = runner_.operations().size();
  auto ev = BatchEvents::create(kBatch, nops, s_.ran);
  if (!ev) return ev.status();
  int next = 0;
  for (int w = 0; w < FrameCostBench::kWarmup; ++w) HISTEQ_TRY(run_frame(next++, stream.get(), nullptr));
  while (static_cast<int>(s_.total.size()) < runs) {
    const int batch = std::min(kBatch, runs - static_cast<int>(s_.total.size()));
    HISTEQ_TRY(hist::gpu_busy_wait(std::min(20000.0, batch * 40.0 + 200.0), stream.get()));
    for (int b = 0; b < batch; ++b) {
      HISTEQ_TRY(ev->begin(static_cast<size_t>(b), stream.get()));
      HISTEQ_TRY(run_frame(next++, stream.get(), &ev.value()));
    }
    HISTEQ_TRY(stream.synchronize());
    for (int b = 0; b < batch; ++b) {
      auto t = ev->span_us(static_cast<size_t>(b), 0, nops);
      if (!t) return t.status();
      s_.total.push_back(*t);
      for (size_t k = 0; k < nops; ++k) {
        auto st = ev->span_us(static_cast<size_t>(b), k, k + 1);
        if (!st) return st.status();
        s_.per[k].push_back(*st);
      }
    }
  }
  return Status::ok();
}

Status CaseRun::time_cpu(int runs) {
  const int warmup = FrameCostBench::kWarmup;
  std::vector<int64_t> marks;
  HostClock clock(marks, s_.ran);
  for (int n = 0; n < warmup + runs; ++n) {
    marks.assign(1, now_ns());
    HISTEQ_TRY(run_frame(n, nullptr, &clock));
    if (n < warmup) continue;
    for (size_t k = 0; k + 1 < marks.size(); ++k) s_.per[k].push_back((marks[k + 1] - marks[k]) / 1e3);
    s_.total.push_back((marks.back() - marks.front()) / 1e3);
  }
  return Status::ok();
}

FrameCost CaseRun::result(const FrameCostCase& c, const std::string& size, double plain_us) const {
  FrameCost r;
  r.size = size;
  r.name = c.name;
  r.quality = eq::describe(c.quality);
  r.total = summarize(s_.total);
  if (c.name == "plain") plain_us = r.total.median_us;
  r.x_plain = plain_us > 0 ? r.total.median_us / plain_us : 0;
  const eq::Operations& ops = runner_.operations();
  for (size_t k = 0; k < ops.size(); ++k)
    if (s_.ran[k]) r.stages.emplace_back(video::stage_name(ops[k]->stage()), summarize(s_.per[k]));
  return r;
}

// The rotating frames of one format: painted on the host, copied to `memory`.
Result<std::vector<video::FramePtr>> make_frames(const video::FrameFormat& fmt, int count, bool gpu, const std::vector<Plane8>& real,
                                                 const cuda::Stream& stream) {
  auto host_pool = video::FramePool::create(fmt, MemoryKind::host);
  if (!host_pool) return host_pool.status();
  auto pool = video::FramePool::create(fmt, gpu ? MemoryKind::device : MemoryKind::host);
  if (!pool) return pool.status();
  std::vector<video::FramePtr> frames;
  for (int n = 0; n < count; ++n) {
    auto h = (*host_pool)->get();
    auto f = (*pool)->get();
    if (!h || !f) return !h ? h.status() : f.status();
    paint(**h, real, n);
    for (int i = 0; i < fmt.plane_count(); ++i) {
      const PlaneRef dst = (*f)->plane(i);
      HISTEQ_TRY(copy_plane((*h)->plane(i),
                            PlaneView<uint8_t>{static_cast<uint8_t*>(const_cast<void*>(dst.data)), dst.width, dst.height, dst.pitch, 8,
                                               dst.memory},
                            stream.get()));
    }
    frames.push_back(std::move(f.value()));
  }
  if (gpu) HISTEQ_TRY(stream.synchronize());
  return frames;
}

}  // namespace

std::vector<FrameCostCase> frame_cost_cases(bool gpu) {
  eq::Quality clahe = eq::plain_quality();
  clahe.mode = eq::Mode::clahe;
  clahe.clip_limit = eq::default_quality().clip_limit;
  eq::Quality clahe_all = eq::default_quality();
  clahe_all.mode = eq::Mode::clahe;
  eq::Quality denoised = eq::default_quality();  // the denoiser's own cost: its row minus global+all's
  denoised.denoise = eq::kDenoiseOn;
  std::vector<FrameCostCase> cases{{"plain", eq::plain_quality()},
                                   {"global+all", eq::default_quality()},
                                   {"clahe 8x8", clahe},
                                   {"clahe 8x8+all", clahe_all},
                                   {"global+denoise", denoised}};
  // The GPU's fold against its steps (planner.h), where the kernel allows the fold.
  if (gpu) cases.insert(cases.begin() + 2, FrameCostCase{"global+steps", eq::default_quality(), false});
  return cases;
}

Result<std::unique_ptr<FrameCostBench>> FrameCostBench::create(bool gpu, const std::string& kernel, int runs, std::vector<Plane8> real) {
  std::unique_ptr<FrameCostBench> b(new FrameCostBench());
  b->gpu_ = gpu;
  b->kernel_ = kernel;
  b->runs_ = runs;
  b->real_ = std::move(real);
  b->device_ = std::to_string(std::max(1u, std::thread::hardware_concurrency())) + " threads";
  b->l2_ = 32u << 20;
  if (!gpu) return b;
  auto d = cuda::device_info();
  if (!d) return d.status();
  b->device_ = d->name;
  b->l2_ = d->l2_bytes;
  auto s = cuda::Stream::create();
  if (!s) return s.status();
  b->stream_ = std::move(s.value());
  return b;
}

Status FrameCostBench::run_size(const SizeSpec& size, const std::function<void(const FrameCost&)>& done) {
  const video::FrameFormat fmt{size.width, size.height, 8, 1, 1};
  const size_t frame_bytes = static_cast<size_t>(fmt.width) * fmt.height * 3 / 2;
  const int count = gpu_ ? static_cast<int>(std::max<size_t>(3, (2 * l2_ + frame_bytes - 1) / frame_bytes + 1)) : 3;
  auto frames = make_frames(fmt, count, gpu_, real_, stream_);
  if (!frames) return frames.status();
  const Backend backend = gpu_ ? Backend::gpu : Backend::cpu;
  double plain_us = 0;
  for (const FrameCostCase& c : frame_cost_cases(gpu_)) {
    CaseRun run(backend, fmt, *frames);
    HISTEQ_TRY(run.prepare(c, kernel_));
    HISTEQ_TRY(gpu_ ? run.time_gpu(runs_, stream_) : run.time_cpu(runs_));
    results_.push_back(run.result(c, size.name, plain_us));
    if (c.name == "plain") plain_us = results_.back().total.median_us;
    if (done) done(results_.back());
  }
  return Status::ok();
}

Status write_frame_cost_json(const std::string& path, const std::vector<FrameCost>& results, const std::string& command,
                             const std::string& device, bool gpu, const std::string& kernel) {
  nlohmann::json j;
  j["command"] = command;
  j["device"] = device;
  j["backend"] = gpu ? "gpu" : "cpu";
  j["kernel"] = kernel;
  j["units"] = "us";
  j["results"] = nlohmann::json::array();
  for (const auto& r : results) {
    nlohmann::json st = nlohmann::json::object();
    for (const auto& [n, s] : r.stages) st[n] = {{"median_us", s.median_us}, {"p99_us", s.p99_us}};
    j["results"].push_back({{"size", r.size}, {"case", r.name}, {"quality", r.quality}, {"runs", r.total.runs},
                            {"median_us", r.total.median_us}, {"p99_us", r.total.p99_us}, {"x_plain", r.x_plain}, {"stages", st}});
  }
  return write_file(path, [&](std::ostream& f) { f << j.dump(1) << '\n'; });
}

Status write_frame_cost_csv(const std::string& path, const std::vector<FrameCost>& results, const std::string& command,
                            const std::string& device, const std::string& kernel) {
  return write_file(path, [&](std::ostream& f) {
    f << "# " << command << "\n# device: " << device << ", kernel " << kernel << "\n";
    f << "size,case,quality,runs,median_us,p99_us,x_plain\n";
    for (const auto& r : results)
      f << r.size << ',' << r.name << ",\"" << r.quality << "\"," << r.total.runs << ',' << r.total.median_us << ','
        << r.total.p99_us << ',' << r.x_plain << '\n';
  });
}

}  // namespace histeq::lab
