// The equalization's cost per frame (frame_cost.h gives the method).
#include "lab/frame_cost.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <thread>

#include <nlohmann/json.hpp>

#include "lab/results.h"
#include "core/cuda/check.h"
#include "core/equalize/operation.h"
#include "core/equalize/planner.h"
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

// One case's operation list, settings and scratch, on the rotating frames of one size.
class CaseRun {
 public:
  CaseRun(Backend backend, const video::FrameFormat& fmt, const std::vector<video::FramePtr>& frames)
      : backend_(backend), fmt_(fmt), frames_(frames) {}
  CaseRun(const CaseRun&) = delete;
  CaseRun& operator=(const CaseRun&) = delete;

  Status prepare(const FrameCostCase& c, const std::string& kernel) {
    ops_ = eq::standard_operations();
    for (auto& op : ops_) HISTEQ_TRY(op->prepare(backend_, 1, fmt_));
    const MemoryKind mem = backend_ == Backend::gpu ? MemoryKind::device : MemoryKind::host;
    auto counts = cuda::Buffer::allocate(mem, sizeof(uint32_t) * fmt_.bins());
    auto lut = cuda::Buffer::allocate(mem, sizeof(uint16_t) * fmt_.bins());
    // No location: the message is the whole story for the user, as it was when the CLI said it.
    if (!counts || !lut) return Status(Code::out_of_memory, "cannot allocate the histogram");
    counts_ = std::move(counts.value());
    lut_ = std::move(lut.value());
    settings_.kernel = eq::tiles_kernel(kernel, c.quality.mode, backend_);
    settings_.weight = eq::kWeightOne;
    settings_.quality = c.quality;
    settings_.fold = c.fold;
    s_.per.assign(ops_.size(), {});
    s_.ran.assign(ops_.size(), false);
    return Status::ok();
  }

  // The context of the next frame (frame n of the rotation).
  eq::FrameContext context(int n) {
    const video::Frame& f = *frames_[static_cast<size_t>(n) % frames_.size()];
    eq::FrameContext ctx;
    ctx.backend = backend_;
    ctx.format = &fmt_;
    ctx.frame_index = frame_no_;
    ctx.time_s = frame_no_ / 60.0;
    ++frame_no_;
    ctx.settings = &settings_;
    ctx.luma = f.plane(0);
    ctx.chroma[0] = f.plane(1);
    ctx.chroma[1] = f.plane(2);
    ctx.bins = fmt_.bins();
    ctx.counts = static_cast<uint32_t*>(counts_.data());
    ctx.lut = static_cast<uint16_t*>(lut_.data());
    return ctx;
  }

  // Operation k on ctx when active (as the equalizer: an operation another one did for this frame
  // sits out, e.g. the fused equalization of plain settings, its span empty).
  Status run_op(size_t k, eq::FrameContext& ctx, cudaStream_t stream) {
    if (!eq::works(*ops_[k], ctx)) return Status::ok();
    s_.ran[k] = true;
    return ops_[k]->run(ctx, stream);
  }

  Status time_gpu(int runs, const cuda::Stream& stream);
  Status time_cpu(int runs);
  FrameCost result(const FrameCostCase& c, const std::string& size, double plain_us) const;

 private:
  Backend backend_;
  const video::FrameFormat& fmt_;
  const std::vector<video::FramePtr>& frames_;
  eq::Operations ops_;
  eq::Settings settings_;
  cuda::Buffer counts_, lut_;
  int64_t frame_no_ = 0;
  Samples s_;
};

Status CaseRun::time_gpu(int runs, const cuda::Stream& stream) {
  constexpr int kBatch = 50;
  const size_t nops = ops_.size();
  std::vector<std::vector<cuda::Event>> ev(kBatch);
  for (auto& e : ev)
    for (size_t k = 0; k <= nops; ++k) {
      auto x = cuda::Event::create(true);
      if (!x) return x.status();
      e.push_back(std::move(x.value()));
    }
  int next = 0;
  for (int w = 0; w < FrameCostBench::kWarmup; ++w) {
    eq::FrameContext ctx = context(next++);
    for (auto& op : ops_)
      if (eq::works(*op, ctx)) HISTEQ_TRY(op->run(ctx, stream.get()));
  }
  while (static_cast<int>(s_.total.size()) < runs) {
    const int batch = std::min(kBatch, runs - static_cast<int>(s_.total.size()));
    HISTEQ_TRY(hist::gpu_busy_wait(std::min(20000.0, batch * 40.0 + 200.0), stream.get()));
    for (int b = 0; b < batch; ++b) {
      eq::FrameContext ctx = context(next++);
      (void)ev[b][0].record(stream.get());
      for (size_t k = 0; k < nops; ++k) {
        HISTEQ_TRY(run_op(k, ctx, stream.get()));
        (void)ev[b][k + 1].record(stream.get());
      }
    }
    HISTEQ_TRY(stream.synchronize());
    for (int b = 0; b < batch; ++b) {
      auto t = cuda::elapsed_ms(ev[b][0], ev[b][nops]);
      if (!t) return t.status();
      s_.total.push_back(*t * 1000);
      for (size_t k = 0; k < nops; ++k) {
        auto st = cuda::elapsed_ms(ev[b][k], ev[b][k + 1]);
        if (!st) return st.status();
        s_.per[k].push_back(*st * 1000);
      }
    }
  }
  return Status::ok();
}

Status CaseRun::time_cpu(int runs) {
  const int warmup = FrameCostBench::kWarmup;
  int next = 0;
  for (int n = 0; n < warmup + runs; ++n) {
    eq::FrameContext ctx = context(next++);
    const int64_t a = now_ns();
    int64_t at = a;
    for (size_t k = 0; k < ops_.size(); ++k) {
      HISTEQ_TRY(run_op(k, ctx, nullptr));
      const int64_t b = now_ns();
      if (n >= warmup) s_.per[k].push_back((b - at) / 1e3);
      at = b;
    }
    if (n >= warmup) s_.total.push_back((at - a) / 1e3);
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
  for (size_t k = 0; k < ops_.size(); ++k)
    if (s_.ran[k]) r.stages.emplace_back(video::stage_name(ops_[k]->stage()), summarize(s_.per[k]));
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
