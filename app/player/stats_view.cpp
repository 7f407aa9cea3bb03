#include "app/player/stats_view.h"

#include <cmath>
#include <limits>

namespace histeq::app::player {
namespace {

constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();

// The work of each pipeline thread on a frame; NaN when none of its stages ran.
struct ThreadTimes {
  float t[3];  // decode thread, equalizer, display: in the order of Cause
};

// The source's stages run on the decode thread and the sinks' on the display thread; every other
// stage (upload, the equalizer's operations, download) on the equalizer's.
ThreadTimes thread_times(const pipeline::FrameTiming& t) noexcept {
  float sum[3] = {0, 0, 0};
  bool any[3] = {false, false, false};
  for (video::StageId id = 0; id < video::kMaxStages; ++id) {
    if (!t.has(id)) continue;
    const int thread = id == video::stage::decode || id == video::stage::convert ? 0
                       : id == video::stage::present || id == video::stage::encode ? 2
                                                                                  : 1;
    sum[thread] += t.get(id);
    any[thread] = true;
  }
  return {{any[0] ? sum[0] : kNaN, any[1] ? sum[1] : kNaN, any[2] ? sum[2] : kNaN}};
}

}  // namespace

const char* cause_name(Cause c) noexcept {
  switch (c) {
    case Cause::decode: return "decode";
    case Cause::equalize: return "equalize";
    case Cause::present: return "present";
    case Cause::av_sync: return "A/V sync";
    default: return "scheduling";
  }
}

float frame_time_ms(const pipeline::FrameTiming& t) noexcept {
  const ThreadTimes tt = thread_times(t);
  float m = kNaN;
  for (float v : tt.t)
    if (v == v && !(v <= m)) m = v;  // NaN-aware max
  return m;
}

Cause miss_cause(const pipeline::FrameTiming& t, double budget_ms) noexcept {
  const ThreadTimes tt = thread_times(t);
  int worst = -1;
  for (int i = 0; i < 3; ++i)
    if (tt.t[i] == tt.t[i] && tt.t[i] > budget_ms && (worst < 0 || tt.t[i] > tt.t[worst])) worst = i;
  return worst < 0 ? Cause::scheduling : static_cast<Cause>(worst);
}

StatsView::StatsView(size_t capacity)
    : cap_(capacity > 0 ? capacity : 1), frame_ms_(cap_, kNaN), rows_(pipeline::kStatRows, std::vector<float>(cap_, kNaN)),
      dropped_ring_(cap_, 0) {}

void StatsView::add(const pipeline::FrameRecord& r, double budget_ms, bool audio_clock) {
  frame_ms_[next_] = r.dropped ? kNaN : frame_time_ms(r.timing);
  for (int row = 0; row < pipeline::kStatRows; ++row)
    rows_[row][next_] = row == pipeline::kLatency ? r.timing.latency_ms : r.timing.ms[row];
  dropped_ring_[next_] = r.dropped ? 1 : 0;
  next_ = (next_ + 1) % cap_;
  if (filled_ < cap_) ++filled_;
  if (!r.dropped && !r.late) return;
  Cause c = miss_cause(r.timing, budget_ms);
  if (audio_clock && c == Cause::scheduling) c = Cause::av_sync;
  if (r.dropped) ++dropped_[static_cast<int>(c)];
  else ++late_[static_cast<int>(c)];
}

template <class T>
std::vector<T> StatsView::ordered(const std::vector<T>& ring) const {
  std::vector<T> out;
  out.reserve(filled_);
  const size_t start = (next_ + cap_ - filled_) % cap_;
  for (size_t i = 0; i < filled_; ++i) out.push_back(ring[(start + i) % cap_]);
  return out;
}

std::vector<float> StatsView::frame_times() const { return ordered(frame_ms_); }
std::vector<float> StatsView::series(int row) const { return ordered(rows_[static_cast<size_t>(row)]); }
std::vector<uint8_t> StatsView::dropped_flags() const { return ordered(dropped_ring_); }

LumaPlots luma_plots(const std::vector<uint32_t>& histogram, const std::vector<uint16_t>& lut, int bins) {
  LumaPlots p;
  const size_t n = histogram.size();
  if (n == 0 || bins <= 0 || lut.size() != n) return p;
  const size_t group = n > static_cast<size_t>(bins) ? n / static_cast<size_t>(bins) : 1;
  const size_t shown = n / group;
  std::vector<double> in(shown, 0.0), out(shown, 0.0);
  double total = 0;
  for (size_t v = 0; v < n; ++v) {
    const double c = histogram[v];
    total += c;
    in[v / group] += c;
    const size_t o = lut[v] < n ? lut[v] : n - 1;
    out[o / group] += c;
  }
  auto finish = [&](const std::vector<double>& h, std::vector<float>& frac, std::vector<float>& cdf) {
    frac.resize(shown);
    cdf.resize(shown);
    double run = 0;
    for (size_t i = 0; i < shown; ++i) {
      frac[i] = total > 0 ? static_cast<float>(h[i] / total) : 0.f;
      run += h[i];
      cdf[i] = total > 0 ? static_cast<float>(run / total) : 0.f;
    }
  };
  finish(in, p.input, p.input_cdf);
  finish(out, p.output, p.output_cdf);
  return p;
}

}  // namespace histeq::app::player
