// FFmpeg helpers internal to core/video (this header includes FFmpeg; public headers do not).
#pragma once

extern "C" {
#include <libavcodec/avcodec.h>
#include <libavformat/avformat.h>
#include <libavutil/pixdesc.h>
}

#include <memory>
#include <string>

#include "core/cuda/status.h"
#include "core/video/frame.h"

namespace histeq::video::detail {

// av_strerror as a string.
std::string av_error(int err);

// Routes FFmpeg's log into histeq (idempotent, thread-safe): nothing is printed unless a forwarder
// is set (video/log.h); the last error-level message is kept so that failures can name the cause.
void install_log_capture();
// The last error message FFmpeg logged since clear_last_log_error() (trimmed), or "".
std::string last_log_error();
void clear_last_log_error();

// "cause" for a failed call: FFmpeg's own last error message when there is one, else av_error(err).
std::string describe_failure(int err);

inline Rational to_rational(AVRational r) { return {r.num, r.den}; }
inline AVRational to_av(Rational r) { return {r.num, r.den}; }

struct FreeFrame {
  void operator()(AVFrame* f) const { av_frame_free(&f); }
};
struct FreePacket {
  void operator()(AVPacket* p) const { av_packet_free(&p); }
};
struct FreeCodec {
  void operator()(AVCodecContext* c) const { avcodec_free_context(&c); }
};
using AvFramePtr = std::unique_ptr<AVFrame, FreeFrame>;
using AvPacketPtr = std::unique_ptr<AVPacket, FreePacket>;
using AvCodecPtr = std::unique_ptr<AVCodecContext, FreeCodec>;

// yuvj* -> the same layout without the j (full range is then a tag, not a format).
AVPixelFormat strip_jpeg_range(AVPixelFormat f, bool* full_range = nullptr);

}  // namespace histeq::video::detail
