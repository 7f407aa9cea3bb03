// LumaReader: decodes a video or image file (anything this FFmpeg opens) and hands out its frames'
// luma as 8-bit host planes, via swscale (so RGB stills and YUV video alike give luma).
// Used where real content is wanted without the full pipeline (e.g. `histeq bench --input`).
//
// Thread: one instance per thread. Errors name the file and the cause.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "core/cuda/status.h"
#include "core/image/plane.h"

namespace histeq::video {

class LumaReader {
 public:
  static Result<std::unique_ptr<LumaReader>> open(const std::string& path);
  ~LumaReader();
  LumaReader(const LumaReader&) = delete;
  LumaReader& operator=(const LumaReader&) = delete;

  int width() const noexcept;
  int height() const noexcept;
  // Total frames when the container says so, otherwise 0.
  long frame_count_hint() const noexcept;

  // The next frame's luma into `out` (reallocated when its size changes). Returns false at the end.
  Result<bool> next(Plane8& out);

 private:
  LumaReader();
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// Up to `count` frames spread evenly over the file (first, ..., last) when the length is known,
// otherwise the first `count`. At least one frame, or an error.
Result<std::vector<Plane8>> read_luma_frames(const std::string& path, int count);

}  // namespace histeq::video
