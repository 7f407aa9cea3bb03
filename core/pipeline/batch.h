// Batch export: many inputs into one folder, each file through its own Exporter (so its own
// temporary file, renamed when complete), several files at once. A file that fails is reported
// and skipped; the others complete.
//
// Scheduling: `jobs` worker threads take the files in order, each on its own device
// (JobPlan::job_device): every pipeline of a job, its NVDEC decoder, equalizer, pools and streams,
// lives on that GPU. By default a GPU gets as many jobs as the caller's decode sessions for it (the
// CLI: two an NVDEC engine), so every GPU's decoding is busy; every job's encoder gets an equal
// share of the cores, so the encoders together never ask for more threads than the machine has.
#pragma once

#include <atomic>
#include <functional>
#include <string>
#include <vector>

#include "core/cuda/status.h"
#include "core/pipeline/export.h"

namespace histeq::pipeline {

struct BatchItem {
  std::string input, output;
};

// The files of `inputs` and where each goes in `out_dir`. A folder stands for its video files (by
// extension: mp4, mkv, mov, avi, webm, ts, ...; sorted by name; not recursive; hidden files, such
// as exports in progress, left out). An output has the input's name, its extension replaced by
// `ext` when one is given ("mkv"). A path that is not a folder is an item even when it does not
// exist: its export fails and says so, like any bad file. Errors (invalid_argument/not_found,
// naming the path): a folder without videos, two inputs that would be written to one name, an
// output that would replace its input, an `ext` that is not letters and digits (one leading '.'
// allowed).
Result<std::vector<BatchItem>> plan_batch(const std::vector<std::string>& inputs, const std::string& out_dir,
                                          const std::string& ext = "");

struct JobPlan {
  int jobs = 1;
  int encoder_threads = 0;  // per job; 0: the encoder's own choice (a single job)
  std::vector<int> devices; // GPU: the devices the batch uses; empty: CPU (or the default device)
  std::vector<int> job_device;  // GPU: job k's device (jobs entries, the devices interleaved); empty on the CPU
};
// `requested` jobs (0: the default), for `files` files on `cores` cores. On the GPU, `sessions[i]`
// is how many decode sessions keep devices[i] busy (from its NVDEC engines, video::nvdec_engines; 0
// or missing: 1): the default is their sum, and the jobs are dealt out in proportion, interleaved
// (0, 1, 0, 1, ...) so that a batch of few files still spreads over the GPUs. On the CPU, cores / 4
// jobs (an encoder keeps about four cores busy on typical video, and the CPU equalizer shares them).
// Never more jobs than files. Each job's encoder then gets cores / jobs threads (the encoder's own
// choice for a single job).
JobPlan plan_jobs(int requested, bool gpu, const std::vector<int>& devices, int cores, size_t files,
                  const std::vector<int>& sessions = {});

// short_input: written, but the input ended early (ExportReport::short_input, in the message).
enum class BatchOutcome { ok, failed, cancelled, not_started, skipped, short_input };
// "ok", "failed", "interrupted", "not started", "skipped", "short"
const char* outcome_name(BatchOutcome o) noexcept;

// What a batch does with an output that already exists (ExportOptions::overwrite, -y, replaces it).
enum class Existing {
  fail,    // the file fails: "already exists"
  skip,    // -n: left as it is, the file counted as skipped
  resume,  // --resume: a complete output (complete_output()) is skipped; another is exported again
};

// The record of a completed batch export, written beside its output when it is in place:
// ".NAME.histeq" in the output's folder (hidden, so a folder of outputs is never an input), one
// line "frames N".
std::string sidecar_path(const std::string& output);
// Whether `output` is complete: it exists, its sidecar exists, and the video frames it holds are
// the sidecar's count (a copy cut short, or replaced by another file, is not). A temporary
// ".NAME.XXXXXX.part" is never complete. Reads the file (its packets, no decoding).
bool complete_output(const std::string& output);
// Removes what an export of `output` that was killed left: ".NAME.XXXXXX.part" files in its folder.
// Only for an output that no other process is writing (a job-array task owns its file). Returns how
// many were removed.
int remove_stale_parts(const std::string& output);

struct BatchFileResult {
  BatchItem item;
  BatchOutcome outcome = BatchOutcome::not_started;
  std::string message;        // the error, for failed files
  std::vector<std::string> notes;
  int device = -1;            // the GPU it ran on (-1: none named)
  int64_t frames_in = 0, frames_out = 0;
  int64_t frames_expected = 0;
  video::SourceCounters source;
  double elapsed_s = 0;       // from its start to its end (open included)
  int64_t output_bytes = 0;   // the finished file's size
  double finished_at = 0;     // when it ended: seconds since the epoch (UTC), 0 not yet
};

// What the caller hears, one call at a time (the batch serializes them), from the worker threads.
struct BatchCallbacks {
  // A file's export is open: its plan, and its temporary file (for a signal handler's cleanup).
  std::function<void(size_t index, const ExportPlan& plan, const std::string& temp_path)> started;
  std::function<void(size_t index, const ExportProgress& progress)> progress;
  // Its end, whatever the outcome (the temporary file is gone by then).
  std::function<void(size_t index, const BatchFileResult& result)> finished;
};

// Exports every item with `base`'s settings (its input and output replaced by the item's), and
// writes each completed output's sidecar. Stops starting files once `stop` is set; running files
// then end as cancelled, leaving nothing. With `existing` skip or resume, an item's stale
// temporary files (remove_stale_parts) are removed first. Returns one result per item, in the
// items' order.
std::vector<BatchFileResult> run_batch(const std::vector<BatchItem>& items, const ExportOptions& base, const JobPlan& plan,
                                       const std::atomic<bool>& stop, const BatchCallbacks& callbacks,
                                       Existing existing = Existing::fail);

}  // namespace histeq::pipeline
