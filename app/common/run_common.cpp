#include "app/common/run_common.h"

#include <nlohmann/json.hpp>

#include <cerrno>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <mutex>

#include <fcntl.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "app/common/names.h"
#include "app/common/play_options.h"
#include "core/cuda/device.h"
#include "core/cuda/numbers.h"
#include "core/histogram/histogram.h"
#include "core/pipeline/hidden_names.h"
#include "core/video/log.h"

namespace histeq::app {

int fail(const std::string& message, int code) {
  std::fprintf(stderr, "histeq: %s\n", terminal_safe(message).c_str());
  return code;
}

void warn(const std::vector<std::string>& lines) {
  for (const auto& l : lines) std::fprintf(stderr, "histeq: warning: %s\n", terminal_safe(l).c_str());
}

namespace {

std::atomic<bool> g_stop{false};
std::atomic<int> g_stop_signal{0};  // the first stop signal's number
// Read by the handler: plain buffers, no allocation there. Slot 0 is set_signal_cleanup()'s; the
// others are handed out by add_signal_cleanup().
constexpr int kCleanupSlots = 65;
char g_cleanup[kCleanupSlots][4096] = {};
std::mutex g_slots_mu;
bool g_slot_taken[kCleanupSlots] = {true};

// A name is written all but its first byte, then the first: the handler never sees half a name.
void write_slot(int slot, const std::string& path) {
  char* b = g_cleanup[slot];
  b[0] = '\0';
  if (path.size() >= sizeof(g_cleanup[0])) return;
  std::memcpy(b + 1, path.c_str() + 1, path.size());
  b[0] = path.empty() ? '\0' : path[0];
}

extern "C" void on_stop_signal(int sig) {
  if (g_stop.load()) {  // second signal: stop now, without the partial output (async-signal-safe calls only)
    for (auto& name : g_cleanup)
      if (name[0] != '\0') ::unlink(name);
    std::signal(sig, SIG_DFL);
    std::raise(sig);
    return;
  }
  g_stop_signal.store(sig);
  g_stop.store(true);
}

}  // namespace

const std::atomic<bool>& install_stop_signals() {
  struct sigaction sa {};
  sa.sa_handler = on_stop_signal;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESTART;
  for (int s : {SIGINT, SIGTERM, SIGHUP}) sigaction(s, &sa, nullptr);
  std::signal(SIGPIPE, SIG_IGN);
  ignore_file_size_signal();
  return g_stop;
}

void ignore_file_size_signal() { std::signal(SIGXFSZ, SIG_IGN); }

int stop_exit_code() {
  const int sig = g_stop_signal.load();
  return 128 + (sig > 0 ? sig : SIGINT);
}

void set_signal_cleanup(const std::string& path) { write_slot(0, path); }

int add_signal_cleanup(const std::string& path) {
  std::lock_guard<std::mutex> l(g_slots_mu);
  for (int i = 1; i < kCleanupSlots; ++i)
    if (!g_slot_taken[i]) {
      g_slot_taken[i] = true;
      write_slot(i, path);
      return i;
    }
  return -1;
}

void remove_signal_cleanup(int slot) {
  if (slot <= 0 || slot >= kCleanupSlots) return;
  std::lock_guard<std::mutex> l(g_slots_mu);
  write_slot(slot, "");
  g_slot_taken[slot] = false;
}

std::string format_stage_table(const std::vector<pipeline::StageSummary>& rows, const std::vector<video::StageId>& order,
                               bool with_last) {
  char line[160];
  std::string out;
  if (with_last) std::snprintf(line, sizeof(line), "  %-10s %8s %8s %8s %8s %8s   ms\n", "stage", "last", "avg", "p50", "p99", "max");
  else std::snprintf(line, sizeof(line), "  %-10s %8s %8s %8s %8s   ms\n", "stage", "avg", "p50", "p99", "max");
  out += line;
  for (int r : pipeline::ordered_rows(rows, order)) {
    const auto& s = rows[r];
    if (r == pipeline::kLatency) out += "  ----------\n";
    if (with_last)
      std::snprintf(line, sizeof(line), "  %-10s %8.3f %8.3f %8.3f %8.3f %8.3f\n", pipeline::row_name(r), s.last, s.avg, s.p50,
                    s.p99, s.max);
    else
      std::snprintf(line, sizeof(line), "  %-10s %8.3f %8.3f %8.3f %8.3f\n", pipeline::row_name(r), s.avg, s.p50, s.p99, s.max);
    out += line;
  }
  return out;
}

std::string counters_line(int64_t frames, double secs, const pipeline::RunStats& stats, int64_t dropped_source,
                          const video::SourceCounters& sc) {
  char b[320];
  std::snprintf(b, sizeof(b),
                "%lld frames, %.1f fps; late %lld; dropped %lld (%lld behind schedule, %lld at the source); "
                "%lld corrupt packets, %lld damaged frames",
                static_cast<long long>(frames), secs > 0 ? frames / secs : 0.0, static_cast<long long>(stats.late()),
                static_cast<long long>(stats.dropped() + dropped_source), static_cast<long long>(stats.dropped()),
                static_cast<long long>(dropped_source), static_cast<long long>(sc.corrupt_packets),
                static_cast<long long>(sc.damaged_frames));
  return b;
}

std::string describe_equalizer(const pipeline::EqualizerInfo& e) { return describe_equalizer(e, eq::describe(e.quality)); }

std::string describe_equalizer(const pipeline::EqualizerInfo& e, const std::string& quality) {
  if (e.kernel == "none") return "no equalization (passthrough)";
  return std::string(backend_name(e.backend)) + " " + e.kernel + " (" + e.device +
         (e.fallback_note.empty() ? "" : "; no CUDA device") + "), " + std::to_string(e.bins) + " bins; " + (quality.empty() ? eq::describe(e.quality) : quality);
}

namespace {

// One frame's record as --stats-json writes it.
nlohmann::json frame_json(const pipeline::FrameRecord& rec) {
  nlohmann::json f = {{"index", rec.index}, {"time_s", rec.time_s}};
  if (!rec.kernel.empty()) f["kernel"] = rec.kernel;
  for (int r = 0; r < video::kMaxStages; ++r)
    if (rec.timing.has(r)) f[pipeline::row_name(r)] = rec.timing.get(r);
  if (rec.timing.latency_ms == rec.timing.latency_ms) f["latency"] = rec.timing.latency_ms;
  if (rec.presented_ns != 0) f["presented_ns"] = rec.presented_ns;
  if (rec.av_offset_ms == rec.av_offset_ms) f["av_offset_ms"] = rec.av_offset_ms;
  if (rec.paused_ns != 0) f["paused_ms"] = static_cast<double>(rec.paused_ns) / 1e6;
  if (rec.late) f["late"] = true;
  if (rec.dropped) f["dropped"] = true;
  if (rec.damaged) f["damaged"] = true;
  return f;
}

// A JSON file that could not be written: what `path` held is from an earlier run and must not
// pass for this one's, so it is removed (a regular file only) and the message says so.
Status json_not_written(const std::string& path, std::string why) {
  struct stat st {};
  if (::lstat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) && ::unlink(path.c_str()) == 0)
    why += " (the older file there was removed)";
  return HISTEQ_ERROR(Code::io_error, path + ": cannot write: " + why);
}

// Writes what `produce` hands to its `put` (piece by piece, so that nothing needs the whole text in
// memory) to `path` through a new temporary file in the same folder (mkstemp: never a planted name
// or symlink), renamed over `path` when complete.
Status write_atomically(const std::string& path, const std::function<void(const std::function<void(const std::string&)>&)>& produce) {
  std::string templ = pipeline::hidden_sibling(path, ".XXXXXX.part");  // fits NAME_MAX (hidden_names.h)
  const int fd = ::mkstemps(templ.data(), 5);
  if (fd < 0) return json_not_written(path, std::strerror(errno));
  const mode_t mask = ::umask(0);
  ::umask(mask);
  (void)::fchmod(fd, 0666 & ~mask);
  std::string err, buf;
  auto flush = [&] {
    for (size_t done = 0; done < buf.size() && err.empty();) {
      const ssize_t n = ::write(fd, buf.data() + done, buf.size() - done);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) err = std::strerror(n < 0 ? errno : EIO);
      else done += static_cast<size_t>(n);
    }
    buf.clear();
  };
  produce([&](const std::string& piece) {
    buf += piece;
    if (buf.size() >= (1u << 20)) flush();
  });
  flush();
  if (::close(fd) != 0 && err.empty()) err = std::strerror(errno);
  if (err.empty() && std::rename(templ.c_str(), path.c_str()) != 0) err = std::strerror(errno);
  if (!err.empty()) {
    ::unlink(templ.c_str());
    return json_not_written(path, err);
  }
  return Status::ok();
}

}  // namespace

