// The player's sound at another speed with its pitch kept: FFmpeg's atempo filter (libavfilter;
// WSOLA-like overlap-add), chained for speeds under 0.5 (one atempo takes 0.5..100). libswresample
// only resamples (a faster sound would be a higher one); SDL has no time stretch.
//
// Thread: one (the sound's feeder thread).
#pragma once

#include <memory>
#include <vector>

#include "core/cuda/status.h"

namespace histeq::app::player {

class AudioTempo {
 public:
  // Whether this FFmpeg has the filters (a build may leave atempo out: the sound is then muted
  // at any speed but 1x).
  static bool available();
  // For interleaved float sound of `rate` and `channels`, played `speed` times as fast.
  static Result<std::unique_ptr<AudioTempo>> create(int rate, int channels, double speed);
  ~AudioTempo();
  AudioTempo(const AudioTempo&) = delete;
  AudioTempo& operator=(const AudioTempo&) = delete;

  // Feeds `frames` sample frames; appends to `out` what the filter gives back so far.
  Status push(const float* in, int64_t frames, std::vector<float>& out);
  // The end of the sound: appends what the filter still holds.
  Status finish(std::vector<float>& out);

 private:
  AudioTempo();
  Status drain(std::vector<float>& out);
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace histeq::app::player
