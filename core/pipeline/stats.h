// Per-stage timing statistics of a run, with bounded memory (a player may run for hours):
//   - per stage, a ring buffer of the last `window` samples: last, avg, p50, p99, max (live tables);
//   - per stage, run totals: exact count, average and max, and p50/p99 from a log-scale histogram
//     (1% wide bins from 0.1 us to 100 s: within 0.5% of the exact percentile);
//   - optionally every frame's record, for --stats-json.
// Rows are indexed by stage id (core/video/timing.h); latency (decode start -> end of the sink's
// work) is kept like a stage, at row kLatency. Which rows a table shows, and in which order, comes
// from the pipeline's stage list (ordered_rows()), not from a fixed enum.
// Thread-safe: add() from the sink thread, snapshots from any other.
#pragma once

#include <cstdint>
#include <limits>
#include <mutex>
#include <string>
#include <vector>

#include "core/video/timing.h"

namespace histeq::pipeline {

constexpr int kLatency = video::kMaxStages;  // row of the latency
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
  FrameTiming timing;
};

class RunStats {
 public:
  explicit RunStats(size_t window = 600, bool keep_records = false);
  void add(const FrameRecord& r);
  std::vector<StageSummary> window() const;  // kStatRows entries, over the last `window` frames
  std::vector<StageSummary> total() const;   // kStatRows entries, over the whole run
  int64_t frames() const;
  int64_t late() const;
  int64_t dropped() const;
  int64_t damaged() const;
  std::vector<FrameRecord> records() const;  // a copy; empty unless keep_records

 private:
  struct Row {
    std::vector<float> ring;  // capacity `window`
    size_t next = 0, filled = 0;
    int64_t count = 0;
    double sum = 0, max = 0, last = 0;
    std::vector<uint32_t> log_hist;
  };
  mutable std::mutex mu_;
  size_t window_;
  bool keep_records_;
  std::vector<Row> rows_;
  std::vector<FrameRecord> records_;
  int64_t frames_ = 0, late_ = 0, dropped_ = 0, damaged_ = 0;
};

}  // namespace histeq::pipeline
