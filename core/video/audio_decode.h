// Audio decoding for core/video internals (this header includes FFmpeg; public headers do not):
// one audio stream's packets in, samples out in the layout, format and rate the caller asks for
// (libswresample), each chunk with the stream time of its first sample. Used by AudioSource (the
// player's sound) and by the trimmed export, which re-encodes the audio it cuts.
//
// Thread: one thread at a time. The LogScope given to open() must outlive the decoder.
#pragma once

extern "C" {
#include <libavcodec/avcodec.h>
#include <libavformat/avformat.h>
#include <libavutil/channel_layout.h>
#include <libswresample/swresample.h>
}

#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "core/cuda/status.h"
#include "core/video/av_util.h"

namespace histeq::video::detail {

// What the samples should become.
struct AudioTarget {
  AVSampleFormat format = AV_SAMPLE_FMT_FLT;
  AVChannelLayout layout = AV_CHANNEL_LAYOUT_STEREO;
  int rate = 48000;
};

class AudioDecoder {
 public:
  // The decoder of `stream` (its codec parameters and time base). Errors start with `name`
  // ("clip.mp4: audio stream #1: ...").
  static Result<std::unique_ptr<AudioDecoder>> open(const AVStream* stream, LogScope& log, const std::string& name);
  ~AudioDecoder();
  AudioDecoder(const AudioDecoder&) = delete;
  AudioDecoder& operator=(const AudioDecoder&) = delete;

  const AVCodecContext* codec() const noexcept { return dec_.get(); }
  // Before the first chunk. The layout is copied.
  void set_target(const AudioTarget& target);
  const AudioTarget& target() const noexcept { return target_; }

  // Decodes a packet of the stream (nullptr: the end; what the decoder and the resampler still
  // hold comes out). A packet the decoder rejects is skipped and counted.
  Status send(const AVPacket* pkt);

  // A run of converted samples: `frames` per channel in `data` (one plane, or one per channel for
  // planar formats), valid until the next call; `time_s` is the stream time of the first one.
  struct Chunk {
    int frames = 0;  // 0: nothing more until the next send()
    double time_s = 0;
    uint8_t* const* data = nullptr;
  };
  Result<Chunk> receive();

  // After a seek: forgets what the decoder and the resampler hold.
  void flush();
  int64_t rejected_packets() const noexcept { return rejected_; }

 private:
  AudioDecoder() = default;
  Status convert(const AVFrame* in, Chunk& out);
  Status reserve(int frames);

  std::string name_;
  LogScope* log_ = nullptr;
  AvCodecPtr dec_;
  AvFramePtr frame_;
  AVRational tb_{1, 1};
  AudioTarget target_;
  SwrContext* swr_ = nullptr;
  // The input layout the resampler was made for.
  int swr_format_ = -1, swr_rate_ = 0;
  AVChannelLayout swr_layout_{};
  std::vector<uint8_t*> planes_;  // the output buffer (av_samples_alloc), `capacity_` frames
  int capacity_ = 0;
  bool draining_ = false, flushed_swr_ = false;
  double next_time_s_ = NAN;  // where the next sample falls when a frame has no timestamp
  int64_t rejected_ = 0;
};

// "aac 48 kHz stereo" for descriptions.
std::string describe_audio(const AVCodecParameters* par);

}  // namespace histeq::video::detail
