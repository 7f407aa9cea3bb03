// One audio stream of a trimmed export (core/video internals; includes FFmpeg): decoded, cut to
// [start, end) to the sample, and encoded again, because a copied packet cannot be cut (an AAC
// packet is 1024 samples, 21 ms at 48 kHz, and decodes only with its neighbours). The encoder is
// the input's own codec where FFmpeg can encode it and the container hold it, else the
// container's default audio codec; rate, channels and bit rate are kept where the encoder allows.
// Output timestamps count from `start` (0 there), on the same axis as the trimmed video.
//
// Thread: one thread at a time (the export's decode thread, then finish() on the caller's).
#pragma once

#include <functional>
#include <memory>
#include <string>

#include "core/video/audio_decode.h"

extern "C" {
#include <libavutil/audio_fifo.h>
}

namespace histeq::video::detail {

class AudioCut {
 public:
  using Write = std::function<Status(AVPacket*)>;  // takes the packet's reference
  // Adds the output stream to `oc` (before its header is written). Times are stream seconds of
  // the input (the container's clock); end_s <= start_s: to the end. `note` says what is done.
  // `codec`: the encoder to use (null: as above). `cut` false: a whole stream encoded again
  // (a container that cannot hold it, --audio-codec), start_s 0, said so in `note`.
  static Result<std::unique_ptr<AudioCut>> create(const AVStream* in, AVFormatContext* oc, double start_s, double end_s,
                                                  LogScope& log, const std::string& name, std::string& note,
                                                  const AVCodec* codec = nullptr, bool cut = true);
  ~AudioCut();
  AudioCut(const AudioCut&) = delete;
  AudioCut& operator=(const AudioCut&) = delete;

  int out_index() const noexcept { return out_index_; }
  // A packet of the input stream: decoded, its samples inside the cut encoded and written.
  Status feed(const AVPacket* pkt, const Write& write);
  // The rest: the decoder and the encoder drained. Before the container's trailer.
  Status finish(const Write& write);
  int64_t samples_out() const noexcept { return samples_out_; }

 private:
  AudioCut() = default;
  Status take_chunks(const Write& write);
  Status encode_from_fifo(bool final, const Write& write);
  Status drain_encoder(const Write& write);

  std::string name_;
  LogScope* log_ = nullptr;
  std::unique_ptr<AudioDecoder> dec_;
  AvCodecPtr enc_;
  AVFormatContext* oc_ = nullptr;
  int out_index_ = -1;
  AVAudioFifo* fifo_ = nullptr;
  AvFramePtr frame_;
  AvPacketPtr pkt_;
  double start_s_ = 0, end_s_ = 0;
  int rate_ = 0;
  int64_t next_pts_ = -1;    // in samples from start_s: the first kept sample fixes it
  int64_t samples_out_ = 0;  // samples given to the encoder
  bool done_ = false;        // past the end: later packets are ignored
};

}  // namespace histeq::video::detail
