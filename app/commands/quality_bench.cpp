// histeq quality --bench: what the equalization costs per frame in each mode (lab/frame_cost.h
// measures; this file parses, calls and prints).
#include <cstdio>

#include "app/commands/bench_print.h"
#include "app/commands/commands.h"
#include "lab/frame_cost.h"
#include "core/pipeline/source_factory.h"

namespace histeq::app {
namespace {

void print_frame_cost(const lab::FrameCost& r) {
  std::string detail;
  for (const auto& [stage, s] : r.stages) {
    char b[64];
    std::snprintf(b, sizeof(b), "%s %.1f  ", stage.c_str(), s.median_us);
    detail += b;
  }
  std::printf("%-6s %-14s %10.1f %10.1f %8.2f   %s\n", r.size.c_str(), r.name.c_str(), r.total.median_us, r.total.p99_us, r.x_plain,
              detail.c_str());
  std::fflush(stdout);
}

// --json and --csv, where asked.
Status write_outputs(const QualityCliOptions& o, const lab::FrameCostBench& b, const std::string& kernel) {
  const std::string cmd = command_line(o.argv);
  if (!o.json.empty()) HISTEQ_TRY(lab::write_frame_cost_json(o.json, b.results(), cmd, b.device(), b.gpu(), kernel));
  if (!o.csv.empty()) HISTEQ_TRY(lab::write_frame_cost_csv(o.csv, b.results(), cmd, b.device(), kernel));
  return Status::ok();
}

}  // namespace

int run_quality_bench(const QualityCliOptions& o) {
  const bool gpu = !o.eq.cpu && cuda::have_device();
  const std::string kernel = o.eq.kernel.empty() ? pipeline::default_kernel(gpu ? Backend::gpu : Backend::cpu) : o.eq.kernel;
  if (const hist::KernelEntry* e = hist::find_kernel(kernel); e == nullptr || (e->info.backend == Backend::gpu) != gpu)
    return fail("kernel '" + kernel + "' is not a " + (gpu ? "GPU" : "CPU") + " kernel here", 2);
  if (o.runs < 10) return fail("--runs must be at least 10", 2);
  std::vector<Plane8> real;
  if (!o.input.empty()) {
    pipeline::SourceRequest req;
    req.input = o.input;
    auto r = pipeline::read_luma_frames(req, 16);
    if (!r) return fail(r.status().to_string());
    real = std::move(r.value());
  }
  const bool synthetic = real.empty();
  auto bench = lab::FrameCostBench::create(gpu, kernel, o.runs, std::move(real));
  if (!bench) return fail(bench.status().to_string());
  const std::string& device = (*bench)->device();
  std::printf("histeq quality --bench: %s %s, %s; %s, %d frames a case after %d warm-up, %s\n", gpu ? "GPU" : "CPU", device.c_str(),
              kernel.c_str(), gpu ? "CUDA events" : "steady clock", o.runs, lab::FrameCostBench::kWarmup,
              synthetic ? "synthetic pictures" : ("frames of " + o.input).c_str());
  std::printf("%-6s %-14s %10s %10s %8s   per stage (median us)\n", "size", "case", "median_us", "p99_us", "x_plain");
  for (const auto& size_name : o.sizes) {
    auto sz = lab::parse_size(size_name);
    if (!sz) return fail(sz.status().message(), 2);
    if (Status s = (*bench)->run_size(*sz, print_frame_cost); !s) return fail(s.to_string());
  }
  if (Status s = write_outputs(o, **bench, kernel); !s) return fail(s.to_string());
  return 0;
}

}  // namespace histeq::app
