// histeq export IN... -o DIR/: several files (or folders of them) exported into one folder, --jobs
// at a time (pipeline::run_batch), with a line per running file and a total line with the ETA (or
// JSON lines that name the file), one bad file reported and skipped, and --report: every file's
// result as JSON. -n and --resume skip existing (or complete) outputs. The exit code says whether
// every file was written or skipped (0), not (1), or the batch was stopped by a signal (128 + its
// number: 130 for Ctrl-C, 143 for SIGTERM).
#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <map>

#include "app/commands/commands.h"
#include "app/common/names.h"
#include "app/common/run_common.h"
#include "core/cuda/device.h"
#include "core/histogram/histogram.h"
#include "core/image/fork_join.h"
#include "core/pipeline/batch.h"

namespace histeq::app {
namespace {

using Clock = std::chrono::steady_clock;
using nlohmann::json;

using Mode = ProgressMode;

double seconds_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

std::string size_string(int64_t bytes) {
  char b[32];
  if (bytes >= 1 << 30) std::snprintf(b, sizeof(b), "%.2f GB", bytes / 1073741824.0);
  else if (bytes >= 1 << 20) std::snprintf(b, sizeof(b), "%.1f MB", bytes / 1048576.0);
  else std::snprintf(b, sizeof(b), "%.0f kB", bytes / 1024.0);
  return b;
}

// Whether the equalizer will run on the GPU (as Equalizer::create decides): not --cpu, not
// passthrough, a device present, and no CPU kernel named.
bool uses_gpu(const pipeline::EqualizerOptions& eq) {
  if (eq.cpu || eq.passthrough || !cuda::have_device()) return false;
  if (eq.kernel.empty()) return true;
  const hist::KernelEntry* k = hist::find_kernel(eq.kernel);
  return k != nullptr && k->info.backend == Backend::gpu;
}

// Whether the batch's pipelines work on GPUs: the equalizer, or NVDEC's decoding (--passthrough and
// --cpu decode there too unless --hwdec none).
bool uses_gpus(const ExportCliOptions& o) {
  return uses_gpu(o.eq) || (cuda::have_device() && hwdec_for(o.hwdec, o.eq) != video::HwDecode::none);
}

// The decode sessions that keep each of `devices` busy when NVDEC may decode: two an NVDEC engine,
// so that while one file opens or closes the other keeps the engine fed (H100, 1080p60 H.264: seven
// jobs held NVDEC at 94-95% and 4,284 fps, fourteen at 100% and 4,514; docs/performance.md, "Several
// GPUs"). None (one job a GPU) with software decoding.
std::vector<int> decode_sessions(const ExportCliOptions& o, const std::vector<int>& devices) {
  std::vector<int> sessions;
  if (hwdec_for(o.hwdec, o.eq) == video::HwDecode::none) return sessions;
  for (int d : devices) sessions.push_back(2 * video::nvdec_engines(d));
  return sessions;
}

// Each GPU's share of the batch: files, frames and frames a second over the batch's time. One
// entry a device that ran a file, in device order.
json device_totals(const std::vector<pipeline::BatchFileResult>& results, double elapsed_s) {
  std::map<int, std::pair<int, int64_t>> per;  // device -> files ok, frames out
  for (const auto& r : results) {
    if (r.device < 0 || r.outcome == pipeline::BatchOutcome::skipped || r.outcome == pipeline::BatchOutcome::not_started) continue;
    auto& t = per[r.device];
    if (r.outcome == pipeline::BatchOutcome::ok) ++t.first;
    t.second += r.frames_out;
  }
  json out = json::array();
  for (const auto& [device, t] : per) {
    auto info = cuda::device_info(device);
    out.push_back({{"device", device},
                   {"name", info ? info->name : std::string("CUDA device")},
                   {"files_ok", t.first},
                   {"frames", t.second},
                   {"fps", elapsed_s > 0 ? static_cast<double>(t.second) / elapsed_s : 0.0}});
  }
  return out;
}

// With several GPUs, a line each: "GPU 1 (NVIDIA H100 80GB HBM3): 4 files, 960 frames, 412.3 fps".
void print_device_totals(const json& totals) {
  if (totals.size() < 2) return;
  for (const json& t : totals)
    std::fprintf(stderr, "histeq: GPU %d (%s): %d file%s, %lld frames, %.1f fps\n", t["device"].get<int>(),
                 t["name"].get<std::string>().c_str(), t["files_ok"].get<int>(), t["files_ok"].get<int>() == 1 ? "" : "s",
                 static_cast<long long>(t["frames"].get<int64_t>()), t["fps"].get<double>());
}

// What the batch shows while it runs: per running file a line, then the total with the ETA.
// Called under the batch's lock (pipeline::BatchCallbacks), so one call at a time.
class Board {
 public:
  // `writes`: false for -f null (a file's line then says what was decoded, not written).
  Board(Mode mode, const std::vector<pipeline::BatchItem>& items, bool writes = true)
      : mode_(mode), writes_(writes), items_(items), files_(items.size()) {
    t0_ = last_ = Clock::now();
  }

