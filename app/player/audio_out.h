// The player's sound: a file's default audio track (video::AudioSource, its own demuxer) played
// through an SDL2 audio device, and the clock the picture follows (AudioClock).
//
//   feeder thread    AudioSource::read() (-> AudioTempo at a speed other than 1x) -> ring buffer
//                    (about half a second)
//   SDL's thread     callback: ring -> device, times the volume (0 when muted); the clock is
//                    stamped with what the device took; silence when the ring is empty, before
//                    start(), after halt() and while paused (the device runs from open to close,
//                    so every sample it takes passes through the callback and its log)
//   player thread    start/halt/pause, volume, clock_s()
//
// The device plays float samples at the rate and channel count it prefers (48 kHz stereo asked
// for; libswresample converts the track to it). Its latency, the samples queued in front of the
// one heard, is taken as one device period for real devices and 0 for SDL's dummy and disk
// drivers, which consume a period when they take it (the disk driver writes what it plays to a
// file: tests measure the sync with it).
//
// Thread: the player's, except where said.
#pragma once

#include <SDL.h>

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "app/player/audio_clock.h"
#include "app/player/audio_device.h"
#include "core/cuda/status.h"
#include "core/video/audio_source.h"

namespace histeq::app::player {

class AudioTempo;

class AudioOut final : public AudioDevice {
 public:
  // The track and a device for it. Errors: not_found (no audio track), unsupported (no sound
  // device: SDL's message), or the track's decoder failing.
  static Result<std::unique_ptr<AudioOut>> open(const std::string& path, const AudioOutOptions& opts);
  ~AudioOut() override;
  AudioOut(const AudioOut&) = delete;
  AudioOut& operator=(const AudioOut&) = delete;

  // "aac 44.1 kHz stereo (stream #1) -> pulseaudio, 48 kHz, 2 ch"
  const std::string& description() const noexcept override { return description_; }
  int track() const noexcept override { return source_->info().track; }
  int tracks() const noexcept override { return source_->info().tracks; }
  // Plays from stream time `from_s` (the track is sought to the sample, the ring filled for up
  // to a quarter of a second) up to `until_s` (stream time; <= 0: the track's end; silence goes on
  // after it so that the clock keeps running). Starts paused when `paused`. `speed` other than 1:
  // stretched in time, the pitch kept (AudioTempo; errors when it cannot be).
  Status start(double from_s, double until_s, bool paused, double speed = 1.0) override;
  bool can_stretch() const override;
  // Silences the device, stops the feeder and forgets the position (a seek or a new file comes).
  void halt() override;
  // Paused: silence, and the clock stands where the sound stopped; unpaused, it goes on from there.
  void set_paused(bool paused) override;
  bool started() const override {
    std::lock_guard<std::mutex> l(mu_);
    return started_;
  }
  // The stream time being heard; NaN when not started or before the device took its first run.
  double clock_s() const override;
  // Everything up to the end (of the track or of until_s) has gone to the device.
  bool drained() const override;

  void set_volume(double v) override;  // clamped to 0..kMaxVolume
  double volume() const noexcept { return volume_.load(); }
  void set_muted(bool m) override { muted_ = m; }
  bool muted() const noexcept { return muted_.load(); }

  int rate() const noexcept override { return spec_.freq; }
  int channels() const noexcept override { return spec_.channels; }
  double latency_s() const override { return clock_.latency_s(); }
  const std::string& driver() const noexcept override { return driver_; }
  int64_t underruns() const noexcept override { return underruns_.load(); }

  using Callback = AudioCallback;  // audio_device.h
  std::vector<Callback> callback_log() const override;
  int64_t callbacks_not_logged() const override;
  int64_t device_samples() const override;  // all the sample frames the callback gave the device

 private:
  AudioOut() = default;
  static void sdl_callback(void* self, Uint8* stream, int len);
  void fill(float* out, int frames);
  void feed(std::unique_ptr<AudioTempo> tempo);
  void stop_feeder();

  std::string description_, driver_;
  std::unique_ptr<video::AudioSource> source_;
  SDL_AudioDeviceID device_ = 0;
  SDL_AudioSpec spec_{};
  AudioClock clock_{48000, 0};
  bool started_ = false, paused_ = false;  // mu_: the callback plays the ring only when started and not paused
  std::atomic<double> volume_{1.0};
  std::atomic<bool> muted_{false};
  std::atomic<int64_t> underruns_{0};

  // The ring and the timeline (mu_).
  mutable std::mutex mu_;
  std::condition_variable room_;
  std::vector<float> ring_;
  size_t head_ = 0, fill_ = 0;  // in floats
  double timeline_s_ = 0;       // media time of the next sample the device takes
  bool feeder_done_ = false;    // the track (or until_s) ended: nothing more will come
  bool stop_ = false;
  int64_t device_samples_ = 0;  // all the sample frames the device took since it opened
  bool log_ = false;
  std::vector<Callback> log_entries_;  // at most kMaxAudioLog
  int64_t not_logged_ = 0;
  double speed_ = 1.0;                 // of the run (mu_): a device sample stands for this much media time
  std::thread feeder_;
  int64_t budget_ = -1;         // frames the feeder may still give (until_s), -1: no limit
};

}  // namespace histeq::app::player
