#include "core/pipeline/stats.h"

#include <algorithm>
#include <cmath>

namespace histeq::pipeline {
namespace {

// Log-scale bins: bin k covers [kMin * kStep^(k-1), kMin * kStep^k); bin 0 holds everything below kMin.
constexpr double kMin = 1e-4;  // ms
constexpr double kStep = 1.01;
const double kLogStep = std::log(kStep);
constexpr int kLogBins = 2100;  // up to kMin * 1.01^2099 = 1.1e5 ms

int log_bin(double ms) {
  if (!(ms >= kMin)) return 0;
  return std::min(kLogBins - 1, 1 + static_cast<int>(std::log(ms / kMin) / kLogStep));
}
double log_bin_value(int k) { return k == 0 ? 0.0 : kMin * std::pow(kStep, k - 0.5); }  // geometric middle

float row_value(const FrameRecord& r, int row) { return row == kLatency ? r.timing.latency_ms : r.timing.ms[row]; }

}  // namespace

const char* row_name(int row) noexcept { return row == kLatency ? "latency" : video::stage_name(row); }

std::vector<int> ordered_rows(const std::vector<StageSummary>& summaries, const std::vector<video::StageId>& order) {
  std::vector<int> rows;
  std::vector<bool> taken(kStatRows, false);
  auto ran = [&](int r) { return r >= 0 && r < static_cast<int>(summaries.size()) && summaries[r].count > 0; };
  for (video::StageId id : order)
    if (id >= 0 && id < kLatency && !taken[id] && ran(id)) {
      rows.push_back(id);
      taken[id] = true;
    }
  for (int r = 0; r < kLatency; ++r)
    if (!taken[r] && ran(r)) rows.push_back(r);
  if (ran(kLatency)) rows.push_back(kLatency);
  return rows;
}

StageSummary summarize(std::vector<float> v) {
  StageSummary s;
  v.erase(std::remove_if(v.begin(), v.end(), [](float x) { return std::isnan(x); }), v.end());
  s.count = static_cast<int64_t>(v.size());
  if (v.empty()) return s;
  s.last = v.back();
  double sum = 0;
  for (float x : v) sum += x;
  s.avg = sum / v.size();
  auto rank = [&](double p) {
    size_t k = static_cast<size_t>(std::ceil(p * v.size()));
    k = std::clamp<size_t>(k, 1, v.size()) - 1;
    std::nth_element(v.begin(), v.begin() + k, v.end());
    return static_cast<double>(v[k]);
  };
  s.p50 = rank(0.50);
  s.p99 = rank(0.99);
  s.max = *std::max_element(v.begin(), v.end());
  return s;
}

RunStats::RunStats(size_t window, bool keep_records)
    : window_(std::max<size_t>(1, window)), keep_records_(keep_records), rows_(kStatRows) {
  for (auto& r : rows_) {
    r.ring.resize(window_);
    r.log_hist.assign(kLogBins, 0);
  }
}

void RunStats::add(const FrameRecord& rec) {
  std::lock_guard<std::mutex> l(mu_);
  ++frames_;
  late_ += rec.late;
  dropped_ += rec.dropped;
  damaged_ += rec.damaged;
  for (int i = 0; i < kStatRows; ++i) {
    const float v = row_value(rec, i);
    if (std::isnan(v)) continue;
    Row& r = rows_[i];
    r.ring[r.next] = v;
    r.next = (r.next + 1) % window_;
    r.filled = std::min(window_, r.filled + 1);
    ++r.count;
    r.sum += v;
    r.max = std::max<double>(r.max, v);
    r.last = v;
    ++r.log_hist[log_bin(v)];
  }
  if (keep_records_) records_.push_back(rec);
}

std::vector<StageSummary> RunStats::window() const {
  std::lock_guard<std::mutex> l(mu_);
  std::vector<StageSummary> out(kStatRows);
  for (int i = 0; i < kStatRows; ++i) {
    const Row& r = rows_[i];
    // Oldest first, so that summarize()'s "last" is the newest sample.
    std::vector<float> v;
    v.reserve(r.filled);
    for (size_t k = 0; k < r.filled; ++k) v.push_back(r.ring[(r.next + window_ - r.filled + k) % window_]);
    out[i] = summarize(std::move(v));
  }
  return out;
}

std::vector<StageSummary> RunStats::total() const {
  std::lock_guard<std::mutex> l(mu_);
  std::vector<StageSummary> out(kStatRows);
  for (int i = 0; i < kStatRows; ++i) {
    const Row& r = rows_[i];
    StageSummary& s = out[i];
    s.count = r.count;
    if (r.count == 0) continue;
    s.last = r.last;
    s.avg = r.sum / r.count;
    s.max = r.max;
    auto pct = [&](double p) {
      const int64_t want = std::max<int64_t>(1, static_cast<int64_t>(std::ceil(p * r.count)));
      int64_t seen = 0;
      for (int k = 0; k < kLogBins; ++k) {
        seen += r.log_hist[k];
        if (seen >= want) return std::min(log_bin_value(k), r.max);
      }
      return r.max;
    };
    s.p50 = pct(0.50);
    s.p99 = pct(0.99);
  }
  return out;
}

int64_t RunStats::frames() const {
  std::lock_guard<std::mutex> l(mu_);
  return frames_;
}
int64_t RunStats::late() const {
  std::lock_guard<std::mutex> l(mu_);
  return late_;
}
int64_t RunStats::dropped() const {
  std::lock_guard<std::mutex> l(mu_);
  return dropped_;
}
int64_t RunStats::damaged() const {
  std::lock_guard<std::mutex> l(mu_);
  return damaged_;
}
std::vector<FrameRecord> RunStats::records() const {
  std::lock_guard<std::mutex> l(mu_);
  return records_;
}

}  // namespace histeq::pipeline