  void started(size_t i, const pipeline::ExportPlan& plan) {
    File& f = files_[i];
    f.running = true;
    f.expected = plan.frames_hint;
    f.duration_s = plan.duration_s;
    if (mode_ == Mode::json) {
      emit(item_json({{"event", "start"},
            {"index", i},
            {"input_description", plan.input_description},
            {"output_description", plan.output_description},
            {"equalizer", describe_equalizer(plan.equalizer)},
            {"frames_expected", plan.frames_hint},
            {"notes", plan.notes}}, items_[i], true));
    } else if (mode_ != Mode::none) {
      permanent(tag(i) + escape_name(items_[i].input) + " -> " + escape_name(items_[i].output) + ": " + plan.input_description + "; " +
                describe_equalizer(plan.equalizer));
      for (const auto& n : plan.notes) permanent(tag(i) + "note: " + n);
    }
  }

  void progress(size_t i, const pipeline::ExportProgress& p) {
    File& f = files_[i];
    f.frames = p.frames;
    f.media_s = p.media_s;
    f.elapsed_s = p.elapsed_s;
    tick(false);
  }

  void finished(size_t i, const pipeline::BatchFileResult& r) {
    File& f = files_[i];
    f.running = false;
    f.outcome = r.outcome;
    f.frames = r.frames_out;
    const bool written = r.outcome == pipeline::BatchOutcome::ok || r.outcome == pipeline::BatchOutcome::short_input;
    if (written) ++ok_;
    else if (r.outcome == pipeline::BatchOutcome::failed) ++failed_;
    else if (r.outcome == pipeline::BatchOutcome::skipped) ++skipped_;
    if (mode_ == Mode::json) {
      if (written)
        emit(item_json({{"event", "done"}, {"index", i}, {"result", pipeline::outcome_name(r.outcome)},
              {"frames_expected", r.frames_expected}, {"frames_in", r.frames_in},
              {"frames_out", r.frames_out}, {"corrupt_packets", r.source.corrupt_packets}, {"damaged_frames", r.source.damaged_frames},
              {"elapsed_s", r.elapsed_s}, {"output_bytes", r.output_bytes}}, r.item, true));
      else
        emit(item_json({{"event", event_name(r.outcome)}, {"index", i}, {"message", r.message}}, r.item,
                       r.outcome == pipeline::BatchOutcome::skipped));
    }
    if (r.outcome == pipeline::BatchOutcome::failed) {
      permanent(r.message, true);  // "histeq: FILE: cause" on stderr, as a single export says it, in every mode
    } else if (mode_ != Mode::json && r.outcome == pipeline::BatchOutcome::skipped) {
      permanent(tag(i) + r.message);
    }
    if (r.outcome == pipeline::BatchOutcome::short_input) permanent(tag(i) + "note: " + r.message, true);  // in every mode, as a single export
    if (mode_ != Mode::json && mode_ != Mode::none && written) {
      char b[160];
      if (writes_) {
        std::snprintf(b, sizeof(b), ": %lld frames, %s, %.2f s", static_cast<long long>(r.frames_out), size_string(r.output_bytes).c_str(),
                      r.elapsed_s);
        permanent(tag(i) + "wrote " + escape_name(r.item.output) + b);
      } else {
        std::snprintf(b, sizeof(b), ": %lld frames equalized in %.2f s (-f null: nothing written)", static_cast<long long>(r.frames_out),
                      r.elapsed_s);
        permanent(tag(i) + escape_name(r.item.input) + b);
      }
      for (const auto& n : r.notes) permanent(tag(i) + "note: " + n);
      const auto& sc = r.source;
      if (sc.corrupt_packets > 0 || sc.damaged_frames > 0)
        permanent(tag(i) + escape_name(r.item.input) + ": damaged input decoded past: " + std::to_string(sc.corrupt_packets) +
                  " corrupt packets skipped, " + std::to_string(sc.damaged_frames) + " damaged frames kept");
    }
    tick(true);
  }

