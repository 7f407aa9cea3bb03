// histeq bench: every histogram kernel on a matrix of sizes, pitches and contents, each checked
// against cpu_reference before it is timed (see bench_engine.h for the method), and
// `histeq bench --paper DIR` (bench_paper.cpp), which reproduces the papers' comparisons.
#include <CLI/CLI.hpp>

#include <algorithm>
#include <cstdio>

#include "app/commands/bench_engine.h"
#include "app/commands/commands.h"
#include "core/video/luma_reader.h"

namespace histeq::app {
namespace {

using namespace histeq::app::bench;

std::string command_line(const BenchOptions& o) {
  std::string cmd;
  for (const auto& a : o.argv) cmd += (cmd.empty() ? "" : " ") + a;
  return cmd;
}

struct NamedKernel {
  std::string label;
  std::unique_ptr<hist::Kernel> kernel;
};

// The kernels to run: those named, or every kernel this machine can run at the bin count asked for
// (aliases, which repeat their target, only when named).
Result<std::vector<NamedKernel>> make_kernels(const BenchOptions& o, bool gpu) {
  std::vector<std::string> names = o.kernels;
  const bool named = !names.empty();
  if (!named)
    for (const auto& e : hist::registry())
      if (e.info.alias_of.empty() && e.info.supports(1, o.bins) && (!o.weighted || e.info.weighted)) names.push_back(e.info.name);
  std::vector<NamedKernel> out;
  for (const auto& n : names) {
    const hist::KernelEntry* e = hist::find_kernel(n);
    if (e == nullptr) return hist::create_kernel(n).status();  // "unknown kernel (known: ...)"
    if (o.weighted && !e->info.weighted)
      return HISTEQ_ERROR(Code::invalid_argument, "kernel '" + n + "' does not compute weighted histograms (--weighted)");
    if (e->info.backend == Backend::gpu && !gpu) {
      if (named) return HISTEQ_ERROR(Code::no_device, "kernel '" + n + "' needs a CUDA device and none is available");
      continue;
    }
    for (int mb : o.max_blocks) {
      if (mb < 0) return HISTEQ_ERROR(Code::invalid_argument, "--max-blocks values must be >= 0");
      auto k = hist::create_kernel(n, {mb});
      if (!k) return k.status();
      out.push_back({mb == 0 ? n : n + "@" + std::to_string(mb), std::move(k.value())});
    }
  }
  if (out.empty()) return HISTEQ_ERROR(Code::invalid_argument, "no kernel to run");
  return out;
}

int run_matrix(const BenchOptions& o, Engine& eng) {
  auto kernels = make_kernels(o, eng.gpu());
  if (!kernels) return fail(kernels.status().to_string(), kernels.status().code() == Code::not_found ? 2 : 1);
  const bool any_cpu = std::any_of(kernels->begin(), kernels->end(),
                                   [](const NamedKernel& k) { return k.kernel->info().backend == Backend::cpu; });
  eng.set_options({o.runs, o.warmup, o.cpu_budget_s, any_cpu});

  auto parsed = parse_inputs(o.inputs, eng.frame_count());
  if (!parsed) return fail(parsed.status().message(), 2);
  const std::vector<InputSpec> inputs = std::move(parsed.value());
  std::vector<SizeSpec> sizes;
  for (const auto& s : o.quick ? std::vector<std::string>{"1080p", "1921x1081"} : o.sizes) {
    auto sp = parse_size(s);
    if (!sp) return fail(sp.status().message(), 2);
    sizes.push_back(*sp);
  }
  for (const auto& p : o.pitches)
    if (p != "tight" && p != "padded") return fail("bad pitch '" + p + "' (tight, padded)", 2);

  std::vector<LabelledKernel> labelled;
  for (auto& k : *kernels) labelled.push_back({k.label, k.kernel.get()});
  std::vector<Row> rows;
  print_header();
  for (const auto& size : sizes) {
    for (const auto& pk : o.pitches) {
      for (const auto& input : inputs) run_case(eng, {size, pk == "padded", 1, 8, o.bins, input, o.weighted}, "", labelled, rows);
    }
  }
  const auto table = fill_predictability(rows);
  print_predictability(table);
  const std::string cmd = command_line(o);
  const std::string dev = eng.gpu() ? eng.device().name : "none";
  if (!o.csv.empty())
    if (Status s = write_csv(o.csv, rows, cmd, dev); !s) return fail(s.to_string());
  if (!o.json.empty())
    if (Status s = write_json(o.json, rows, cmd, eng.gpu() ? &eng.device() : nullptr, table); !s) return fail(s.to_string());
  std::printf("\nx_cub = cub median / kernel median (>1: faster than cub); x_ceil = GB/s / read-ceiling GB/s.\n");
  std::printf("max/min = the slowest input's median / the fastest's (1.00: the same time whatever the picture).\n");
  if (std::any_of(rows.begin(), rows.end(), [](const Row& r) { return !r.m.ok(); }))
    return fail("some kernels FAILED or errored (see the status column)");
  return 0;
}

}  // namespace

void add_bench_command(CLI::App& app, BenchOptions& o) {
  CLI::App* b = app.add_subcommand("bench", "time the histogram kernels (checked against cpu_reference first)");
  b->add_option("-k,--kernel", o.kernels, "kernels to run (default: all that support --bins, aliases excluded); repeat or comma-separate")
      ->delimiter(',');
  b->add_option("--bins", o.bins, "histogram bins over the 8-bit inputs (a power of two, 2..256)")->capture_default_str();
  b->add_option("--inputs", o.inputs, "contents: uniform, degenerate, natural, real, gaussian:SIGMA (gaussian8 = gaussian:8), colours:N")
      ->delimiter(',')->capture_default_str();
  b->add_option("--sizes", o.sizes, "sizes: 1080p, 4k, 8k, 1g (32768x32768 = 1 GiB), WxH")->delimiter(',')->capture_default_str();
  b->add_option("--pitches", o.pitches, "tight and/or padded")->delimiter(',')->capture_default_str();
  b->add_option("-i,--input", o.input_file, "video or image file for the 'real' input");
  b->add_option("--runs", o.runs, "timed runs per kernel and case (>= 50 for the published figures)")->capture_default_str();
  b->add_option("--warmup", o.warmup, "untimed runs first")->capture_default_str();
  b->add_option("--cpu-budget", o.cpu_budget_s, "seconds of timed runs per CPU kernel and case (at least 5 runs)")->capture_default_str();
  b->add_flag("--quick", o.quick, "only 1080p and 1921x1081");
  b->add_flag("--weighted", o.weighted, "weighted histograms: a float weight plane per buffer (weighted kernels only)");
  b->add_option("--max-blocks", o.max_blocks,
                "grid caps to sweep (0 = the policy's grid); each kernel runs once per value, labelled name@N")
      ->delimiter(',')->capture_default_str();
  b->add_option("--csv", o.csv, "write the results as CSV");
  b->add_option("--json", o.json, "write the results as JSON");
  b->add_option("--paper", o.paper_dir,
                "reproduce the papers' comparisons (Nugteren fig. 8/14/15, Xu fig. 9, the course sweep) into DIR: CSV + PNG");
  b->add_option("files", o.files, "--paper: video or image files whose frames are the real inputs");
  b->add_option("--experiments", o.experiments, "--paper: only these experiments (comma-separated ids)")->delimiter(',');
  b->add_flag("--equalize", o.equalize,
              "time the whole equalization per frame (histogram + LUT + apply): fused method2_tuned vs the unfused "
              "kernels, 8- and 10-bit (--depths), 1080p and 4k unless --sizes is given");
  b->add_option("--depths", o.depths, "--equalize: bit depths (8, 10)")->delimiter(',')->capture_default_str();
}

int run_bench(const BenchOptions& o) {
  if (o.runs < 1 || o.warmup < 0) return fail("--runs must be >= 1 and --warmup >= 0", 2);
  if (hist::bins_log2(o.bins) < 1 || o.bins > 256) return fail("--bins must be a power of two from 2 to 256", 2);
  if (!o.paper_dir.empty() && !o.input_file.empty()) return fail("--paper takes its videos as arguments, not --input", 2);
  if (o.paper_dir.empty() && !o.files.empty()) return fail("unexpected argument '" + o.files[0] + "' (files go with --paper)", 2);
  if (!o.paper_dir.empty() && o.equalize) return fail("--paper and --equalize are separate runs", 2);
  if (o.paper_dir.empty() && !o.experiments.empty()) return fail("--experiments goes with --paper", 2);
  for (int d : o.depths)
    if (d < 8 || d > 10) return fail("--depths must be 8, 9 or 10", 2);
  auto eng = Engine::create({o.runs, o.warmup, o.cpu_budget_s, false});
  if (!eng) return fail(eng.status().to_string());
  if ((*eng)->gpu()) {
    const auto& d = (*eng)->device();
    std::printf("device: %s, %d SMs, L2 %zu MiB, driver %s, runtime %s\n", d.name.c_str(), d.sm_count, d.l2_bytes >> 20,
                cuda::version_string(d.driver_version).c_str(), cuda::version_string(d.runtime_version).c_str());
  } else {
    std::printf("device: none (no usable CUDA device): timing the CPU kernels only\n");
  }
  std::vector<std::string> files = o.files;
  if (!o.input_file.empty()) files.push_back(o.input_file);
  std::vector<Plane8> frames;
  for (const auto& f : files) {
    auto fr = video::read_luma_frames(f, o.paper_dir.empty() ? 8 : 4);
    if (!fr) return fail(fr.status().message());
    std::printf("real frames: %zu from %s (%dx%d)\n", fr->size(), f.c_str(), (*fr)[0].width(), (*fr)[0].height());
    for (auto& p : *fr) frames.push_back(std::move(p));
  }
  (*eng)->set_frames(std::move(frames));
  if (!o.paper_dir.empty()) return run_bench_paper(o, **eng);
  if (o.equalize) return run_bench_equalize(o, **eng);
  return run_matrix(o, **eng);
}

}  // namespace histeq::app
