// The player's audio clock and its sync rule (no SDL: the model, unit-tested).
//
// The clock says which media time is being heard, from what the sound device took: at each of
// its callbacks the device asked for a run of samples at a steady-clock time; the first of them is
// at a known media time, and `timed` of them carry the timeline (silence written because the
// decoder fell behind does not move it; silence after the track's end does, so the video goes on
// at the device's pace). Between callbacks the clock runs on the steady clock, but never past the
// end of what was handed over. The device's latency (samples queued in front of the one heard) is
// taken off.
//
// The video follows it (the player's sync policy, ffplay's): a frame whose time the sound has
// passed by more than one frame interval is dropped when a newer frame is ready to take its place
// (else it is shown late: a machine that cannot keep up shows a slower picture, not a still one);
// a frame ahead of the sound waits (the picture on screen is held, which repeats it at the
// display's rate); otherwise it is shown.
//
// Playback speed: the device is given the sound stretched to the speed (AudioOut), so a sample
// it takes stands for `speed` samples of media time.
//
// Thread-safety: on_callback() from the device's thread; the rest from the player's.
#pragma once

#include <cmath>
#include <cstdint>
#include <mutex>

namespace histeq::app::player {

class AudioClock {
 public:
  AudioClock(int rate, double latency_s) { configure(rate, latency_s); }
  void configure(int rate, double latency_s) {
    std::lock_guard<std::mutex> l(mu_);
    rate_ = rate > 0 ? rate : 48000;
    latency_s_ = latency_s;
    valid_ = false;
  }

  // The device took a run of samples at `now_ns`, the first at media time `start_s`, `timed` of
  // them on the timeline, each standing for `speed` samples of media time.
  void on_callback(int64_t now_ns, double start_s, int64_t timed, double speed = 1.0);
  // The media time heard at `now_ns`; NaN before the first callback since reset(). (Paused, the
  // device is given silence: callbacks with nothing timed, so the clock stands.)
  double at(int64_t now_ns) const;
  void reset();
  double latency_s() const {
    std::lock_guard<std::mutex> l(mu_);
    return latency_s_;
  }

 private:
  mutable std::mutex mu_;
  int rate_ = 48000;
  double latency_s_ = 0;
  bool valid_ = false;
  int64_t anchor_ns_ = 0;
  double anchor_s_ = 0, span_s_ = 0, speed_ = 1;
};

enum class SyncAction { show, wait, drop };
// What to do with a frame at media time `frame_s` while the sound is at `audio_s`: drop it when
// the sound is more than `interval_s` past it and `newer_ready` (a newer frame waits to be shown),
// wait while it is more than `slack_s` ahead.
SyncAction sync_action(double frame_s, double audio_s, double interval_s, double slack_s, bool newer_ready) noexcept;

}  // namespace histeq::app::player
