// AudioSource: the default audio track of a file (or stream) for playback: decoded, converted to
// interleaved 32-bit float samples at the output device's rate and channel count (libswresample),
// and laid on a continuous timeline. read() gives sample after sample from the time set by seek():
// silence where the track has none (before it begins, across gaps in its timestamps), overlaps
// dropped, so sample n of a read run is at exactly seek time + n / rate. After the track's end,
// read() gives nothing.
//
// Why a demuxer of its own (the file is opened a second time) and not FileSource's packet
// handler: the video side reads only as far ahead as its bounded queues allow (a few frames),
// while a sound device wants a few hundred milliseconds queued at every moment; files interleave
// audio and video up to about a second apart (some not at all), so audio fed from the video's
// reads would starve, or the video would have to read far ahead of what it shows. A second
// demuxer reads the audio at its own pace. Seeks stay consistent because both sides use one time
// axis: seek() takes stream time (the container's clock, as FileSource::time_origin_s() gives
// it), and the player seeks the audio to the time of the first video frame it shows after every
// seek of the video (and after a pause with frame steps).
//
// Errors start with the path. Thread: one thread calls seek() and read(); interrupt() from any.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/cuda/status.h"

namespace histeq::video {

struct AudioFormat {
  int rate = 48000;  // samples per second (per channel)
  int channels = 2;  // interleaved
};

struct AudioInfo {
  std::string description;   // "aac 44.1 kHz stereo (stream #1)"
  int stream_index = -1;
  int track = 0, tracks = 0;  // this track's number among the file's audio tracks (1..tracks)
  double start_s = 0;        // stream time of the track's first sample
  double duration_s = 0;     // 0: unknown
};

class AudioSource {
 public:
  // The file's default audio track (FFmpeg's choice: the one related to the default video
  // stream, its disposition, then the first), or with `track` > 0 its track-th audio stream (in
  // the file's order; not_found past the last). not_found: the file has none; unsupported: no
  // decoder for it.
  static Result<std::unique_ptr<AudioSource>> open(const std::string& path, const AudioFormat& out, int track = 0);
  ~AudioSource();

  const AudioInfo& info() const;
  const AudioFormat& format() const;
  // The next sample read() gives is the one at stream time `time_s` (to the sample). The decoder
  // starts a little earlier so that the first samples are whole (codecs overlap their frames).
  Status seek(double time_s);
  // Appends up to `max_frames` sample frames (format().channels floats each) to `out`; returns
  // how many (0: the end of the track). Blocks while it reads the file.
  Result<int64_t> read(std::vector<float>& out, int64_t max_frames);
  // Stream time of the next sample read() gives.
  double position_s() const;
  bool ended() const;
  int64_t damaged_packets() const;  // skipped
  // Makes a blocked or later read() return `cancelled`; seek() clears it. Any thread.
  void interrupt();

 private:
  AudioSource();
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace histeq::video
