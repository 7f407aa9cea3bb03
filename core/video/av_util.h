// FFmpeg helpers internal to core/video (this header includes FFmpeg; public headers do not).
#pragma once

extern "C" {
#include <libavcodec/avcodec.h>
#include <libavformat/avformat.h>
#include <libavutil/pixdesc.h>
}

#include <memory>
#include <mutex>
#include <string>

#include "core/cuda/status.h"
#include "core/video/frame.h"

namespace histeq::video::detail {

// av_strerror as a string.
std::string av_error(int err);

// FFmpeg's log callback's destination (internal): the line goes to the scope that owns `avcl`
// (see LogScope) when it is an error, and to the forwarder of video/log.h when one is set.
void record_line(const void* avcl, int level, const std::string& line);

// Routes FFmpeg's log into histeq (idempotent, thread-safe): nothing is printed unless a forwarder
// is set (video/log.h). Error lines are recorded by the LogScope of the job that produced them.
void install_log_capture();

// A job's share of FFmpeg's log (one per FileSource, VideoWriter): the last error line
// that FFmpeg logged for this job, so that two jobs running at once (the player and its background
// export) each name their own cause. A line belongs to this scope when
//   - its context (AVFormatContext, AVCodecContext, SwsContext, ...) was given to own(), or is a
//     child of one (AVClass::parent_log_context_offset), or is a codec context whose `opaque` is
//     this scope (frame-threaded decoders log through per-thread copies of their context), or
//   - it is logged on a thread inside an Active section of this scope (calls into FFmpeg made
//     before the contexts exist, such as avformat_open_input).
// Lines nobody owns are kept apart and never become a job's error.
// Thread-safety: any thread; a scope must outlive the contexts it owns (disown or destroy them first).
class LogScope {
 public:
  LogScope();
  ~LogScope();
  LogScope(const LogScope&) = delete;
  LogScope& operator=(const LogScope&) = delete;

  void own(const void* ctx);
  void disown(const void* ctx);
  // The last error line since clear() (trimmed, without FFmpeg's "[ctx @ 0x...]" prefix), or "".
  std::string last_error() const;
  void clear();
  // "cause" for a failed call: this scope's last error line when there is one, else av_error(err).
  std::string describe_failure(int err) const;
  // Error lines that contain `phrase` are counted from now on (one phrase a scope): for what a
  // demuxer says only in its log (Matroska's "File ended prematurely" at the end of a file cut
  // inside an element). The count survives clear().
  void watch(const std::string& phrase);
  int64_t watched() const;

  // While alive, lines logged by this thread without an owner go to `scope`. Nests.
  class Active {
   public:
    explicit Active(const LogScope& scope);
    ~Active();
    Active(const Active&) = delete;
    Active& operator=(const Active&) = delete;

   private:
    const LogScope* previous_;
  };

 private:
  friend void record_line(const void* avcl, int level, const std::string& line);
  void record(const std::string& line);
  mutable std::mutex mu_;
  std::string last_error_;
  std::string phrase_;
  int64_t watched_ = 0;
};

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
