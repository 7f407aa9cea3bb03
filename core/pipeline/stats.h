// Per-stage timing statistics of a run, with bounded memory (a player may run for hours, on an
// endless input):
//   - per stage, a ring buffer of the last `window` samples (at most kMaxWindow, whatever is asked:
//     a file's header says what frame rate it likes, and sizes nothing): last, avg, p50, p99, max
//     (live tables), over the whole ring or its newest samples;
//   - per stage, run totals: exact count, average and max, and p50/p99 from a log-scale histogram
//     (1% wide bins from 0.1 us to 100 s: within 0.5% of the exact percentile);
//   - optionally every frame's record, for --stats-json: the newest kRecordChunk in memory, the
//     older ones spilled to an unnamed temporary file (tmpfile(3)), read back in order by
//     for_each_record(). Disk, not memory, grows with the run (about 170 bytes a frame).
// Rows are indexed by stage id (core/video/timing.h); latency (decode start -> end of the sink's
// work) is kept like a stage, at row kLatency. Which rows a table shows, and in which order, comes
// from the pipeline's stage list (ordered_rows()), not from a fixed enum.
// Thread-safe: add() from the sink thread, snapshots from any other.
#pragma once

#include <cstdint>
#include <cstdio>
#include <functional>
#include <limits>
#include <mutex>
#include <string>
#include <vector>

#include "core/video/timing.h"

namespace histeq::pipeline {

constexpr int kLatency = video::kMaxStages;  // row of the latency
constexpr size_t kMaxWindow = 1000;          // the most samples a stage's ring holds
constexpr size_t kRecordChunk = 4096;        // records kept in memory before they go to the spill file
constexpr int kStatRows = video::kMaxStages + 1;
const char* row_name(int row) noexcept;  // the stage's name, or "latency"
using video::FrameTiming;

struct StageSummary {
  int64_t count = 0;  // frames in which the stage ran
  double last = 0, avg = 0, p50 = 0, p99 = 0, max = 0;  // milliseconds
};

// Exact summary of samples (NaN samples, stages that did not run, are skipped); nearest-rank
// percentiles.
StageSummary summarize(std::vector<float> samples);

// The rows to show, in order: the stages of `order` that ran (count > 0), then any other stage
// that ran (by id), then the latency when it was measured. `summaries` has kStatRows entries.
std::vector<int> ordered_rows(const std::vector<StageSummary>& summaries, const std::vector<video::StageId>& order);

struct FrameRecord {
  int64_t index = 0;
  double time_s = 0;
  bool damaged = false;  // decoded with concealed errors
  bool late = false;     // presented more than half a frame interval after its time
  bool dropped = false;  // not presented: more than a frame interval behind (the pipeline lagged)
  std::string kernel;    // the histogram kernel that equalized it (Frame::kernel)
  int64_t presented_ns = 0;  // steady clock when a display showed it (after the swap); 0: not shown
  float av_offset_ms = std::numeric_limits<float>::quiet_NaN();  // played audio's time minus the frame's, then
  // Set by the sink: how long, within this frame's life (decode start -> end of the sink's work),
  // playback stood paused. The pipeline takes it off the latency: a pause is not the pipeline's delay.
  int64_t paused_ns = 0;
  FrameTiming timing;
};

class RunStats {
 public:
  // `window`: clamped to 1..kMaxWindow.
  explicit RunStats(size_t window = 600, bool keep_records = false);
  ~RunStats();
  RunStats(const RunStats&) = delete;
  RunStats& operator=(const RunStats&) = delete;
  void add(const FrameRecord& r);
  // kStatRows entries, over the ring: its newest `newest` samples of each stage (0: all of it).
  std::vector<StageSummary> window(size_t newest = 0) const;
  std::vector<StageSummary> total() const;   // kStatRows entries, over the whole run
  size_t window_size() const noexcept { return window_; }
  int64_t frames() const;
  int64_t late() const;
  int64_t dropped() const;
  int64_t damaged() const;
  // Every record kept (keep_records), oldest first: those spilled to the file, then those in
  // memory. Not while add() runs on another thread (the spill file is read in place).
  void for_each_record(const std::function<void(const FrameRecord&)>& fn) const;
  std::vector<FrameRecord> records() const;  // the same, as a copy (short runs and tests)
  // Records that could not be kept: the spill file could not be made or written (a full disk).
  int64_t records_lost() const;
  size_t records_in_memory() const;  // at most kRecordChunk

 private:
  struct Row {
    std::vector<float> ring;  // capacity `window`
    size_t next = 0, filled = 0;
    int64_t count = 0;
    double sum = 0, max = 0, last = 0;
    std::vector<uint32_t> log_hist;
  };
  void spill();  // records_ -> the file (mu_ held)
  mutable std::mutex mu_;
  size_t window_;
  bool keep_records_;
  std::vector<Row> rows_;
  std::vector<FrameRecord> records_;
  std::FILE* spill_ = nullptr;        // the older records, fixed-size entries
  int64_t spilled_ = 0, lost_ = 0;
  std::vector<std::string> kernels_;  // the kernel names of the spilled records (an entry holds the index)
  int64_t frames_ = 0, late_ = 0, dropped_ = 0, damaged_ = 0;
};

}  // namespace histeq::pipeline
