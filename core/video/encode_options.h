// What the user controls of an export's output beyond the video codec: the encoder's
// settings (--bitrate, --encoder-opt, --pix-fmt, --gop, --tag) and which of the input's streams go
// into the output and how (-map, -an, -sn, --audio-codec), in ffmpeg's spelling.
//
// Plain values and their parsers (no FFmpeg here); the writer applies them (writer.h), the stream
// plan decides each stream (stream_plan.h). Parsers return invalid_argument with a one-line cause
// naming the option; core/ prints nothing.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "core/cuda/status.h"

namespace histeq::video {

struct EncoderControl {
  int64_t bit_rate = 0;  // --bitrate, bits per second; 0: the encoder's default (or its crf)
  int gop = 0;           // --gop: the key frame interval in frames (AVCodecContext::gop_size); 0: the encoder's
  std::string pix_fmt;   // --pix-fmt: an FFmpeg pixel format the encoder takes; "": chosen (choose_format)
  std::string tag;       // --tag: the video's four-character codec tag (hvc1, avc1, ...); "": the muxer's
  // --encoder-opt KEY=VALUE, in order: set on the encoder's context or its private options (AVOptions).
  // An unknown key or a value the option refuses fails the export before any frame.
  std::vector<std::pair<std::string, std::string>> options;
  bool empty() const noexcept { return bit_rate == 0 && gop == 0 && pix_fmt.empty() && tag.empty() && options.empty(); }
};

// "4M", "2500k", "1.5M", "800000": bits per second (k = 1000, M = 10^6, G = 10^9), > 0.
Result<int64_t> parse_bit_rate(const std::string& text);
// "KEY=VALUE" (VALUE may hold '='; KEY is not empty).
Result<std::pair<std::string, std::string>> parse_encoder_option(const std::string& text);

// One -map argument, ffmpeg's subset: [-]0[:v|a|s][:N][?] or [-]0:N (the input's stream N).
// 0 is the only input. A leading '-' removes what it matches; a trailing '?' lets it match nothing.
struct StreamMap {
  std::string text;       // as given, for messages
  bool negative = false;  // "-0:s": take these out
  bool optional = false;  // "0:a:3?": no error when there is no such stream
  char type = 0;          // 'v', 'a', 's'; 0: any type
  int index = -1;         // the N-th stream of `type` (of all streams when type is 0); -1: all of them
};
Result<StreamMap> parse_stream_map(const std::string& text);

struct StreamChoice {
  // Empty: the equalized video, every audio and every subtitle stream (other streams are left out
  // with a note). Otherwise the streams the maps select (the equalized video is always written).
  std::vector<StreamMap> maps;
  bool no_audio = false;      // -an
  bool no_subtitles = false;  // -sn
  // "": each audio stream copied where the container holds its codec, else encoded with the
  // container's usual audio codec (a note says so); "copy": copied or an error; an encoder name
  // (libopus, aac, ...): every audio stream encoded with it.
  std::string audio_codec;
};

}  // namespace histeq::video
