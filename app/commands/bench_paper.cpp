// histeq bench --paper DIR [videos...]: the comparisons of the papers in ../shared/seeds, re-run on
// this GPU with the same engine as `histeq bench` (rotating buffers, CUDA events, every kernel
// checked against cpu_reference before it is timed):
//
//   nugteren_fig8    method1 baseline vs its extensions (Nugteren et al. 2011, §6, fig. 8, table 2)
//   nugteren_fig14   the four method2 mappings (§7, fig. 14)
//   nugteren_fig15   reference (Podlozhnyuk) vs method1 vs method2, plus cub (§8.1, fig. 15)
//   xu_fig9          collision vs collision_reduced on Gaussian data, sigma swept from 0 to
//                    uniform, 1024 bins over 10-bit samples (Xu et al., fig. 9)
//   course_colours   the course report's atomics baselines on 1, 2, 5 and 256 distinct colours
//   predictability   time per content per kernel (the default method2_tuned, method2, cub,
//                    block_atomic) at 1080p and 4K: uniform, degenerate, natural, Gaussian
//                    (sigma 8) and every real frame given (issue 9: max/min across contents)
//
// Inputs follow each paper: Nugteren's are 2048x2048 8-bit "real images" (here: frames from the
// videos given, each its own input), uniform random and degenerate; the course used 640x426 and
// 3840x2160 random arrays. DIR receives one CSV per experiment with every measurement, a
// summary.csv with each kernel's mean GB/s, relative performance and standard deviation across
// inputs (table 2's columns), and PNG plots drawn by bench/plot_paper.py (python3-matplotlib).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>

#include "app/commands/bench_engine.h"
#include "app/commands/commands.h"

