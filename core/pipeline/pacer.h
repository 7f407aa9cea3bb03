// Pacer: the real-time schedule of a player. The first frame fixes the clock; a frame at media time
// t is then due at origin + (t - t_first). A frame that is ready more than one frame interval
// after its time is dropped (the pipeline lagged: showing it would only add delay); one shown more
// than half an interval after its time counts as late.
//
// A live source (camera, network stream) is its own clock: plan_live() shows a frame as soon as it
// comes and drops it when it is more than two frame intervals older (since capture) than the
// freshest frames of the last two seconds, so a backlog (the burst after the stream's probe, a
// stall) is skipped instead of delaying every later frame: the latency the pipeline adds stays
// within three frames.
// Used by `play --headless` and by the player window. Not thread-safe (one sink thread).
#pragma once

#include <cmath>
#include <cstdint>
#include <deque>
#include <utility>

namespace histeq::pipeline {

class Pacer {
 public:
  explicit Pacer(double frame_interval_s) : interval_ns_(std::llround(frame_interval_s * 1e9)) {}

  struct Plan {
    bool drop = false;
    int64_t due_ns = 0;  // steady-clock time to present at
  };
  Plan plan(double time_s, int64_t now_ns) {
    if (!started_) {
      started_ = true;
      origin_ns_ = now_ns;
      first_s_ = time_s;
    }
    Plan p;
    p.due_ns = origin_ns_ + std::llround((time_s - first_s_) * 1e9);
    p.drop = now_ns > p.due_ns + interval_ns_;
    return p;
  }
  bool late(int64_t due_ns, int64_t presented_ns) const { return presented_ns - due_ns > interval_ns_ / 2; }

  // A live frame captured at capture_ns (steady clock), ready at now_ns.
  Plan plan_live(int64_t capture_ns, int64_t now_ns) {
    const int64_t lag = now_ns - capture_ns;
    while (!lags_.empty() && lags_.front().first < now_ns - kWindowNs) lags_.pop_front();
    while (!lags_.empty() && lags_.back().second >= lag) lags_.pop_back();  // a monotonic queue: the front is the minimum
    lags_.emplace_back(now_ns, lag);
    Plan p;
    p.due_ns = now_ns;
    p.drop = lag > lags_.front().second + 2 * interval_ns_;
    return p;
  }
  int64_t interval_ns() const noexcept { return interval_ns_; }

 private:
  static constexpr int64_t kWindowNs = 2'000'000'000;
  int64_t interval_ns_;
  std::deque<std::pair<int64_t, int64_t>> lags_;  // (when, lag) of recent live frames
  bool started_ = false;
  int64_t origin_ns_ = 0;
  double first_s_ = 0;
};

}  // namespace histeq::pipeline
