// Helpers shared by the commands (app/commands) and the player (app/player): stop signals, the stage table, the stats JSON file,
// FFmpeg's log for --verbose.
#pragma once

#include <nlohmann/json_fwd.hpp>

#include <atomic>
#include <functional>
#include <future>
#include <string>
#include <vector>

#include "core/cuda/status.h"
#include "core/pipeline/equalizer.h"
#include "core/pipeline/stats.h"
#include "core/video/hw_decode.h"
#include "core/video/source.h"

namespace histeq::app {

// Prints "histeq: message" to stderr; returns the exit code to use.
int fail(const std::string& message, int code = 1);
// Each line on stderr as "histeq: warning: LINE" (an old control name given, ...).
void warn(const std::vector<std::string>& lines);

// SIGINT, SIGTERM and SIGHUP set the returned flag; a second one ends the process at once, after
// removing the files named by set_signal_cleanup() and add_signal_cleanup(). SIGPIPE and SIGXFSZ
// are ignored (a write past `ulimit -f` then fails with EFBIG, cleaned up as a full disk is).
// Idempotent.
const std::atomic<bool>& install_stop_signals();
// SIGXFSZ ignored, for commands that write files without the stop signals.
void ignore_file_size_signal();
// The exit code for a run ended by a stop signal: 128 + its number, as shells report a death by it
// (SIGINT 130, SIGTERM 143, SIGHUP 129); 130 when none came (a cancel from elsewhere).
int stop_exit_code();
// The file a hard stop (second signal) must remove; "" for none. Not thread-safe: call it from the
// main thread while no other thread changes it.
void set_signal_cleanup(const std::string& path);
// For several files at once (a batch's temporary files): registers `path` and returns its slot,
// or -1 when all slots are taken (that file is then left by a hard stop). Thread-safe.
int add_signal_cleanup(const std::string& path);
void remove_signal_cleanup(int slot);

// The table: one row per stage that ran, in the pipeline's order (Pipeline::stages()), then the
// latency; columns last/avg/p50/p99/max in ms (`with_last` = false drops the "last" column, for
// whole-run summaries).
std::string format_stage_table(const std::vector<pipeline::StageSummary>& rows, const std::vector<video::StageId>& order,
                               bool with_last);

// "600 frames, 59.9 fps; late 0; dropped 0 (0 behind schedule, 0 at the source); 0 corrupt packets,
// 0 damaged frames": the play commands' counters.
std::string counters_line(int64_t frames, double secs, const pipeline::RunStats& stats, int64_t dropped_source,
                          const video::SourceCounters& source);

// "GPU method2 (NVIDIA H200)" / "CPU cpu_parallel (CPU, 2 threads)" / "no equalization (passthrough)".
std::string describe_equalizer(const pipeline::EqualizerInfo& e);
// The same with `quality` (eq::describe()'s words, e.g. of the frame on screen) for e.quality's.
std::string describe_equalizer(const pipeline::EqualizerInfo& e, const std::string& quality);

// Writes the run: command line, source, equalizer, per-frame stage times, whole-run summary and
// counters; `extend` may add sections (the player's audio). Errors name the file.
Status write_stats_json(const std::string& path, const std::vector<std::string>& argv, const video::SourceInfo& source,
                        const pipeline::EqualizerInfo& eq, const pipeline::RunStats& stats,
                        const std::vector<video::StageId>& order, double wall_s,
                        const std::vector<std::pair<std::string, int64_t>>& counters,
                        const std::function<void(nlohmann::json&)>& extend = {});

// Writes `j` to `path` through a new temporary file in the same folder (mkstemp: never a planted
// name or symlink), renamed when complete: never a half-written file under the name. Names that
// are not UTF-8 become U+FFFD (put_name keeps their bytes). Errors name the file.
Status write_json_file(const std::string& path, const nlohmann::json& j);

// When the equalizer may run on the GPU, creates the CUDA context on a thread of its own (a few
// hundred ms on a large GPU) while FFmpeg opens the input and the encoder. The future's destructor
// waits for it; an invalid future means nothing was started.
std::future<void> start_gpu_warm_up(const pipeline::EqualizerOptions& eq);
// A batch's: every device of `devices` at once, each on a thread of its own (contexts made one after
// the other would delay the last GPU's first file by the others' time).
std::vector<std::future<void>> start_gpu_warm_ups(const std::vector<int>& devices);

// --verbose: FFmpeg's warnings and errors go to stderr as "histeq: ffmpeg: ...".
void forward_ffmpeg_log(bool verbose);

// --hwdec as asked ("auto", "nvdec", "none"): "auto" means none when the equalizer runs on the CPU
// (--cpu), since the frames would only come back to the host.
video::HwDecode hwdec_for(const std::string& option, const pipeline::EqualizerOptions& eq);

// "1920x1080", "1080p", "720p", "4k" -> width, height.
Status parse_size(const std::string& s, int& width, int& height);

// Runs `argv` (argv[0] looked up on PATH as execvp does) with posix_spawn: no shell, so no argument
// is ever parsed as shell syntax. Waits for it; returns its exit status, 128 + the signal that
// killed it, or -1 when it could not be started. `quiet`: its stderr goes to /dev/null. Blocking;
// any thread.
int run_program(const std::vector<std::string>& argv, bool quiet = false);

// A helper script histeq ships (e.g. "plot_paper.py"): from the installed data folder
// (HISTEQ_DATA_DIR, e.g. /usr/local/share/histeq) or else the source tree this binary was built
// from (HISTEQ_SOURCE_DIR/bench), never from the working directory; "" when neither has it.
std::string find_data_script(const std::string& name, const std::string& data_dir, const std::string& source_dir);

// Seconds as "1:02:03" or "2:03".
std::string clock_string(double seconds);

}  // namespace histeq::app
