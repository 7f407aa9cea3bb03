#include "core/pipeline/batch.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <chrono>
#include <filesystem>
#include <map>
#include <mutex>
#include <thread>
#include <utility>

#include "core/pipeline/hidden_names.h"
#include "core/pipeline/source_factory.h"
#include "core/video/frame_count.h"

namespace histeq::pipeline {
namespace {

namespace fs = std::filesystem;

double now_s() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }
double wall_clock_s() { return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count(); }

bool same_file(const std::string& a, const std::string& b) {
  struct stat sa {}, sb {};
  return ::stat(a.c_str(), &sa) == 0 && ::stat(b.c_str(), &sb) == 0 && sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

// --ext: letters and digits, so that the output's name stays in the output folder ("mkv", not
// "mkv/../../x").
Status check_ext(const std::string& ext) {
  const std::string e = !ext.empty() && ext[0] == '.' ? ext.substr(1) : ext;
  const bool ok = !e.empty() && e.size() <= 16 &&
                  std::all_of(e.begin(), e.end(), [](unsigned char c) { return std::isalnum(c) != 0; });
  if (ok) return Status::ok();
  return HISTEQ_ERROR(Code::invalid_argument, "--ext '" + ext + "': an extension is letters and digits only (e.g. mkv)");
}

// The sidecar through a new temporary file renamed into place: a reader sees the whole line or none.
Status write_sidecar(const std::string& output, int64_t frames) {
  const std::string path = sidecar_path(output);
  std::string templ = hidden_sibling(output, ".histeq.XXXXXX");
  const int fd = ::mkstemp(templ.data());
  if (fd < 0) return HISTEQ_ERROR(Code::io_error, path + ": cannot write: " + std::strerror(errno));
  const std::string line = "frames " + std::to_string(frames) + "\n";
  const bool written = ::write(fd, line.data(), line.size()) == static_cast<ssize_t>(line.size());
  const bool closed = ::close(fd) == 0;
  if (!written || !closed || ::rename(templ.c_str(), path.c_str()) != 0) {
    ::unlink(templ.c_str());
    return HISTEQ_ERROR(Code::io_error, path + ": cannot write the record of the finished export");
  }
  return Status::ok();
}

int64_t read_sidecar(const std::string& output) {
  const int fd = ::open(sidecar_path(output).c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) return -1;
  char b[64] = {0};
  const ssize_t n = ::read(fd, b, sizeof(b) - 1);
  ::close(fd);
  long long frames = -1;
  char nl = 0;
  if (n <= 0 || std::sscanf(b, "frames %lld%c", &frames, &nl) != 2 || nl != '\n') return -1;
  return frames;
}

}  // namespace

std::string sidecar_path(const std::string& output) { return hidden_sibling(output, ".histeq"); }

bool complete_output(const std::string& output) {
  struct stat st {};
  if (::stat(output.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) return false;
  const int64_t recorded = read_sidecar(output);
  if (recorded < 0) return false;
  auto frames = video::count_video_packets(output);
  return frames.is_ok() && *frames == recorded;
}

int remove_stale_parts(const std::string& output) {
  const fs::path p(output);
  // Exactly the exporter's temporary name (".NAME.XXXXXX.part", or its shortened form for a long
  // NAME: hidden_names.h), mkstemps' six characters in place of the X's.
  const std::string templ = fs::path(hidden_sibling(output, ".XXXXXX.part")).filename().string();
  const std::string prefix = templ.substr(0, templ.size() - 11);
  std::error_code ec;
  const fs::path dir = p.parent_path().empty() ? fs::path(".") : p.parent_path();
  int removed = 0;
  for (const fs::directory_entry& e : fs::directory_iterator(dir, ec)) {
    const std::string n = e.path().filename().string();
    if (n.size() != templ.size() || n.compare(0, prefix.size(), prefix) != 0 || n.compare(n.size() - 5, 5, ".part") != 0) continue;
    std::error_code re;
    if (fs::remove(e.path(), re)) ++removed;
  }
  return removed;
}

Result<std::vector<BatchItem>> plan_batch(const std::vector<std::string>& inputs, const std::string& out_dir, const std::string& ext) {
  if (!ext.empty()) HISTEQ_TRY(check_ext(ext));
  std::vector<std::string> files;
  for (const std::string& in : inputs) {
    std::error_code ec;
    const fs::file_status st = fs::status(in, ec);
    if (!fs::is_directory(st)) {  // a file, or a bad path: its export reports it, the others go on
      files.push_back(in);
      continue;
    }
    std::vector<std::string> found;
    for (const fs::directory_entry& e : fs::directory_iterator(in, ec)) {
      const std::string name = e.path().filename().string();
      if (name.empty() || name[0] == '.' || !is_video_file_name(name)) continue;
      std::error_code fe;
      if (!e.is_regular_file(fe)) continue;
      found.push_back(e.path().string());
    }
    if (ec) return HISTEQ_ERROR(Code::io_error, in + ": cannot list the folder: " + ec.message());
    if (found.empty()) return HISTEQ_ERROR(Code::not_found, in + ": no video files in this folder (" + video_extensions_hint() + ")");
    std::sort(found.begin(), found.end());
    files.insert(files.end(), found.begin(), found.end());
  }
  std::vector<BatchItem> items;
  std::map<std::string, std::string> taken;  // output -> the input that claimed it
  for (const std::string& f : files) {
    fs::path name = fs::path(f).filename();
    if (!ext.empty()) name.replace_extension(ext[0] == '.' ? ext : "." + ext);
    const std::string out = (fs::path(out_dir) / name).lexically_normal().string();
    if (auto it = taken.find(out); it != taken.end())
      return HISTEQ_ERROR(Code::invalid_argument, out + ": both " + it->second + " and " + f + " would be written here");
    if (same_file(f, out) || fs::path(f).lexically_normal() == fs::path(out))
      return HISTEQ_ERROR(Code::invalid_argument, out + ": is the input " + f + "; export into another folder (or give --ext)");
    taken[out] = f;
    items.push_back({f, out});
  }
  return items;
}

JobPlan plan_jobs(int requested, bool gpu, const std::vector<int>& devices, int cores, size_t files, const std::vector<int>& sessions) {
  JobPlan p;
  cores = std::max(1, cores);
  p.devices = gpu ? devices : std::vector<int>{};
  // The GPUs' decode sessions, interleaved: one of each device a round while it has some left.
  auto sessions_of = [&](size_t i) { return i < sessions.size() ? std::max(1, sessions[i]) : 1; };
  int rounds = 0;
  for (size_t i = 0; i < p.devices.size(); ++i) rounds = std::max(rounds, sessions_of(i));
  std::vector<int> slots;
  for (int round = 0; round < rounds; ++round)
    for (size_t i = 0; i < p.devices.size(); ++i)
      if (round < sessions_of(i)) slots.push_back(p.devices[i]);
  int jobs = requested;
  if (jobs <= 0) jobs = gpu && !slots.empty() ? static_cast<int>(slots.size()) : std::max(1, cores / 4);
  jobs = std::max(1, std::min<int>(jobs, static_cast<int>(std::max<size_t>(files, 1))));
  p.jobs = jobs;
  p.encoder_threads = jobs == 1 ? 0 : std::max(1, cores / jobs);
  for (int k = 0; k < jobs && !slots.empty(); ++k) p.job_device.push_back(slots[static_cast<size_t>(k) % slots.size()]);
  return p;
}

const char* outcome_name(BatchOutcome o) noexcept {
  switch (o) {
    case BatchOutcome::ok: return "ok";
    case BatchOutcome::failed: return "failed";
    case BatchOutcome::cancelled: return "interrupted";
    case BatchOutcome::skipped: return "skipped";
    case BatchOutcome::short_input: return "short";
    default: return "not started";
  }
}

namespace {

// -n and --resume before an item's export: its stale temporary files go; an existing output is
// skipped (-n, or --resume when complete) or exported again (--resume). Returns the skip's message,
// or "" to export (`overwrite` set when the output is to be replaced).
std::string existing_output(const BatchItem& item, Existing existing, bool& overwrite) {
  if (existing == Existing::fail) return "";
  (void)remove_stale_parts(item.output);
  struct stat st {};
  if (::lstat(item.output.c_str(), &st) != 0) return "";
  if (existing == Existing::skip) return item.output + ": exists; skipped (-n)";
  if (complete_output(item.output)) return item.output + ": complete; skipped (--resume)";
  overwrite = true;  // cut short, or not recorded as finished: done again
  return "";
}

bool has_output(BatchOutcome o) {
  return o == BatchOutcome::ok || o == BatchOutcome::skipped || o == BatchOutcome::short_input;
}

// A run that succeeded: failed when the encoder dropped frames; else its record written (a short
// input's output holds all there was: complete for --resume, as an export again gives the same),
// then short or ok (`writes` false: -f null, no record). The outcome and its message.
std::pair<BatchOutcome, std::string> finished_outcome(const BatchItem& item, const ExportReport& rep, std::vector<std::string>& notes,
                                                     bool writes) {
  if (rep.frames_in != rep.frames_out)
    return {BatchOutcome::failed, item.output + ": " + std::to_string(rep.frames_in) + " frames in but " +
                                      std::to_string(rep.frames_out) + " out (the encoder dropped frames)"};
  if (writes) {  // -f null: no output, no record of one
    if (Status s = write_sidecar(item.output, rep.frames_out); !s) notes.push_back(s.message() + " (--resume will export it again)");
  }
  if (!rep.short_input.empty()) return {BatchOutcome::short_input, item.input + ": " + rep.short_input};
  return {BatchOutcome::ok, ""};
}

// One run_batch: the items, what their exports share, and the results the workers fill in. Each
// result is written by the one worker that took its item; the callbacks are called one at a time.
class BatchRun {
 public:
  BatchRun(const std::vector<BatchItem>& items, const ExportOptions& base, const JobPlan& plan, const std::atomic<bool>& stop,
           const BatchCallbacks& cb, Existing existing)
      : items_(items), base_(base), plan_(plan), stop_(stop), cb_(cb), existing_(existing), results_(items.size()) {
    for (size_t i = 0; i < items.size(); ++i) results_[i].item = items[i];
  }

  // plan.jobs workers, the caller's thread the first of them, until the items or `stop` run out.
  std::vector<BatchFileResult> run() {
    std::vector<std::thread> threads;
    for (int j = 1; j < plan_.jobs; ++j) threads.emplace_back([this, j] { worker(j); });
    worker(0);
    for (auto& t : threads) t.join();
    return std::move(results_);
  }

 private:
  // A worker takes the next item not yet taken, on its job's device, and starts none after `stop`.
  void worker(int job) {
    const int device = plan_.job_device.empty() ? -1 : plan_.job_device[static_cast<size_t>(job) % plan_.job_device.size()];
    for (;;) {
      if (stop_.load()) return;
      const size_t i = next_.fetch_add(1);
      if (i >= items_.size()) return;
      export_one(i, device);
    }
  }

  // The base options with the item's input and output, the job's device and its share of the cores.
  ExportOptions options_for(const BatchItem& item, int device) const {
    ExportOptions o = base_;
    o.input = item.input;
    o.output = item.output;
    o.encoder_threads = plan_.encoder_threads;
    if (device >= 0) o.pipeline.equalizer.device = device;
    return o;
  }

  // One item: skipped (-n, --resume), or opened, run and recorded; it always ends in finish().
  void export_one(size_t i, int device) {
    BatchFileResult& r = results_[i];
    r.device = device;
    const double t0 = now_s();
    ExportOptions o = options_for(items_[i], device);
    const bool writes = o.format != "null";  // -f null: nothing to skip, resume or record
    if (const std::string skip = writes ? existing_output(items_[i], existing_, o.overwrite) : ""; !skip.empty())
      return finish(i, t0, BatchOutcome::skipped, skip);
    auto ex = Exporter::open(o);
    if (!ex) return finish(i, t0, ex.status().code() == Code::cancelled ? BatchOutcome::cancelled : BatchOutcome::failed,
                           ex.status().to_string());
    r.notes = (*ex)->plan().notes;
    r.frames_expected = (*ex)->plan().frames_hint;
    call([&] {
      if (cb_.started) cb_.started(i, (*ex)->plan(), (*ex)->temp_path());
    });
    auto rep = (*ex)->run(stop_, nullptr, [&](const ExportProgress& p) {
      if (cb_.progress) call([&] { cb_.progress(i, p); });
    });
    ex->reset();  // the temporary file is gone (or renamed) before the file is reported
    if (!rep) {
      const bool cancelled = rep.status().code() == Code::cancelled;
      return finish(i, t0, cancelled ? BatchOutcome::cancelled : BatchOutcome::failed,
                    cancelled ? items_[i].output + ": interrupted; nothing written" : rep.status().to_string());
    }
    r.frames_in = rep->frames_in;
    r.frames_out = rep->frames_out;
    r.source = rep->source;
    const auto [outcome, message] = finished_outcome(items_[i], *rep, r.notes, writes);
    finish(i, t0, outcome, message);
  }

  // The item's outcome, its time (from t0) and its output's size, then the caller hears of it.
  void finish(size_t i, double t0, BatchOutcome outcome, const std::string& message) {
    BatchFileResult& r = results_[i];
    r.outcome = outcome;
    r.message = message;
    r.elapsed_s = now_s() - t0;
    r.finished_at = wall_clock_s();
    if (has_output(outcome)) {
      struct stat st {};
      if (::stat(items_[i].output.c_str(), &st) == 0) r.output_bytes = static_cast<int64_t>(st.st_size);
    }
    call([&] {
      if (cb_.finished) cb_.finished(i, r);
    });
  }

  // A callback, one at a time whichever worker calls it (BatchCallbacks' promise).
  template <class F>
  void call(F&& f) {
    std::lock_guard<std::mutex> l(mu_);
    f();
  }

  const std::vector<BatchItem>& items_;
  const ExportOptions& base_;
  const JobPlan& plan_;
  const std::atomic<bool>& stop_;
  const BatchCallbacks& cb_;
  const Existing existing_;
  std::vector<BatchFileResult> results_;
  std::mutex mu_;
  std::atomic<size_t> next_{0};
};

}  // namespace

std::vector<BatchFileResult> run_batch(const std::vector<BatchItem>& items, const ExportOptions& base, const JobPlan& plan,
                                       const std::atomic<bool>& stop, const BatchCallbacks& cb, Existing existing) {
  return BatchRun(items, base, plan, stop, cb, existing).run();
}

}  // namespace histeq::pipeline