Status write_stats_json(const std::string& path, const std::vector<std::string>& argv, const video::SourceInfo& source,
                        const pipeline::EqualizerInfo& eq, const pipeline::RunStats& stats,
                        const std::vector<video::StageId>& order, double wall_s,
                        const std::vector<std::pair<std::string, int64_t>>& counters,
                        const std::function<void(nlohmann::json&)>& extend) {
  using nlohmann::json;
  json j;
  j["command"] = argv;
  j["source"] = {{"description", source.description},
                 {"format", source.format.describe()},
                 {"decoder", source.decoder},
                 {"frame_rate", source.frame_rate.value()}};
  put_name(j["source"], "name", source.name);
  j["equalizer"] = {{"backend", eq.backend == Backend::gpu ? "gpu" : "cpu"},
                    {"kernel", eq.kernel},
                    {"device", eq.device},
                    {"bins", eq.bins},
                    {"strength_weight", eq.weight},
                    {"quality", eq::describe(eq.quality)}};
  j["units"] = "ms";
  const auto total = stats.total();
  const std::vector<int> rows = pipeline::ordered_rows(total, order);
  json stages = json::array();
  for (int r : rows) stages.push_back(pipeline::row_name(r));
  j["stages"] = stages;
  // The frames go in where this stands, streamed from the records (an endless input's run keeps
  // them in a spill file, not in memory).
  const std::string token = "\x01frames of the run\x01";
  j["frames"] = token;
  json summary = json::object();
  for (int r : rows) {
    const auto& s = total[r];
    summary[pipeline::row_name(r)] = {{"count", s.count}, {"avg", s.avg}, {"p50", s.p50}, {"p99", s.p99}, {"max", s.max}};
  }
  j["summary"] = std::move(summary);
  json c = {{"frames", stats.frames()}, {"late", stats.late()}, {"dropped_behind", stats.dropped()}, {"wall_s", wall_s}};
  if (stats.records_lost() > 0) c["records_lost"] = stats.records_lost();
  for (const auto& [k, v] : counters) c[k] = v;
  j["counters"] = std::move(c);
  if (extend) extend(j);
  const std::string text = dump_json(j, 1) + "\n";
  const std::string mark = "\"frames\": " + json(token).dump();
  const size_t at = text.find(mark);
  if (at == std::string::npos) return HISTEQ_ERROR(Code::internal, "stats JSON: no place for the frames");
  return write_atomically(path, [&](const std::function<void(const std::string&)>& put) {
    put(text.substr(0, at) + "\"frames\": [");
    bool first = true;
    stats.for_each_record([&](const pipeline::FrameRecord& rec) {
      put(std::string(first ? "\n  " : ",\n  ") + dump_json(frame_json(rec)));
      first = false;
    });
    put(first ? "]" : "\n ]");
    put(text.substr(at + mark.size()));
  });
}