  // The live block ends (its last total line stays).
  void close() {
    if (mode_ == Mode::live && drawn_ > 0) {
      std::fprintf(stderr, "\n");
      drawn_ = 0;
    }
  }


 private:
  struct File {
    bool running = false;
    pipeline::BatchOutcome outcome = pipeline::BatchOutcome::not_started;
    int64_t frames = 0, expected = 0;
    double media_s = 0, duration_s = 0, elapsed_s = 0;
  };

  std::string tag(size_t i) const {
    return "[" + std::to_string(i + 1) + "/" + std::to_string(items_.size()) + "] ";
  }

  void emit(const json& j) {
    std::printf("%s\n", dump_json(j).c_str());
    std::fflush(stdout);
  }

  static const char* event_name(pipeline::BatchOutcome o) {
    if (o == pipeline::BatchOutcome::cancelled) return "interrupted";
    return o == pipeline::BatchOutcome::skipped ? "skipped" : "error";
  }

  // `j` with the item's input ("file") and, with `output`, its output (put_name).
  static json item_json(json j, const pipeline::BatchItem& item, bool output) {
    put_name(j, "file", item.input);
    if (output) put_name(j, "output", item.output);
    return j;
  }

  // A line that stays (starts, ends, errors): above the live block.
  void permanent(const std::string& line, bool error = false) {
    if (mode_ == Mode::none && !error) return;
    clear_block();
    std::fprintf(stderr, "histeq: %s\n", terminal_safe(line).c_str());
    std::fflush(stderr);
  }

  void clear_block() {
    if (mode_ != Mode::live || drawn_ == 0) return;
    if (drawn_ > 1) std::fprintf(stderr, "\033[%dA", drawn_ - 1);
    std::fprintf(stderr, "\r\033[J");
    drawn_ = 0;
  }

  // Frames done and expected over the batch: files that failed leave both sums; files not yet
  // opened count as the average of those that were.
  void totals(int64_t& done, int64_t& expected, int& running) const {
    done = expected = 0;
    running = 0;
    int64_t known = 0;
    int opened = 0, waiting = 0;
    for (const File& f : files_) {
      if (f.outcome == pipeline::BatchOutcome::failed || f.outcome == pipeline::BatchOutcome::cancelled ||
          f.outcome == pipeline::BatchOutcome::skipped)
        continue;
      if (f.running) ++running;
      if (!f.running && f.outcome == pipeline::BatchOutcome::not_started) {
        ++waiting;
        continue;
      }
      done += f.frames;
      const bool written = f.outcome == pipeline::BatchOutcome::ok || f.outcome == pipeline::BatchOutcome::short_input;
      const int64_t e = written ? f.frames : std::max(f.expected, f.frames);
      expected += e;
      known += e;
      ++opened;
    }
    if (opened > 0) expected += known / opened * waiting;
  }

  void tick(bool force) {
    if (mode_ == Mode::none) return;
    const auto now = Clock::now();
    const auto period = mode_ == Mode::live ? std::chrono::milliseconds(250) : std::chrono::milliseconds(1000);
    if (!force && now - last_ < period) return;
    last_ = now;
    Totals t;
    totals(t.done, t.expected, t.running);
    t.elapsed = std::chrono::duration<double>(now - t0_).count();
    t.frac = t.expected > 0 ? std::min(1.0, static_cast<double>(t.done) / static_cast<double>(t.expected)) : -1;
    t.eta = t.frac > 0 ? t.elapsed * (1 - t.frac) / t.frac : NAN;
    if (mode_ == Mode::json) show_json(t);
    else show_text(t);
  }

  // The whole batch's figures at one tick.
  struct Totals {
    int64_t done = 0, expected = 0;
    int running = 0;
    double elapsed = 0, frac = -1, eta = NAN;
  };

