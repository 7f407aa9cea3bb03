// What the playback session needs of a sound output: the interface AudioOut (SDL) implements, so
// that the session and its tests do without SDL. The contract of each call is AudioOut's
// (app/player/audio_out.h). No SDL here.
//
// Thread: the player's (the session's), as AudioOut.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "core/cuda/status.h"

namespace histeq::app::player {

struct AudioOutOptions {
  double volume = 1.0;        // 0..kMaxVolume
  bool muted = false;
  bool log_callbacks = false;  // keep every callback's record (--stats-json)
  int track = 0;               // the file's audio track to play: 0 the default, n the n-th
};

constexpr double kMaxVolume = 1.3;   // as mpv's default volume-max of 130%
constexpr double kVolumeStep = 0.05; // the 9 and 0 keys
constexpr size_t kMaxAudioLog = size_t{1} << 20;  // device callbacks logged for --stats-json (about 3 h at 48 kHz)

// One device callback: when (steady clock), the index of its first sample among all the samples
// the device took through the callback since it opened (the disk driver's file holds them, after
// whatever silence SDL wrote before the first callback), how many, how many of them carried the
// timeline (the rest: silence before the start, while paused, or of an underrun), and the media
// (stream) time of the first.
struct AudioCallback {
  int64_t ns = 0;
  int64_t first_sample = 0;
  int32_t frames = 0, timed = 0;
  double start_s = 0;
};

class AudioDevice {
 public:
  virtual ~AudioDevice() = default;
  virtual const std::string& description() const noexcept = 0;
  virtual int track() const noexcept = 0;   // the track playing: 1..tracks()
  virtual int tracks() const noexcept = 0;  // the file's audio tracks
  // `speed`: the playback speed (1: as recorded); other than 1 only where can_stretch().
  virtual Status start(double from_s, double until_s, bool paused, double speed = 1.0) = 0;
  // The sound can play at another speed, its pitch kept (FFmpeg's atempo filter).
  virtual bool can_stretch() const = 0;
  virtual void halt() = 0;
  virtual void set_paused(bool paused) = 0;
  virtual bool started() const = 0;
  virtual double clock_s() const = 0;  // stream time heard; NaN before the device's first run
  virtual bool drained() const = 0;
  virtual void set_volume(double v) = 0;
  virtual void set_muted(bool m) = 0;
  // For --stats-json.
  virtual int rate() const noexcept = 0;
  virtual int channels() const noexcept = 0;
  virtual double latency_s() const = 0;
  virtual const std::string& driver() const noexcept = 0;
  virtual int64_t underruns() const noexcept = 0;
  virtual std::vector<AudioCallback> callback_log() const = 0;  // at most kMaxAudioLog
  virtual int64_t callbacks_not_logged() const = 0;             // past kMaxAudioLog
  virtual int64_t device_samples() const = 0;
};

// Opens an audio track of the file at `path` (AudioOutOptions::track) on a sound device. Errors as
// AudioOut::open: not_found when the file has no audio track (or not that one).
using AudioOpener = std::function<Result<std::unique_ptr<AudioDevice>>(const std::string& path, const AudioOutOptions& opts)>;

}  // namespace histeq::app::player