Status write_json_file(const std::string& path, const nlohmann::json& j) {
  const std::string text = dump_json(j, 1) + "\n";
  return write_atomically(path, [&](const std::function<void(const std::string&)>& put) { put(text); });
}

std::future<void> start_gpu_warm_up(const pipeline::EqualizerOptions& eq) {
  if (eq.cpu || eq.passthrough) return {};
  if (!eq.kernel.empty()) {
    const hist::KernelEntry* k = hist::find_kernel(eq.kernel);
    if (k == nullptr || k->info.backend != Backend::gpu) return {};
  }
  // The context of the device the pipeline will use (--device), not device 0's.
  return std::async(std::launch::async, [device = eq.device] {
    if (device >= 0 && !cuda::use_device(device)) return;
    (void)cuda::init_context();
  });
}

std::vector<std::future<void>> start_gpu_warm_ups(const std::vector<int>& devices) {
  std::vector<std::future<void>> started;
  for (int device : devices)
    started.push_back(std::async(std::launch::async, [device] {
      if (cuda::use_device(device)) (void)cuda::init_context();
    }));
  return started;
}

void forward_ffmpeg_log(bool verbose) {
  if (!verbose) return;
  video::set_log_forward([](int, const std::string& line) { std::fprintf(stderr, "histeq: ffmpeg: %s\n", line.c_str()); },
                         24 /* AV_LOG_WARNING */);
}

