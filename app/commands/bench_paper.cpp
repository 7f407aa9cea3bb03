// histeq bench --paper DIR [videos...]: the papers' comparisons (lab/paper.h lists them) into
// DIR: one CSV per experiment, summary.csv, and PNG plots drawn by bench/plot_paper.py
// (python3-matplotlib). The lab measures and writes the CSVs; this file parses, calls, prints and
// plots.
#include <cstdio>
#include <filesystem>

#include "app/commands/bench_print.h"
#include "app/commands/commands.h"
#include "lab/paper.h"

namespace histeq::app {
namespace {

namespace fs = std::filesystem;

// bench/plot_paper.py from the installed data folder or the source tree (never the working
// directory: a file planted there would run).
std::string find_plot_script() { return find_shipped_script("plot_paper.py"); }

// The plots, by a python3 with matplotlib: the one on PATH, else Debian's /usr/bin/python3 (the
// one on PATH may lack it). Run without a shell: `dir` is an argument, whatever it holds.
bool plot(const std::string& script, const std::string& dir) {
  if (run_program({"python3", "-c", "import matplotlib"}, true) == 0 && run_program({"python3", script, dir}) == 0) return true;
  return run_program({"/usr/bin/python3", script, dir}) == 0;
}

lab::PaperObserver printer() {
  lab::PaperObserver obs;
  obs.start = [](const lab::Experiment& ex, const std::vector<std::pair<std::string, Status>>& missing) {
    std::printf("\n== %s: %s\n", ex.id.c_str(), ex.title.c_str());
    for (const auto& [name, why] : missing) std::printf("   %s: %s\n", name.c_str(), why.message().c_str());
    print_bench_header();
  };
  obs.row = print_bench_row;
  obs.done = [](const lab::Experiment& ex, const std::vector<lab::Predictability>& table) {
    if (ex.id == "predictability") print_predictability(table);
  };
  return obs;
}

void print_summaries(const std::vector<lab::Summary>& sums) {
  std::printf("\n%-16s %-10s %-6s %-18s %6s %10s %9s %10s\n", "experiment", "size", "scope", "kernel", "inputs", "mean_GB/s", "relative",
              "stddev");
  for (const auto& s : sums)
    std::printf("%-16s %-10s %-6s %-18s %6d %10.1f %9.2f %10.1f\n", s.experiment.c_str(), s.size.c_str(), s.scope.c_str(),
                s.kernel.c_str(), s.inputs, s.mean, s.relative, s.stddev);
}

}  // namespace

int run_bench_paper(const BenchOptions& o, lab::Engine& eng) {
  const std::string dir = o.paper_dir;
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) return fail(dir + ": cannot create the folder: " + ec.message());
  if (!eng.gpu()) return fail("--paper compares GPU kernels and needs a CUDA device; none is available");
  if (eng.frame_count() == 0) std::printf("note: no video given: the Nugteren experiments run on random and degenerate data only\n");
  eng.set_options({o.runs, o.warmup, o.cpu_budget_s, false});
  auto experiments = lab::select_experiments(o.experiments, eng.frame_count());
  if (!experiments) return fail(experiments.status().message(), 2);

  auto res = lab::run_paper(eng, *experiments, dir, command_line(o.argv), printer());
  if (!res) return fail(res.status().to_string());
  print_summaries(res->summaries);
  const std::string script = find_plot_script();
  if (script.empty()) {
    std::printf("\nnote: plot_paper.py not found (in %s): CSVs written, no plots\n", shipped_data_dir().c_str());
  } else if (!plot(script, dir)) {
    std::printf("note: plotting failed (needs python3 with matplotlib): CSVs written, no plots\n");
  }
  std::printf("\nresults in %s\n", dir.c_str());
  if (res->failed) return fail("some kernels were missing, FAILED or errored (see above)");
  return 0;
}

}  // namespace histeq::app
