#include "core/pipeline/stats.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <type_traits>

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

// A record in the spill file: the record without its string (the kernel, an index into a table).
struct Spilled {
  int64_t index, presented_ns, paused_ns;
  double time_s;
  float av_offset_ms;
  uint16_t kernel;  // 0xffff: none
  uint8_t flags;    // 1 damaged, 2 late, 4 dropped
  FrameTiming timing;
};
static_assert(std::is_trivially_copyable_v<FrameTiming>, "spilled as bytes");
constexpr uint16_t kNoKernel = 0xffff;

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
    : window_(std::clamp<size_t>(window, 1, kMaxWindow)), keep_records_(keep_records), rows_(kStatRows) {
  for (auto& r : rows_) {
    r.ring.resize(window_);
    r.log_hist.assign(kLogBins, 0);
  }
  if (keep_records_) records_.reserve(kRecordChunk);
}

RunStats::~RunStats() {
  if (spill_ != nullptr) std::fclose(spill_);
}

void RunStats::spill() {
  if (spill_ == nullptr && lost_ == 0) spill_ = std::tmpfile();
  std::vector<Spilled> out;
  out.reserve(records_.size());
  for (const FrameRecord& r : records_) {
    Spilled e{};
    e.index = r.index;
    e.presented_ns = r.presented_ns;
    e.paused_ns = r.paused_ns;
    e.time_s = r.time_s;
    e.av_offset_ms = r.av_offset_ms;
    e.kernel = kNoKernel;
    if (!r.kernel.empty()) {
      auto it = std::find(kernels_.begin(), kernels_.end(), r.kernel);
      if (it == kernels_.end() && kernels_.size() < kNoKernel) it = kernels_.insert(kernels_.end(), r.kernel);
      if (it != kernels_.end()) e.kernel = static_cast<uint16_t>(it - kernels_.begin());
    }
    e.flags = static_cast<uint8_t>((r.damaged ? 1 : 0) | (r.late ? 2 : 0) | (r.dropped ? 4 : 0));
    e.timing = r.timing;
    out.push_back(e);
  }
  const bool written = spill_ != nullptr && std::fseek(spill_, 0, SEEK_END) == 0 &&
                       std::fwrite(out.data(), sizeof(Spilled), out.size(), spill_) == out.size();
  if (written) {
    spilled_ += static_cast<int64_t>(out.size());
  } else {
    lost_ += static_cast<int64_t>(out.size());  // a full disk: the summary still counts every frame
    if (spill_ != nullptr) std::fclose(spill_);
    spill_ = nullptr;
  }
  records_.clear();
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
  if (!keep_records_) return;
  if (records_.size() >= kRecordChunk) spill();
  records_.push_back(rec);
}

std::vector<StageSummary> RunStats::window(size_t newest) const {
  std::lock_guard<std::mutex> l(mu_);
  std::vector<StageSummary> out(kStatRows);
  for (int i = 0; i < kStatRows; ++i) {
    const Row& r = rows_[i];
    const size_t n = newest == 0 ? r.filled : std::min(newest, r.filled);
    // Oldest first, so that summarize()'s "last" is the newest sample.
    std::vector<float> v;
    v.reserve(n);
    for (size_t k = 0; k < n; ++k) v.push_back(r.ring[(r.next + window_ - n + k) % window_]);
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
void RunStats::for_each_record(const std::function<void(const FrameRecord&)>& fn) const {
  std::lock_guard<std::mutex> l(mu_);
  if (spill_ != nullptr && spilled_ > 0 && std::fseek(spill_, 0, SEEK_SET) == 0) {
    std::vector<Spilled> buf(kRecordChunk);
    for (int64_t left = spilled_; left > 0;) {
      const size_t want = static_cast<size_t>(std::min<int64_t>(left, static_cast<int64_t>(buf.size())));
      const size_t got = std::fread(buf.data(), sizeof(Spilled), want, spill_);
      for (size_t k = 0; k < got; ++k) {
        const Spilled& e = buf[k];
        FrameRecord r;
        r.index = e.index;
        r.presented_ns = e.presented_ns;
        r.paused_ns = e.paused_ns;
        r.time_s = e.time_s;
        r.av_offset_ms = e.av_offset_ms;
        if (e.kernel < kernels_.size()) r.kernel = kernels_[e.kernel];
        r.damaged = (e.flags & 1) != 0;
        r.late = (e.flags & 2) != 0;
        r.dropped = (e.flags & 4) != 0;
        r.timing = e.timing;
        fn(r);
      }
      if (got < want) break;  // the file went short: what was read is all there is
      left -= static_cast<int64_t>(got);
    }
  }
  for (const FrameRecord& r : records_) fn(r);
}

std::vector<FrameRecord> RunStats::records() const {
  std::vector<FrameRecord> out;
  for_each_record([&](const FrameRecord& r) { out.push_back(r); });
  return out;
}

int64_t RunStats::records_lost() const {
  std::lock_guard<std::mutex> l(mu_);
  return lost_;
}

size_t RunStats::records_in_memory() const {
  std::lock_guard<std::mutex> l(mu_);
  return records_.size();
}

}  // namespace histeq::pipeline
