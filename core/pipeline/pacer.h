// Pacer: the real-time schedule of a player. The first frame fixes the clock; a frame at media time
// t is then due at origin + (t - t_first). A frame that is ready more than one frame interval
// after its time is dropped (the pipeline lagged: showing it would only add delay); one shown more
// than half an interval after its time counts as late.
// Used by `play --headless` today and by the display sink later. Not thread-safe (one sink thread).
#pragma once

#include <cmath>
#include <cstdint>

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
  int64_t interval_ns() const noexcept { return interval_ns_; }

 private:
  int64_t interval_ns_;
  bool started_ = false;
  int64_t origin_ns_ = 0;
  double first_s_ = 0;
};

}  // namespace histeq::pipeline
