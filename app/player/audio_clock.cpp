#include "app/player/audio_clock.h"

#include <algorithm>

namespace histeq::app::player {

void AudioClock::on_callback(int64_t now_ns, double start_s, int64_t timed, double speed) {
  std::lock_guard<std::mutex> l(mu_);
  valid_ = true;
  speed_ = speed > 0 ? speed : 1;
  anchor_ns_ = now_ns;
  anchor_s_ = start_s - latency_s_ * speed_;  // the samples queued in front stand for speed times their length
  span_s_ = static_cast<double>(std::max<int64_t>(0, timed)) / rate_ * speed_;
}

double AudioClock::at(int64_t now_ns) const {
  std::lock_guard<std::mutex> l(mu_);
  if (!valid_) return NAN;
  const double run = std::clamp(static_cast<double>(now_ns - anchor_ns_) * 1e-9 * speed_, 0.0, span_s_);
  return anchor_s_ + run;
}

void AudioClock::reset() {
  std::lock_guard<std::mutex> l(mu_);
  valid_ = false;
}

SyncAction sync_action(double frame_s, double audio_s, double interval_s, double slack_s, bool newer_ready) noexcept {
  if (audio_s - frame_s > interval_s) return newer_ready ? SyncAction::drop : SyncAction::show;
  if (frame_s - audio_s > slack_s) return SyncAction::wait;
  return SyncAction::show;
}

}  // namespace histeq::app::player