  // A "progress" event for each running file, then the "total" event.
  void show_json(const Totals& tt) {
    for (size_t i = 0; i < files_.size(); ++i) {
      const File& f = files_[i];
      if (!f.running) continue;
      json j = item_json({{"event", "progress"}, {"index", i}, {"frame", f.frames}, {"media_s", f.media_s},
                {"elapsed_s", f.elapsed_s}, {"fps", f.elapsed_s > 0 ? std::round(f.frames / f.elapsed_s * 10) / 10 : 0.0}},
                         items_[i], false);
      if (f.expected > 0) {
        const double p = std::min(1.0, static_cast<double>(f.frames) / static_cast<double>(f.expected));
        j["frames_expected"] = f.expected;
        j["percent"] = std::round(p * 1000) / 10;
        if (p > 0) j["eta_s"] = std::round(f.elapsed_s * (1 - p) / p * 10) / 10;
      }
      emit(j);
    }
    json t = {{"event", "total"}, {"files_total", files_.size()}, {"files_done", ok_}, {"files_failed", failed_}, {"files_skipped", skipped_},
              {"files_running", tt.running}, {"frames", tt.done}, {"frames_expected", tt.expected}, {"elapsed_s", std::round(tt.elapsed * 10) / 10}};
    if (tt.frac >= 0) t["percent"] = std::round(tt.frac * 1000) / 10;
    if (tt.frac > 0) t["eta_s"] = std::round(tt.eta * 10) / 10;
    emit(t);
  }

  // The line of running file i.
  std::string file_line(size_t i) const {
    const File& f = files_[i];
    char b[256];
    const double fps = f.elapsed_s > 0 ? f.frames / f.elapsed_s : 0;
    if (f.expected > 0) {
      const double p = std::min(1.0, static_cast<double>(f.frames) / static_cast<double>(f.expected));
      std::snprintf(b, sizeof(b), "%s%s: frame %lld/%lld (%.1f%%)  %.1f fps  ETA %s", tag(i).c_str(),
                    escape_name(std::filesystem::path(items_[i].input).filename()).c_str(), static_cast<long long>(f.frames),
                    static_cast<long long>(f.expected), p * 100, fps, p > 0 ? clock_string(f.elapsed_s * (1 - p) / p).c_str() : "?");
    } else {
      std::snprintf(b, sizeof(b), "%s%s: frame %lld  %.1f fps", tag(i).c_str(), escape_name(std::filesystem::path(items_[i].input).filename()).c_str(),
                    static_cast<long long>(f.frames), fps);
    }
    return b;
  }

  // A line for each running file and the total line: a block redrawn in place (live), or printed.
  void show_text(const Totals& tt) {
    std::vector<std::string> lines;
    for (size_t i = 0; i < files_.size(); ++i)
      if (files_[i].running) lines.push_back(file_line(i));
    char t[256];
    std::snprintf(t, sizeof(t), "total: %d of %zu files %s%s, %lld/%lld frames%s, %s elapsed, ETA %s", ok_, files_.size(),
                  writes_ ? "written" : "equalized (nothing written)", failed_ > 0 ? (", " + std::to_string(failed_) + " failed").c_str() : "", static_cast<long long>(tt.done),
                  static_cast<long long>(tt.expected), tt.frac >= 0 ? (" (" + std::to_string(static_cast<int>(tt.frac * 1000) / 10) + "." +
                                                                       std::to_string(static_cast<int>(tt.frac * 1000) % 10) + "%)").c_str() : "",
                  clock_string(tt.elapsed).c_str(), tt.frac > 0 ? clock_string(tt.eta).c_str() : "?");
    lines.push_back(t);
    if (mode_ == Mode::live) {
      clear_block();
      for (size_t k = 0; k < lines.size(); ++k)
        std::fprintf(stderr, "histeq: %s\033[K%s", lines[k].c_str(), k + 1 < lines.size() ? "\n" : "");
      drawn_ = static_cast<int>(lines.size());
    } else {
      for (const auto& l : lines) std::fprintf(stderr, "histeq: %s\n", l.c_str());
    }
    std::fflush(stderr);
  }

