// The CLI's commands. Each returns the process exit code and prints what the user sees; core/
// never prints. Errors are one line on stderr: "histeq: <what failed>".
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "app/common/play_options.h"
#include "app/common/run_common.h"
#include "core/pipeline/equalizer.h"
#include "core/video/source.h"

namespace CLI {
class App;
class Option;
}

namespace histeq::app {
namespace bench {
class Engine;
}

// histeq info [--markdown]: the device and every kernel of the registry (those that need a GPU
// marked so on a machine without one); --markdown prints the README's kernel table.
int run_info(bool markdown = false);

// histeq bench
struct BenchOptions {
  std::vector<std::string> kernels;                  // empty: all
  std::vector<std::string> inputs{"uniform", "degenerate", "natural", "real"};
  std::vector<std::string> sizes{"1080p", "4k", "8k", "1g", "1921x1081"};
  std::vector<std::string> pitches{"tight", "padded"};
  std::string input_file;                            // real frames; without it "real" is skipped
  int bins = 256;                                    // histogram bins over the 8-bit inputs
  int runs = 50;
  int warmup = 5;
  double cpu_budget_s = 2.0;                         // CPU kernels: cap on timed seconds per case
  bool quick = false;
  bool weighted = false;                             // weighted histograms (float weight plane)
  std::vector<int> max_blocks{0};                    // grid caps to sweep; 0 = policy
  std::string csv, json;
  std::string paper_dir;                             // --paper DIR: reproduce the papers' comparisons
  std::vector<std::string> files;                    // --paper: videos whose frames are the real inputs
  std::vector<std::string> argv;                     // the command line, recorded in the outputs
};
void add_bench_command(CLI::App& app, BenchOptions& opts);
int run_bench(const BenchOptions& opts);
int run_bench_paper(const BenchOptions& opts, bench::Engine& engine);  // bench_paper.cpp

// The picture-quality options (QualityArgs, app/common/play_options.h) on a command; --plain
// excludes the others.
void add_quality_options(CLI::App* cmd, QualityArgs& q);

// histeq play (PlayOptions: app/common/play_options.h, shared with the player window)
void add_play_command(CLI::App& app, PlayOptions& opts);
int run_play(const PlayOptions& opts, const std::vector<std::string>& argv);
// The source `play` reads: `path` when given (a file, or the webcam with --webcam), else the
// synthetic source configured by the options.
Result<std::unique_ptr<video::Source>> open_play_source(const PlayOptions& opts, const std::string& path);

// histeq export
struct ExportCliOptions {
  std::string input, output;
  bool overwrite = false;
  pipeline::EqualizerOptions eq;  // eq.quality comes from `quality`
  QualityArgs quality;
  std::string codec = "libx264";
  int crf = -1;
  std::string preset;
  std::string progress = "auto";
  std::string stats_json;
  bool verbose = false;
};
void add_export_command(CLI::App& app, ExportCliOptions& opts);
int run_export(const ExportCliOptions& opts, const std::vector<std::string>& argv);

// histeq quality: clips through histeq's configurations and the peers, metrics (bench/quality.py);
// --bench: the equalization's cost per frame in each mode.
struct QualityCliOptions {
  std::vector<std::string> clips;
  std::string out = "quality-out";
  std::vector<std::string> configs{"plain", "default", "clahe", "clip", "temporal", "chroma"};
  pipeline::EqualizerOptions eq;  // kernel, --cpu
  std::string peers = "auto";
  bool stills = false, no_metrics = false;
  std::string script;
  bool bench = false;
  std::vector<std::string> sizes{"1080p", "4k"};
  std::string input;
  int runs = 300;
  std::string json, csv;
  std::vector<std::string> argv;
};
void add_quality_command(CLI::App& app, QualityCliOptions& opts);
int run_quality(const QualityCliOptions& opts);
int run_quality_bench(const QualityCliOptions& opts);  // quality_bench.cpp
// A configuration of `histeq quality --configs`: a preset name or NAME:key=value:...
Result<eq::Quality> quality_config(const std::string& spec);

}  // namespace histeq::app
