// histeq quality --bench: what the equalization costs per frame in each mode, with the operation
// list the equalizer runs (core/equalize/operation.h), on frames already where the equalizer works
// on them (device memory on the GPU, host memory on the CPU): no upload, download or decode.
//
// Method (as histeq bench): the frames rotate over enough buffers to exceed twice the L2 (so no
// frame is served from a cache its previous run warmed); after a warm-up, GPU frames are timed
// with CUDA events around the whole list and around each operation, in batches behind a spin
// kernel so host launch latency does not leak into the events; CPU frames with the steady clock.
// Median and p99 over the runs. The frames are equalized in place, run after run (the time of
// these operations does not depend on the picture's histogram enough to matter: method2 is
// data-independent; the gathers of apply are not).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <thread>

#include <nlohmann/json.hpp>

#include "app/commands/bench_engine.h"
#include "app/commands/commands.h"
#include "core/cuda/check.h"
#include "core/equalize/operation.h"
#include "core/equalize/planner.h"
#include "core/video/luma_reader.h"

namespace histeq::app {
namespace {

using bench::Stats;

struct Case {
  std::string name;
  eq::Quality quality;
};

std::vector<Case> cases() {
  eq::Quality clahe = eq::plain_quality();
  clahe.mode = eq::Mode::clahe;
  clahe.clip_limit = eq::default_quality().clip_limit;
  eq::Quality clahe_all = eq::default_quality();
  clahe_all.mode = eq::Mode::clahe;
  eq::Quality denoised = eq::default_quality();  // the denoiser's own cost: its row minus global+all's
  denoised.denoise = eq::kDenoiseOn;
  return {{"plain", eq::plain_quality()},
          {"global+all", eq::default_quality()},
          {"clahe 8x8", clahe},
          {"clahe 8x8+all", clahe_all},
          {"global+denoise", denoised}};
}

struct Result1 {
  std::string size, name, quality;
  Stats total;
  std::vector<std::pair<std::string, Stats>> stages;
  double x_plain = 0;
};

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

}  // namespace

int run_quality_bench(const QualityCliOptions& o) {
  const bool gpu = !o.eq.cpu && cuda::have_device();
  const Backend backend = gpu ? Backend::gpu : Backend::cpu;
  const std::string kernel = o.eq.kernel.empty() ? pipeline::default_kernel(backend) : o.eq.kernel;
  if (const hist::KernelEntry* e = hist::find_kernel(kernel); e == nullptr || (e->info.backend == Backend::gpu) != gpu)
    return fail("kernel '" + kernel + "' is not a " + (gpu ? "GPU" : "CPU") + " kernel here", 2);
  if (o.runs < 10) return fail("--runs must be at least 10", 2);
  std::vector<Plane8> real;
  if (!o.input.empty()) {
    auto r = video::read_luma_frames(o.input, 16);
    if (!r) return fail(r.status().to_string());
    real = std::move(r.value());
  }
  std::string device = std::to_string(std::max(1u, std::thread::hardware_concurrency())) + " threads";
  size_t l2 = 32u << 20;
  if (gpu) {
    auto d = cuda::device_info();
    if (!d) return fail(d.status().to_string());
    device = d->name;
    l2 = d->l2_bytes;
  }
  std::string cmd;
  for (const auto& a : o.argv) cmd += (cmd.empty() ? "" : " ") + a;
  const int warmup = 20;
  std::printf("histeq quality --bench: %s %s, %s; %s, %d frames a case after %d warm-up, %s\n", gpu ? "GPU" : "CPU", device.c_str(),
              kernel.c_str(), gpu ? "CUDA events" : "steady clock", o.runs, warmup,
              real.empty() ? "synthetic pictures" : ("frames of " + o.input).c_str());
  std::printf("%-6s %-14s %10s %10s %8s   per stage (median us)\n", "size", "case", "median_us", "p99_us", "x_plain");

  std::vector<Result1> results;
  cuda::Stream stream;
  if (gpu) {
    auto s = cuda::Stream::create();
    if (!s) return fail(s.status().to_string());
    stream = std::move(s.value());
  }
  for (const auto& size_name : o.sizes) {
    auto sz = bench::parse_size(size_name);
    if (!sz) return fail(sz.status().message(), 2);
    const video::FrameFormat fmt{sz->width, sz->height, 8, 1, 1};
    const size_t frame_bytes = static_cast<size_t>(fmt.width) * fmt.height * 3 / 2;
    const int count = gpu ? static_cast<int>(std::max<size_t>(3, (2 * l2 + frame_bytes - 1) / frame_bytes + 1)) : 3;
    auto host_pool = video::FramePool::create(fmt, MemoryKind::host);
    if (!host_pool) return fail(host_pool.status().to_string());
    auto pool = video::FramePool::create(fmt, gpu ? MemoryKind::device : MemoryKind::host);
    if (!pool) return fail(pool.status().to_string());
    std::vector<video::FramePtr> frames;
    for (int n = 0; n < count; ++n) {
      auto h = (*host_pool)->get();
      auto f = (*pool)->get();
      if (!h || !f) return fail((!h ? h.status() : f.status()).to_string());
      paint(**h, real, n);
      for (int i = 0; i < fmt.plane_count(); ++i) {
        const PlaneRef dst = (*f)->plane(i);
        Status s = copy_plane((*h)->plane(i), PlaneView<uint8_t>{static_cast<uint8_t*>(const_cast<void*>(dst.data)), dst.width,
                                                                 dst.height, dst.pitch, 8, dst.memory},
                              stream.get());
        if (!s) return fail(s.to_string());
      }
      frames.push_back(std::move(f.value()));
    }
    if (gpu)
      if (Status s = stream.synchronize(); !s) return fail(s.to_string());
    double plain_us = 0;
    for (const Case& c : cases()) {
      eq::Operations ops = eq::standard_operations();
      for (auto& op : ops)
        if (Status s = op->prepare(backend, 1, fmt); !s) return fail(s.to_string());
      auto counts = cuda::Buffer::allocate(gpu ? MemoryKind::device : MemoryKind::host, sizeof(uint32_t) * fmt.bins());
      auto lut = cuda::Buffer::allocate(gpu ? MemoryKind::device : MemoryKind::host, sizeof(uint16_t) * fmt.bins());
      if (!counts || !lut) return fail("cannot allocate the histogram");
      eq::Settings settings;
      settings.kernel = eq::tiles_kernel(kernel, c.quality.mode, backend);
      settings.weight = eq::kWeightOne;
      settings.quality = c.quality;
      const size_t nops = ops.size();
      std::vector<double> total;
      std::vector<std::vector<double>> per(nops);
      std::vector<bool> ran(nops, false);  // the operations that worked (eq::works: the plan and Operation::active)
      int64_t frame_no = 0;
      auto context = [&](int n) {
        const video::Frame& f = *frames[static_cast<size_t>(n) % frames.size()];
        eq::FrameContext ctx;
        ctx.backend = backend;
        ctx.format = &fmt;
        ctx.frame_index = frame_no;
        ctx.time_s = frame_no / 60.0;
        ++frame_no;
        ctx.settings = &settings;
        ctx.luma = f.plane(0);
        ctx.chroma[0] = f.plane(1);
        ctx.chroma[1] = f.plane(2);
        ctx.bins = fmt.bins();
        ctx.counts = static_cast<uint32_t*>(counts->data());
        ctx.lut = static_cast<uint16_t*>(lut->data());
        return ctx;
      };
      if (gpu) {
        constexpr int kBatch = 50;
        std::vector<std::vector<cuda::Event>> ev(kBatch);
        for (auto& e : ev)
          for (size_t k = 0; k <= nops; ++k) {
            auto x = cuda::Event::create(true);
            if (!x) return fail(x.status().to_string());
            e.push_back(std::move(x.value()));
          }
        int next = 0;
        for (int w = 0; w < warmup; ++w) {
          eq::FrameContext ctx = context(next++);
          for (auto& op : ops)
            if (eq::works(*op, ctx))
              if (Status s = op->run(ctx, stream.get()); !s) return fail(s.to_string());
        }
        while (static_cast<int>(total.size()) < o.runs) {
          const int batch = std::min(kBatch, o.runs - static_cast<int>(total.size()));
          if (Status s = hist::gpu_busy_wait(std::min(20000.0, batch * 40.0 + 200.0), stream.get()); !s) return fail(s.to_string());
          for (int b = 0; b < batch; ++b) {
            eq::FrameContext ctx = context(next++);
            (void)ev[b][0].record(stream.get());
            for (size_t k = 0; k < nops; ++k) {
              // As the equalizer: an operation another one did for this frame sits out (the fused
              // equalization of plain settings), its span empty.
              if (eq::works(*ops[k], ctx)) {
                ran[k] = true;
                if (Status s = ops[k]->run(ctx, stream.get()); !s) return fail(s.to_string());
              }
              (void)ev[b][k + 1].record(stream.get());
            }
          }
          if (Status s = stream.synchronize(); !s) return fail(s.to_string());
          for (int b = 0; b < batch; ++b) {
            auto t = cuda::elapsed_ms(ev[b][0], ev[b][nops]);
            if (!t) return fail(t.status().to_string());
            total.push_back(*t * 1000);
            for (size_t k = 0; k < nops; ++k) {
              auto st = cuda::elapsed_ms(ev[b][k], ev[b][k + 1]);
              if (!st) return fail(st.status().to_string());
              per[k].push_back(*st * 1000);
            }
          }
        }
      } else {
        int next = 0;
        for (int n = 0; n < warmup + o.runs; ++n) {
          eq::FrameContext ctx = context(next++);
          const int64_t a = now_ns();
          int64_t at = a;
          for (size_t k = 0; k < nops; ++k) {
            if (eq::works(*ops[k], ctx)) {
              ran[k] = true;
              if (Status s = ops[k]->run(ctx, nullptr); !s) return fail(s.to_string());
            }
            const int64_t b = now_ns();
            if (n >= warmup) per[k].push_back((b - at) / 1e3);
            at = b;
          }
          if (n >= warmup) total.push_back((at - a) / 1e3);
        }
      }
      Result1 r;
      r.size = sz->name;
      r.name = c.name;
      r.quality = eq::describe(c.quality);
      r.total = bench::summarize(total);
      if (c.name == "plain") plain_us = r.total.median_us;
      r.x_plain = plain_us > 0 ? r.total.median_us / plain_us : 0;
      std::string detail;
      for (size_t k = 0; k < nops; ++k) {
        if (!ran[k]) continue;
        const Stats s = bench::summarize(per[k]);
        r.stages.emplace_back(video::stage_name(ops[k]->stage()), s);
        char b[64];
        std::snprintf(b, sizeof(b), "%s %.1f  ", video::stage_name(ops[k]->stage()), s.median_us);
        detail += b;
      }
      std::printf("%-6s %-14s %10.1f %10.1f %8.2f   %s\n", r.size.c_str(), r.name.c_str(), r.total.median_us, r.total.p99_us, r.x_plain,
                  detail.c_str());
      std::fflush(stdout);
      results.push_back(std::move(r));
    }
  }
  if (!o.json.empty()) {
    nlohmann::json j;
    j["command"] = cmd;
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
    if (Status s = bench::write_file(o.json, [&](std::ostream& f) { f << j.dump(1) << '\n'; }); !s) return fail(s.to_string());
  }
  if (!o.csv.empty()) {
    Status s = bench::write_file(o.csv, [&](std::ostream& f) {
      f << "# " << cmd << "\n# device: " << device << ", kernel " << kernel << "\n";
      f << "size,case,quality,runs,median_us,p99_us,x_plain\n";
      for (const auto& r : results)
        f << r.size << ',' << r.name << ",\"" << r.quality << "\"," << r.total.runs << ',' << r.total.median_us << ','
          << r.total.p99_us << ',' << r.x_plain << '\n';
    });
    if (!s) return fail(s.to_string());
  }
  return 0;
}

}  // namespace histeq::app