  Mode mode_;
  bool writes_;
  const std::vector<pipeline::BatchItem>& items_;
  std::vector<File> files_;
  Clock::time_point t0_, last_;
  int ok_ = 0, failed_ = 0, skipped_ = 0;
  int drawn_ = 0;  // live mode: lines of the block on screen
};

}  // namespace

namespace {

double wall_clock_s() { return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count(); }

// "2026-01-02T10:05:00.123Z": seconds since the epoch as UTC, to the millisecond (merge_reports.py
// orders a job array's reports by it).
std::string utc_time(double s) {
  const auto whole = static_cast<time_t>(s);
  std::tm tm {};
  gmtime_r(&whole, &tm);
  char b[40], out[48];
  std::strftime(b, sizeof(b), "%Y-%m-%dT%H:%M:%S", &tm);
  std::snprintf(out, sizeof(out), "%s.%03dZ", b, static_cast<int>((s - static_cast<double>(whole)) * 1000) % 1000);
  return out;
}

}  // namespace

Status write_export_report(const std::string& path, const std::vector<std::string>& argv,
                           const std::vector<pipeline::BatchFileResult>& results, double elapsed_s, int jobs) {
  json files = json::array();
  std::map<std::string, int> count;
  const double now = wall_clock_s();
  for (const auto& r : results) {
    ++count[pipeline::outcome_name(r.outcome)];
    json f = {{"result", pipeline::outcome_name(r.outcome)},
              {"finished_at", utc_time(r.finished_at > 0 ? r.finished_at : now)},
              {"frames_in", r.frames_in},
              {"frames_out", r.frames_out},
              {"frames_expected", r.frames_expected},
              {"elapsed_s", r.elapsed_s},
              {"output_bytes", r.output_bytes},
              {"corrupt_packets", r.source.corrupt_packets},
              {"damaged_frames", r.source.damaged_frames}};
    put_name(f, "input", r.item.input);
    put_name(f, "output", r.item.output);
    if (!r.message.empty()) f["message"] = r.message;
    if (!r.notes.empty()) f["notes"] = r.notes;
    if (r.device >= 0) f["device"] = r.device;
    files.push_back(std::move(f));
  }
  json j = {{"command", argv},
            {"started_at", utc_time(now - elapsed_s)},
            {"finished_at", utc_time(now)},
            {"elapsed_s", elapsed_s},
            {"jobs", jobs},
            {"devices", device_totals(results, elapsed_s)},
            {"files_total", results.size()},
            {"files_ok", count["ok"]},
            {"files_short", count["short"]},
            {"files_failed", count["failed"]},
            {"files_skipped", count["skipped"]},
            {"files_interrupted", count["interrupted"]},
            {"files_not_started", count["not started"]},
            {"files", std::move(files)}};
  return write_json_file(path, j);
}

namespace {

struct BatchCounts {
  int failed = 0;
  bool stopped = false;  // by a signal, or a file interrupted
};

// The batch's last words: the JSON summary event, and the line "N of M files written, ..." (in
// every mode when a file failed or the batch was stopped).
BatchCounts summarize(const std::vector<pipeline::BatchFileResult>& results, Mode mode, double elapsed, bool stop, bool writes) {
  int ok = 0, failed = 0, interrupted = 0, not_started = 0, skipped = 0, short_inputs = 0;
  for (const auto& r : results) {
    if (r.outcome == pipeline::BatchOutcome::ok) ++ok;
    else if (r.outcome == pipeline::BatchOutcome::short_input) ++short_inputs;
    else if (r.outcome == pipeline::BatchOutcome::failed) ++failed;
    else if (r.outcome == pipeline::BatchOutcome::skipped) ++skipped;
    else if (r.outcome == pipeline::BatchOutcome::cancelled) ++interrupted;
    else ++not_started;
  }
  const bool stopped = stop || interrupted > 0;
  if (mode == Mode::json) {
    std::printf("%s\n", dump_json({{"event", "summary"},
                                   {"files_ok", ok},
                                   {"files_short", short_inputs},
                                   {"files_failed", failed},
                                   {"files_skipped", skipped},
                                   {"files_interrupted", interrupted},
                                   {"files_not_started", not_started},
                                   {"elapsed_s", elapsed},
                                   {"devices", device_totals(results, elapsed)}})
                            .c_str());
    std::fflush(stdout);
  }
  if (mode != Mode::json || failed > 0 || stopped) {
    std::string line = std::to_string(ok + short_inputs) + " of " + std::to_string(results.size()) +
                       (writes ? " files written" : " files equalized (-f null)");
    if (short_inputs > 0) line += " (" + std::to_string(short_inputs) + " from inputs that end early)";
    if (skipped > 0) line += ", " + std::to_string(skipped) + " skipped";
    if (failed > 0) line += ", " + std::to_string(failed) + " failed";
    if (interrupted + not_started > 0) line += ", " + std::to_string(interrupted + not_started) + " not written (interrupted)";
    char t[64];
    std::snprintf(t, sizeof(t), " in %.2f s", elapsed);
    if (mode != Mode::none || failed > 0 || stopped) std::fprintf(stderr, "histeq: %s%s\n", line.c_str(), t);
    if (mode != Mode::none) print_device_totals(device_totals(results, elapsed));
  }
  return {failed, stopped};
}

pipeline::Existing existing_policy(const ExportCliOptions& o) {
  if (o.resume) return pipeline::Existing::resume;
  return o.skip_existing ? pipeline::Existing::skip : pipeline::Existing::fail;
}


namespace fs = std::filesystem;

// A whole non-negative decimal number, all of `s` (std::from_chars: no locale, no sign, no wrap).
bool parse_count(const std::string& s, long long& v) {
  if (s.empty() || s[0] == '-' || s[0] == '+') return false;
  const auto r = std::from_chars(s.data(), s.data() + s.size(), v);
  return r.ec == std::errc() && r.ptr == s.data() + s.size();
}

// --shard K/N: K in 0..N-1, N >= 1; (K, N).
Result<std::pair<long long, long long>> parse_shard(const std::string& s) {
  const size_t slash = s.find('/');
  long long k = -1, n = 0;
  const bool parsed = slash != std::string::npos && parse_count(s.substr(0, slash), k) && parse_count(s.substr(slash + 1), n);
  if (!parsed || n < 1 || k >= n)
    return HISTEQ_ERROR(Code::invalid_argument, "--shard '" + s + "': give K/N with 0 <= K < N, e.g. 0/4");
  return std::make_pair(k, n);
}

// The batch's files (all, or the --shard share, or the --index one) into `items`; 0, or fail()'s code.
int plan_items(const ExportCliOptions& o, std::vector<pipeline::BatchItem>& items) {
  std::error_code ec;
  if (fs::exists(o.output, ec) && !fs::is_directory(o.output, ec))
    return fail(o.output + ": is a file; a batch writes into a folder (give -o DIR/)", 2);
  auto planned = pipeline::plan_batch(o.inputs, o.output, o.ext);
  if (!planned) return fail(planned.status().message(), planned.status().code() == Code::not_found ? 1 : 2);
  items = std::move(planned.value());
  if (!o.shard.empty()) {
    if (o.index >= 0) return fail("--index and --shard both pick files: give one", 2);
    auto shard = parse_shard(o.shard);
    if (!shard) return fail(shard.status().message(), 2);
    std::vector<pipeline::BatchItem> mine;
    for (size_t i = static_cast<size_t>(shard->first); i < items.size(); i += static_cast<size_t>(shard->second)) mine.push_back(items[i]);
    items = std::move(mine);  // may be none: a node with no share has nothing to do
  }
  if (o.index >= 0) {
    if (static_cast<size_t>(o.index) >= items.size())
      return fail("--index " + std::to_string(o.index) + ": the batch has " + std::to_string(items.size()) + " files (0.." +
                      std::to_string(items.size() - 1) + ")",
                  2);
    items = {items[static_cast<size_t>(o.index)]};
  }
  return 0;
}

// --device checked against the equalizer and the machine (default: every GPU) into `devices`; 0, or
// fail()'s code.
int pick_devices(const ExportCliOptions& o, bool gpu, std::vector<int>& devices) {
  devices = o.devices;
  if (!devices.empty() && !gpu)
    return fail("--device: " + std::string(cuda::have_device() ? "nothing runs on a GPU here (the CPU equalizer with --hwdec none)"
                                                                 : "no CUDA device is available"),
                2);
  if (gpu && devices.empty())
    for (int d = 0; d < cuda::device_count(); ++d) devices.push_back(d);
  for (int d : devices)
    if (d >= cuda::device_count())
      return fail("--device " + std::to_string(d) + ": this machine has " + std::to_string(cuda::device_count()) + " CUDA devices", 2);
  return 0;
}

// What the batch does: the JSON "batch" event or the first line.
void announce_batch(const ExportCliOptions& o, size_t files, const pipeline::JobPlan& jp, bool gpu, Mode mode) {
  std::string devs;
  for (int d : jp.devices) devs += (devs.empty() ? "" : ",") + std::to_string(d);
  if (mode == Mode::json) {
    json b = {{"event", "batch"}, {"files", files}, {"jobs", jp.jobs}, {"encoder_threads", jp.encoder_threads},
              {"devices", jp.devices}};
    put_name(b, "output_dir", o.output);
    std::printf("%s\n", dump_json(b).c_str());
    std::fflush(stdout);
  } else if (mode != Mode::none) {
    std::fprintf(stderr, "histeq: exporting %zu file%s to %s with %d job%s (encoder threads: %s)%s\n", files,
                 files == 1 ? "" : "s", escape_name(o.output).c_str(), jp.jobs, jp.jobs == 1 ? "" : "s",
                 jp.encoder_threads > 0 ? std::to_string(jp.encoder_threads).c_str() : "the encoder's choice",
                 gpu ? (", GPU " + devs).c_str() : ", CPU equalizer");
  }
}

// The files exported on `jp`'s jobs, each one's temporary output removed on a signal while it is
// written, the board kept up to date.
std::vector<pipeline::BatchFileResult> export_items(const ExportCliOptions& o, const video::TimeRange& range,
                                                    const std::vector<pipeline::BatchItem>& items, const pipeline::JobPlan& jp,
                                                    const std::atomic<bool>& stop, Board& board) {
  const pipeline::ExportOptions base = export_options(o, range);
  std::vector<int> slots(items.size(), -1);
  pipeline::BatchCallbacks cb;
  cb.started = [&](size_t i, const pipeline::ExportPlan& plan, const std::string& temp) {
    slots[i] = add_signal_cleanup(temp);
    board.started(i, plan);
  };
  cb.progress = [&](size_t i, const pipeline::ExportProgress& p) { board.progress(i, p); };
  cb.finished = [&](size_t i, const pipeline::BatchFileResult& r) {
    remove_signal_cleanup(slots[i]);
    slots[i] = -1;
    board.finished(i, r);
  };
  return pipeline::run_batch(items, base, jp, stop, cb, existing_policy(o));
}

}  // namespace

int run_export_batch(const ExportCliOptions& o, const video::TimeRange& range, const std::vector<std::string>& argv) {
  const std::atomic<bool>& stop = install_stop_signals();
  forward_ffmpeg_log(o.verbose);
  if (!o.stats_json.empty()) return fail("--stats-json records one export: give one input file (or use --report for a batch)", 2);
  std::vector<pipeline::BatchItem> items;
  if (const int rc = plan_items(o, items)) return rc;
  if (o.list) {
    for (const auto& it : items) std::printf("%s\t%s\n", escape_name(it.input).c_str(), escape_name(it.output).c_str());
    return 0;
  }

  const bool gpu = uses_gpus(o);
  std::vector<int> devices;
  if (const int rc = pick_devices(o, gpu, devices)) return rc;
  const pipeline::JobPlan jp =
      pipeline::plan_jobs(o.jobs, gpu, devices, image::usable_cores(), items.size(), gpu ? decode_sessions(o, devices) : std::vector<int>{});

  std::error_code ec;
  if (o.format != "null" && !fs::is_directory(o.output, ec) && !fs::create_directories(o.output, ec) && ec)
    return fail(o.output + ": cannot create the folder: " + ec.message());

  const Mode mode = progress_mode(o.progress);
  announce_batch(o, items.size(), jp, gpu, mode);

  const std::vector<std::future<void>> gpu_warm_ups = start_gpu_warm_ups(jp.devices);
  Board board(mode, items, o.format != "null");
  const auto t0 = Clock::now();
  const std::vector<pipeline::BatchFileResult> results = export_items(o, range, items, jp, stop, board);
  board.close();
  const double elapsed = seconds_since(t0);

  const BatchCounts n = summarize(results, mode, elapsed, stop.load(), o.format != "null");
  if (!o.report.empty())
    if (Status s = write_export_report(o.report, argv, results, elapsed, jp.jobs); !s) return fail(s.to_string());
  if (n.stopped) return stop_exit_code();
  return n.failed > 0 ? 1 : 0;
}

}  // namespace histeq::app
