// Sources of frames: a video file or a webcam (FileSource, through FFmpeg), or the built-in
// synthetic picture (SyntheticSource). A source is pulled by one thread (the pipeline's decode
// thread) and fills frames from a pool whose format is info().format.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "core/cuda/status.h"
#include "core/video/frame.h"

namespace histeq::video {

struct SourceInfo {
  std::string name;          // the file or device path, or "synthetic"
  std::string description;   // e.g. "h264 (High) 1920x1080 yuv420p, 59.94 fps, 10.0 s"
  FrameFormat format;        // what next() produces
  Rational frame_rate;       // nominal rate; invalid when unknown
  Rational time_base;        // of Frame::pts
  int64_t frames_hint = 0;   // expected total: the container's count, else duration x rate, else 0
  bool frames_exact = false; // frames_hint is the container's own count
  double duration_s = 0;     // when known, else 0
  bool live = false;         // a camera: it runs at its own pace; frames are dropped when the pipeline lags
  ColorTags color;           // what the frames carry
  std::string decoder;       // "software", "NVDEC (NVIDIA H100 80GB HBM3)", "synthetic (GPU)", ...
  std::string decode_note;   // why the decoder is what it is, when it is not what was asked for ("" otherwise)
};

struct SourceCounters {
  int64_t frames = 0;               // frames produced
  int64_t corrupt_packets = 0;      // packets the demuxer flagged or could not read, or the decoder rejected: skipped
  int64_t damaged_frames = 0;       // frames the decoder produced with concealed errors: kept
  int64_t repaired_timestamps = 0;  // missing or non-increasing timestamps replaced by the previous + one frame
};

class Source {
 public:
  virtual ~Source() = default;
  virtual const SourceInfo& info() const = 0;
  // The next frame (taken from `pool`, whose format must be info().format), or nullptr at the end.
  // Fills pts, time_s, index, damaged, color and the timing of the decode and convert stages.
  // Errors: io_error with "<name>: <cause>"; cancelled after interrupt().
  virtual Result<FramePtr> next(FramePool& pool) = 0;
  virtual SourceCounters counters() const = 0;
  // Makes a blocked or later next() return `cancelled` soon. Any thread.
  virtual void interrupt() {}
  // Why the input ended, for a live input ("the stream stopped: nothing came for 5 s", "the stream
  // ended"); "" for a file that simply ended, or while it has not ended. After next() gave nullptr.
  virtual std::string end_note() const { return ""; }

  // Whether seek() can work (files on seekable storage and the synthetic source; not cameras).
  virtual bool can_seek() const { return false; }
  // Moves to media time `time_s` (seconds from the first frame, as Frame::time_s; clamped to the
  // input): the next frame is the first one at or after it. Clears an earlier interrupt() and the
  // end of the input, so a source can be read again after it ended or was interrupted. Only
  // between calls of next(), on the thread that calls next(). Errors: unsupported (see can_seek),
  // io_error "<name>: cannot seek: <cause>".
  virtual Status seek(double time_s) {
    (void)time_s;
    return HISTEQ_ERROR(Code::unsupported, info().name + ": this source cannot seek");
  }
};

// The built-in source: procedurally animated, low-contrast content (moving gradients, moving
// noise, a flat one-value region, a periodic fade to a one-value frame), deterministic per frame.
struct SyntheticOptions {
  int width = 1920, height = 1080;
  double fps = 60.0;
  double duration_s = 10.0;  // frames = round(duration * fps); <= 0: endless
  int bit_depth = 8;         // 8 or 10; 4:2:0
  bool on_gpu = false;       // drawn on the GPU into device frames (the same pictures; needs a CUDA device)
  int threads = 0;           // CPU: threads drawing rows; 0 = from the frame size and the cores
};
Result<std::unique_ptr<Source>> open_synthetic(const SyntheticOptions& opts);

}  // namespace histeq::video