namespace histeq::app {
namespace {

using namespace histeq::app::bench;
namespace fs = std::filesystem;

struct Experiment {
  std::string id, title;
  bool weighted = false;  // a float weight plane with every buffer (Xu's weighted histograms)
  std::vector<std::string> kernels;  // the first is the baseline of "relative performance"
  std::vector<SizeSpec> sizes;
  int bytes_per_sample = 1, bit_depth = 8, bins = 256;
  std::vector<InputSpec> inputs;
};

std::vector<InputSpec> nugteren_inputs(size_t real_frames) {
  std::vector<InputSpec> in;
  for (size_t f = 0; f < real_frames; ++f) {
    InputSpec r;
    r.name = "real" + std::to_string(f + 1);
    r.real = true;
    r.frame = static_cast<int>(f);
    in.push_back(r);
  }
  in.push_back(*parse_input("uniform"));
  in.back().name = "random";
  in.push_back(*parse_input("degenerate"));
  return in;
}

std::vector<Experiment> experiments(size_t real_frames) {
  const SizeSpec paper{"2048x2048", 2048, 2048};  // Nugteren §5.1: 2048x2048 8-bit images
  const SizeSpec big{"8k", 8192, 8192};            // past launch overheads and the L2: bandwidth-bound
  std::vector<Experiment> e;
  e.push_back({"nugteren_fig8", "Nugteren fig. 8 / table 2: method1 baseline and extensions", false,
               {"method1_base", "method1_ext1", "method1_ext2", "method1_ext3", "method1_ext2_ext3"}, {paper, big}, 1, 8, 256,
               nugteren_inputs(real_frames)});
  e.push_back({"nugteren_fig14", "Nugteren fig. 14: the four method2 memory mappings", false,
               {"method2_map1", "method2_map2", "method2", "method2_map4"}, {paper, big}, 1, 8, 256, nugteren_inputs(real_frames)});
  e.push_back({"nugteren_fig15", "Nugteren fig. 15: reference vs method1 vs method2 (and cub)", false,
               {"podlozhnyuk256", "method1_ext2", "method2", "cub"}, {paper, big}, 1, 8, 256, nugteren_inputs(real_frames)});
  Experiment xu{"xu_fig9", "Xu fig. 9: collision vs collision_reduced, weighted, Gaussian sigma sweep, 1024 bins", true,
                {"collision", "collision_reduced"}, {paper, big}, 2, 10, 1024, {}};
  for (int sigma : {0, 1, 2, 4, 8, 16, 32, 64, 128, 256}) xu.inputs.push_back(*parse_input("gaussian:" + std::to_string(sigma)));
  xu.inputs.push_back(*parse_input("uniform"));
  e.push_back(xu);
  Experiment course{"course_colours", "Course report: atomics baselines over the number of distinct colours", false,
                    {"original", "block_partition", "tlb", "tlb_blr", "linear", "method2", "cub"},
                    {{"640x426", 640, 426}, {"4k", 3840, 2160}}, 1, 8, 256, {}};
  for (int n : {1, 2, 5, 256}) course.inputs.push_back(*parse_input("colours:" + std::to_string(n)));
  e.push_back(course);
  Experiment pred{"predictability", "Predictability: time per content per kernel", false,
                  {"method2_tuned", "method2", "cub", "block_atomic"}, {{"1080p", 1920, 1080}, {"4k", 3840, 2160}}, 1, 8, 256, {}};
  for (const char* in : {"uniform", "degenerate", "natural", "gaussian8"}) pred.inputs.push_back(*parse_input(in));
  for (size_t f = 0; f < real_frames; ++f) {
    InputSpec r;
    r.name = "real" + std::to_string(f + 1);
    r.real = true;
    r.frame = static_cast<int>(f);
    pred.inputs.push_back(r);
  }
  e.push_back(pred);
  return e;
}

struct Summary {
  std::string experiment, kernel, size, scope;
  int inputs = 0;
  double mean = 0, stddev = 0, min = 0, max = 0, relative = 0;
};

// Mean, standard deviation (population, as across a fixed benchmark set), min and max of GB/s over
// the given rows.
Summary summarize_rows(const std::vector<const Row*>& rows) {
  Summary s;
  if (rows.empty()) return s;
  s.inputs = static_cast<int>(rows.size());
  s.min = s.max = rows[0]->m.gbps;
  for (const Row* r : rows) {
    s.mean += r->m.gbps;
    s.min = std::min(s.min, r->m.gbps);
    s.max = std::max(s.max, r->m.gbps);
  }
  s.mean /= rows.size();
  for (const Row* r : rows) s.stddev += (r->m.gbps - s.mean) * (r->m.gbps - s.mean);
  s.stddev = std::sqrt(s.stddev / rows.size());
  return s;
}

Status write_summary(const std::string& path, const std::vector<Summary>& sums, const std::string& command, const std::string& device) {
  return write_file(path, [&](std::ostream& f) {
    f << "# " << command << "\n# device: " << device << "\n";
    f << "experiment,size,scope,kernel,inputs,mean_gbps,relative,stddev_gbps,min_gbps,max_gbps\n";
    for (const auto& s : sums)
      f << s.experiment << ',' << s.size << ',' << s.scope << ',' << s.kernel << ',' << s.inputs << ',' << s.mean << ','
        << s.relative << ',' << s.stddev << ',' << s.min << ',' << s.max << '\n';
  });
}

// bench/plot_paper.py from the installed data folder or the source tree (never the working
// directory: a file planted there would run).
std::string find_plot_script() { return find_data_script("plot_paper.py", HISTEQ_DATA_DIR, HISTEQ_SOURCE_DIR); }

// The plots, by a python3 with matplotlib: the one on PATH, else Debian's /usr/bin/python3 (the
// one on PATH may lack it). Run without a shell: `dir` is an argument, whatever it holds.
bool plot(const std::string& script, const std::string& dir) {
  if (run_program({"python3", "-c", "import matplotlib"}, true) == 0 && run_program({"python3", script, dir}) == 0) return true;
  return run_program({"/usr/bin/python3", script, dir}) == 0;
}

}  // namespace

int run_bench_paper(const BenchOptions& o, bench::Engine& eng) {
  const std::string dir = o.paper_dir;
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) return fail(dir + ": cannot create the folder: " + ec.message());
  if (!eng.gpu()) return fail("--paper compares GPU kernels and needs a CUDA device; none is available");
  if (eng.frame_count() == 0) std::printf("note: no video given: the Nugteren experiments run on random and degenerate data only\n");
  eng.set_options({o.runs, o.warmup, o.cpu_budget_s, false});

