// histeq bench: every histogram kernel on a matrix of sizes, pitches and contents, each checked
// against cpu_reference before it is timed (lab/matrix.h; lab/engine.h gives the
// method), `histeq bench --paper DIR` (bench_paper.cpp), which reproduces the papers' comparisons,
// and `--equalize` (bench_equalize.cpp). The lab measures; this file parses, calls and prints.
#include <CLI/CLI.hpp>

#include <algorithm>
#include <cstdio>

#include "app/commands/bench_print.h"
#include "app/commands/commands.h"
#include "lab/matrix.h"
#include "core/equalize/quality.h"
#include "core/pipeline/source_factory.h"

namespace histeq::app {
namespace {

int run_matrix(const BenchOptions& o, lab::Engine& eng) {
  lab::MatrixPlan plan;
  if (!o.tiles.empty()) {
    auto grid = eq::parse_tiles(o.tiles);
    if (!grid) return fail("--tiles: " + grid.status().message(), 2);
    plan.tiled = true;
    plan.tiles = *grid;
  }
  auto kernels = lab::select_kernels(o.kernels, o.bins, o.weighted, o.max_blocks, eng.gpu(), plan.tiled, o.units_per_lane);
  if (!kernels) return fail(kernels.status().to_string(), kernels.status().code() == Code::not_found ? 2 : 1);
  eng.set_options({o.runs, o.warmup, o.cpu_budget_s, lab::any_cpu(*kernels)});

  plan.bins = o.bins;
  plan.weighted = o.weighted;
  auto parsed = parse_bench_inputs(o.inputs, eng.frame_count());
  if (!parsed) return fail(parsed.status().message(), 2);
  plan.inputs = std::move(parsed.value());
  for (const auto& s : o.quick ? std::vector<std::string>{"1080p", "1921x1081"} : o.sizes) {
    auto sp = lab::parse_size(s);
    if (!sp) return fail(sp.status().message(), 2);
    plan.sizes.push_back(*sp);
  }
  for (const auto& p : o.pitches) {
    if (p != "tight" && p != "padded") return fail("bad pitch '" + p + "' (tight, padded)", 2);
    plan.padded.push_back(p == "padded");
  }

  print_bench_header();
  const lab::MatrixResult res = lab::run_matrix(eng, plan, *kernels, print_bench_row);
  print_predictability(res.predictability);
  const std::string cmd = command_line(o.argv);
  const std::string dev = eng.gpu() ? eng.device().name : "none";
  if (!o.csv.empty())
    if (Status s = lab::write_csv(o.csv, res.rows, cmd, dev); !s) return fail(s.to_string());
  if (!o.json.empty())
    if (Status s = lab::write_json(o.json, res.rows, cmd, eng.gpu() ? &eng.device() : nullptr, res.predictability); !s)
      return fail(s.to_string());
  std::printf("\nx_cub = cub median / kernel median (>1: faster than cub); x_ceil = GB/s / read-ceiling GB/s.\n");
  std::printf("max/min = the slowest input's median / the fastest's (1.00: the same time whatever the picture).\n");
  if (!res.ok()) return fail("some kernels FAILED or errored (see the status column)");
  return 0;
}

// The options that do not go together, or out of range: the message, "" when none.
std::string usage_error(const BenchOptions& o) {
  if (o.runs < 1 || o.warmup < 0) return "--runs must be >= 1 and --warmup >= 0";
  if (hist::bins_log2(o.bins) < 1 || o.bins > 256) return "--bins must be a power of two from 2 to 256";
  if (!o.paper_dir.empty() && !o.input_file.empty()) return "--paper takes its videos as arguments, not --input";
  if (o.paper_dir.empty() && !o.files.empty()) return "unexpected argument '" + o.files[0] + "' (files go with --paper)";
  if (!o.paper_dir.empty() && o.equalize) return "--paper and --equalize are separate runs";
  if (o.paper_dir.empty() && !o.experiments.empty()) return "--experiments goes with --paper";
  if (!o.tiles.empty() && (o.weighted || o.equalize || !o.paper_dir.empty())) return "--tiles is a matrix run of its own (not with --weighted, --equalize or --paper)";
  for (int d : o.depths)
    if (d < 8 || d > 10) return "--depths must be 8, 9 or 10";
  return "";
}

void print_device(const lab::Engine& eng) {
  if (eng.gpu()) {
    const auto& d = eng.device();
    std::printf("device: %s, %d SMs, L2 %zu MiB, driver %s, runtime %s\n", d.name.c_str(), d.sm_count, d.l2_bytes >> 20,
                cuda::version_string(d.driver_version).c_str(), cuda::version_string(d.runtime_version).c_str());
  } else {
    std::printf("device: none (no usable CUDA device): timing the CPU kernels only\n");
  }
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
  b->add_option("--tiles", o.tiles, "tiled histograms (CLAHE's): every tile's histogram over a CxR grid, e.g. 8x8, in one call (tiled kernels only)");
  b->add_option("--max-blocks", o.max_blocks,
                "grid caps to sweep (0 = the policy's grid); each kernel runs once per value, labelled name@N")
      ->delimiter(',')->capture_default_str();
  b->add_option("--units-per-lane", o.units_per_lane,
                "method2_tuned's plan to sweep: 16-byte units a lane counts (0 = the policy's); labelled name/uU")
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
  if (const std::string why = usage_error(o); !why.empty()) return fail(why, 2);
  auto eng = lab::Engine::create({o.runs, o.warmup, o.cpu_budget_s, false});
  if (!eng) return fail(eng.status().to_string());
  print_device(**eng);
  std::vector<std::string> files = o.files;
  if (!o.input_file.empty()) files.push_back(o.input_file);
  std::vector<Plane8> frames;
  for (const auto& f : files) {
    pipeline::SourceRequest req;
    req.input = f;
    auto fr = pipeline::read_luma_frames(req, o.paper_dir.empty() ? 8 : 4);
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
