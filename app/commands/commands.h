// The CLI's commands. Each returns the process exit code and prints what the user sees; core/
// never prints. Errors are one line on stderr: "histeq: <what failed>".
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "app/common/play_options.h"
#include "app/common/run_common.h"
#include "core/pipeline/batch.h"
#include "core/pipeline/equalizer.h"
#include "core/video/media_time.h"
#include "core/video/source.h"

namespace CLI {
class App;
class Option;
}

namespace histeq::lab {
class Engine;
}

namespace histeq::app {

// The scripts histeq ships (quality.py, plot_paper.py): the folder they are installed in, relative
// to the running binary (/proc/self/exe/../share/histeq; "" when /proc cannot tell), and the path of
// one there, or (only for the build tree's binary) in the source tree's bench/; "" when neither has
// it. Never the working directory. Any thread.
std::string shipped_data_dir();
std::string find_shipped_script(const std::string& name);

// histeq completion bash|zsh|fish (hidden from --help): prints that shell's completion script, made
// from `app`'s commands, options, help and choices (call after every command was added).
void add_completion_command(CLI::App& app, std::string& shell);
int run_completion(const CLI::App& app, const std::string& shell);

// histeq --version, and the top of histeq info: the version, the git commit, the FFmpeg libraries
// (compiled against, running), the CUDA runtime and driver ("none" without one), what the build made
// (window, GStreamer element, Python module) and how the core is linked. Lines without the last newline.
std::string version_text();

// histeq info [--markdown]: version_text(), then the device and every kernel of the registry (those
// that need a GPU marked so on a machine without one); --markdown prints the README's kernel table.
int run_info(bool markdown = false);
// histeq controls: the control table (core/equalize/controls.h); --markdown: docs/controls.md's.
int run_controls(bool markdown);

// histeq bench
struct BenchOptions {
  std::vector<std::string> kernels;                  // empty: all
  std::vector<std::string> inputs{"uniform", "degenerate", "natural", "real", "gaussian8"};
  std::vector<std::string> sizes{"1080p", "4k", "8k", "1g", "1921x1081"};
  std::vector<std::string> pitches{"tight", "padded"};
  std::string input_file;                            // real frames; without it "real" is skipped
  int bins = 256;                                    // histogram bins over the 8-bit inputs
  int runs = 50;
  int warmup = 5;
  double cpu_budget_s = 2.0;                         // CPU kernels: cap on timed seconds per case
  bool quick = false;
  bool weighted = false;                             // weighted histograms (float weight plane)
  std::string tiles;                                 // "CxR": every tile's histogram (tiled kernels only)
  std::vector<int> max_blocks{0};
  std::vector<int> units_per_lane{0};                // method2_tuned's plan to sweep; 0 = policy                    // grid caps to sweep; 0 = policy
  std::string csv, json;
  std::string paper_dir;                             // --paper DIR: reproduce the papers' comparisons
  std::vector<std::string> files;                    // --paper: videos whose frames are the real inputs
  std::vector<std::string> experiments;              // --paper: only these experiments (empty: all)
  bool equalize = false;                             // --equalize: the whole equalization per frame
  std::vector<int> depths{8, 10};                    // --equalize: bit depths
  std::vector<std::string> argv;                     // the command line, recorded in the outputs
};
void add_bench_command(CLI::App& app, BenchOptions& opts);
int run_bench(const BenchOptions& opts);
int run_bench_paper(const BenchOptions& opts, lab::Engine& engine);     // bench_paper.cpp
int run_bench_equalize(const BenchOptions& opts, lab::Engine& engine);  // bench_equalize.cpp

// histeq play (PlayOptions: app/common/play_options.h, shared with the player window)
void add_play_command(CLI::App& app, PlayOptions& opts);
int run_play(const PlayOptions& opts, const std::vector<std::string>& argv);
// --start, --duration, --end into opts.range (and the synthetic source's length).
Status parse_play_range(PlayOptions& opts);

// histeq export: one file (IN -o OUT) or a batch (several inputs or a folder, -o DIR/).
struct ExportCliOptions {
  std::vector<std::string> inputs;
  std::string output;
  bool overwrite = false;
  bool skip_existing = false;        // -n: never overwrite; an existing output is skipped (success)
  bool resume = false;               // --resume: a batch's complete outputs skipped, the rest (re)done
  pipeline::EqualizerOptions eq;  // eq.quality comes from `quality`
  QualityArgs quality;
  std::string codec;                 // "": follows the input and the container (video::default_encoder)
  int crf = -1;
  std::string preset;
  std::string hwdec = "auto";        // --hwdec auto|nvdec|none (none with --cpu unless named)
  std::string progress = "auto";
  std::string stats_json;
  bool verbose = false;
  std::string start, duration, end;  // trimming, as given (parsed by video::parse_time_range)
  std::string report;                // --report FILE: every file's result as JSON
  bool strict = false;               // --strict: an input that ends early ("short") fails its file (exit 1)
  // Batch:
  int jobs = 0;                      // 0: one pipeline per GPU device, or cores / 4 on the CPU
  std::vector<int> devices;          // --device: the GPUs to use (default: all; a single export: the first)
  std::string ext;                   // the outputs' extension (default: each input's)
  int index = -1;                    // --index I: only the I-th file of the batch (a job array's task)
  std::string shard;                 // --shard K/N: files K, K+N, K+2N, ... (a node's share of a job array)
  bool list = false;                 // --list: print the batch's files and outputs, export nothing
  // Streams and encoder control, as given; parse_encode_args() checks them.
  std::vector<std::string> maps;     // -map, ffmpeg's subset
  bool no_audio = false, no_subtitles = false;  // -an, -sn
  std::string audio_codec;           // --audio-codec: "" (copy where the container holds it), copy, an encoder
  std::string bitrate;               // --bitrate 4M
  std::vector<std::string> encoder_opts;  // --encoder-opt KEY=VALUE
  std::string pix_fmt;               // --pix-fmt
  int gop = 0;                       // --gop
  std::string tag;                   // --tag hvc1
  // Pipes: -f, the container; --live, the input read as a live stream; -c as given, to
  // tell a codec the user named from the default (a raw container's own encoder replaces the default).
  std::string format;
  bool live = false;
  CLI::Option* codec_opt = nullptr;
};
// The streams and encoder options of `o` into `eo`; a usage error (exit 2) when one is malformed.
Status parse_encode_args(const ExportCliOptions& o, pipeline::ExportOptions& eo);
// ffmpeg's one-dash spellings -an, -sn and -map rewritten as CLI11 takes them (--an, --sn, --map),
// up to a "--"; argv[0] and everything else as they are.
std::vector<std::string> ffmpeg_spellings(int argc, char** argv);
void add_export_command(CLI::App& app, ExportCliOptions& opts);
int run_export(const ExportCliOptions& opts, const std::vector<std::string>& argv);
// What a single export and a batch share: the progress display asked for (auto: live on a terminal,
// plain lines otherwise), and the export's settings from the command line.
enum class ProgressMode { live, lines, json, none };
ProgressMode progress_mode(const std::string& progress);
pipeline::ExportOptions export_options(const ExportCliOptions& opts, const video::TimeRange& range);
// The batch (several files, or a folder, into -o DIR/): export_batch.cpp.
int run_export_batch(const ExportCliOptions& opts, const video::TimeRange& range, const std::vector<std::string>& argv);
// --report: every file's result (input, output, result, message, frames, time, output size).
Status write_export_report(const std::string& path, const std::vector<std::string>& argv,
                           const std::vector<pipeline::BatchFileResult>& results, double elapsed_s, int jobs);

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

}  // namespace histeq::app