  std::string cmd;
  for (const auto& a : o.argv) cmd += (cmd.empty() ? "" : " ") + a;
  std::vector<Summary> sums;
  bool failed = false;
  const auto all = experiments(eng.frame_count());
  for (const auto& id : o.experiments) {
    bool known = false;
    for (const auto& ex : all) known |= ex.id == id;
    if (!known) {
      std::string ids;
      for (const auto& ex : all) ids += (ids.empty() ? "" : ", ") + ex.id;
      return fail("unknown experiment '" + id + "' (" + ids + ")", 2);
    }
  }
  for (const Experiment& ex : all) {
    if (!o.experiments.empty() && std::find(o.experiments.begin(), o.experiments.end(), ex.id) == o.experiments.end()) continue;
    std::printf("\n== %s: %s\n", ex.id.c_str(), ex.title.c_str());
    std::map<std::string, std::unique_ptr<hist::Kernel>> kernels;
    for (const auto& name : ex.kernels) {
      auto k = hist::create_kernel(name);
      if (!k) {
        std::printf("   %s: %s\n", name.c_str(), k.status().message().c_str());
        failed = true;
        continue;
      }
      kernels[name] = std::move(k.value());
    }
    std::vector<LabelledKernel> labelled;
    for (const auto& name : ex.kernels)
      if (auto it = kernels.find(name); it != kernels.end()) labelled.push_back({name, it->second.get()});
    std::vector<Row> rows;
    print_header();
    for (const auto& size : ex.sizes) {
      for (const auto& input : ex.inputs)
        failed |= !run_case(eng, {size, false, ex.bytes_per_sample, ex.bit_depth, ex.bins, input, ex.weighted}, ex.id, labelled, rows);
    }
    const auto table = fill_predictability(rows);
    if (ex.id == "predictability") print_predictability(table);
    if (Status s = write_csv(dir + "/" + ex.id + ".csv", rows, cmd, eng.device().name); !s) return fail(s.to_string());

    // Aggregates per kernel: over every input, and (Nugteren's table 2) over the real images only.
    for (const auto& size : ex.sizes) {
      for (const std::string scope : {"all", "real"}) {
        double base_mean = 0;
        for (const auto& name : ex.kernels) {
          std::vector<const Row*> sel;
          for (const auto& r : rows)
            if (r.kernel == name && r.size == size.name && r.m.ok() && (scope == "all" || r.input.rfind("real", 0) == 0)) sel.push_back(&r);
          if (sel.empty()) continue;
          Summary s = summarize_rows(sel);
          s.experiment = ex.id;
          s.kernel = name;
          s.size = size.name;
          s.scope = scope;
          if (base_mean == 0) base_mean = s.mean;  // the first kernel listed is the baseline
          s.relative = base_mean > 0 ? s.mean / base_mean : 0;
          sums.push_back(s);
        }
      }
    }
  }
  if (Status s = write_summary(dir + "/summary.csv", sums, cmd, eng.device().name); !s) return fail(s.to_string());

  std::printf("\n%-16s %-10s %-6s %-18s %6s %10s %9s %10s\n", "experiment", "size", "scope", "kernel", "inputs", "mean_GB/s", "relative",
              "stddev");
  for (const auto& s : sums)
    std::printf("%-16s %-10s %-6s %-18s %6d %10.1f %9.2f %10.1f\n", s.experiment.c_str(), s.size.c_str(), s.scope.c_str(),
                s.kernel.c_str(), s.inputs, s.mean, s.relative, s.stddev);

  const std::string script = find_plot_script();
  if (script.empty()) {
    std::printf("\nnote: plot_paper.py not found (in %s or the source tree): CSVs written, no plots\n", HISTEQ_DATA_DIR);
  } else if (!plot(script, dir)) {
    std::printf("note: plotting failed (needs python3 with matplotlib): CSVs written, no plots\n");
  }
  std::printf("\nresults in %s\n", dir.c_str());
  if (failed) return fail("some kernels were missing, FAILED or errored (see above)");
  return 0;
}

}  // namespace histeq::app