video::HwDecode hwdec_for(const std::string& option, const pipeline::EqualizerOptions& eq) {
  auto h = video::parse_hwdec(option);
  if (!h) return video::HwDecode::none;  // CLI11 checked the choices
  if (*h == video::HwDecode::auto_ && eq.cpu) return video::HwDecode::none;
  return *h;
}

Status parse_size(const std::string& s, int& w, int& h) {
  if (s == "1080p") { w = 1920; h = 1080; return Status::ok(); }
  if (s == "720p") { w = 1280; h = 720; return Status::ok(); }
  if (s == "4k" || s == "2160p") { w = 3840; h = 2160; return Status::ok(); }
  if (s.find('x') == std::string::npos) return HISTEQ_ERROR(Code::invalid_argument, "bad size '" + s + "' (WxH, 720p, 1080p or 4k)");
  // The one WxH parser of the core: never wraps (4294967616x180 is refused, not 320x180).
  return parse_dimensions(s, "size", 1 << 16, w, h);
}

int run_program(const std::vector<std::string>& argv, bool quiet) {
  if (argv.empty()) return -1;
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  if (quiet) posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, "/dev/null", O_WRONLY, 0);
  pid_t pid = 0;
  const int spawned = ::posix_spawnp(&pid, args[0], &actions, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (spawned != 0) return -1;
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0)
    if (errno != EINTR) return -1;
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  return WIFSIGNALED(status) ? 128 + WTERMSIG(status) : -1;
}

std::string find_data_script(const std::string& name, const std::string& data_dir, const std::string& source_dir) {
  for (const std::string& dir : {data_dir, source_dir.empty() ? std::string() : source_dir + "/bench"}) {
    if (dir.empty() || dir[0] != '/') continue;  // a relative folder would be the working directory's
    const std::string p = dir + "/" + name;
    struct stat st {};
    if (::stat(p.c_str(), &st) == 0 && S_ISREG(st.st_mode)) return p;
  }
  return {};
}

std::string clock_string(double s) {
  if (!(s >= 0) || !std::isfinite(s)) return "?";
  const long t = std::lround(s);
  char b[32];
  if (t >= 3600) std::snprintf(b, sizeof(b), "%ld:%02ld:%02ld", t / 3600, (t / 60) % 60, t % 60);
  else std::snprintf(b, sizeof(b), "%ld:%02ld", t / 60, t % 60);
  return b;
}

}  // namespace histeq::app
