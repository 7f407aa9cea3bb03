// bench --paper: the comparisons of the papers in ../shared/seeds, re-run on this GPU with the same
// engine as the matrix (rotating buffers, CUDA events, every kernel checked against cpu_reference
// before it is timed):
//
//   nugteren_fig8    method1 baseline vs its extensions (Nugteren et al. 2011, §6, fig. 8, table 2)
//   nugteren_fig14   the four method2 mappings (§7, fig. 14)
//   nugteren_fig15   reference (Podlozhnyuk) vs method1 vs method2, plus cub (§8.1, fig. 15)
//   xu_fig9          collision vs collision_reduced on Gaussian data, sigma swept from 0 to
//                    uniform, 1024 bins over 10-bit samples (Xu et al., fig. 9)
//   course_colours   the course report's atomics baselines on 1, 2, 5 and 256 distinct colours
//   predictability   time per content per kernel (the default method2_tuned, method2, cub,
//                    block_atomic) at 1080p and 4K: uniform, degenerate, natural, Gaussian
//                    (sigma 8) and every real frame given (predictability: max/min across contents)
//
// Inputs follow each paper: Nugteren's are 2048x2048 8-bit "real images" (here: frames from the
// videos given, each its own input), uniform random and degenerate; the course used 640x426 and
// 3840x2160 random arrays. The run writes one CSV per experiment with every measurement into its
// folder, and summary.csv with each kernel's mean GB/s, relative performance and standard
// deviation across inputs (table 2's columns); the plots are the app's (bench/plot_paper.py).
//
// Thread: the engine's; the observer is called on it.
#pragma once

#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "lab/engine.h"
#include "lab/results.h"

namespace histeq::lab {

struct Experiment {
  std::string id, title;
  bool weighted = false;  // a float weight plane with every buffer (Xu's weighted histograms)
  std::vector<std::string> kernels;  // the first is the baseline of "relative performance"
  std::vector<SizeSpec> sizes;
  int bytes_per_sample = 1, bit_depth = 8, bins = 256;
  std::vector<InputSpec> inputs;
};
// Every experiment, in the order they run; `real_frames` real inputs where the paper used images.
std::vector<Experiment> paper_experiments(size_t real_frames);
// Those named by `ids` (all when empty), in the order above; Code::invalid_argument for an unknown
// id ("unknown experiment 'x' (id, id, ...)").
Result<std::vector<Experiment>> select_experiments(const std::vector<std::string>& ids, size_t real_frames);

// One line of summary.csv: a kernel's GB/s over the inputs of one size, "all" of them or only the
// "real" ones (Nugteren's table 2).
struct Summary {
  std::string experiment, kernel, size, scope;
  int inputs = 0;
  double mean = 0, stddev = 0, min = 0, max = 0, relative = 0;  // relative: mean / the baseline's mean
};

// What a run reports as it goes (each may be empty).
struct PaperObserver {
  // An experiment starts: its kernels created; `missing` are those that could not be (name, why).
  std::function<void(const Experiment&, const std::vector<std::pair<std::string, Status>>& missing)> start;
  RowSink row;
  // An experiment ended, with its predictability table (before its CSV is written).
  std::function<void(const Experiment&, const std::vector<Predictability>&)> done;
};
struct PaperResult {
  std::vector<Summary> summaries;
  bool failed = false;  // a kernel missing, FAILED or errored
};
// Runs `experiments` on a GPU engine, writing DIR/ID.csv after each and DIR/summary.csv at the end
// (`dir` must exist). An error is a file that could not be written.
Result<PaperResult> run_paper(Engine& eng, const std::vector<Experiment>& experiments, const std::string& dir,
                              const std::string& command, const PaperObserver& observer = {});

}  // namespace histeq::lab
