// Frames of the pipeline: planar YUV in host memory (pinned when a GPU uploads them), 8-bit samples
// or 16-bit samples holding 10-bit values, from a recycling pool.
//
// A Frame owns one reference to a pooled buffer that holds its three planes (rows 64-byte aligned);
// destroying the Frame (or the last FFmpeg reference to it, e.g. inside an encoder) returns the
// buffer to its pool, even after the FramePool object itself is gone.
//
// Thread-safety: a Frame belongs to one thread at a time (it moves down the pipeline by
// unique_ptr). FramePool::get() may be called from any thread.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "core/cuda/status.h"
#include "core/image/plane.h"
#include "core/pipeline/stage.h"

struct AVFrame;
struct AVBufferPool;

namespace histeq::video {

struct Rational {
  int num = 0, den = 1;
  double value() const noexcept { return den != 0 ? static_cast<double>(num) / den : 0.0; }
  bool valid() const noexcept { return num > 0 && den > 0; }
};

// Colour description, as FFmpeg's enum values (AVColorRange, AVColorPrimaries, ...); 0/2 = unknown.
struct ColorTags {
  int range = 0, primaries = 2, transfer = 2, space = 2, chroma_location = 0;
};

struct FrameFormat {
  int width = 0, height = 0;
  int bit_depth = 8;                           // 8, or 10 (stored in 16-bit samples)
  int chroma_shift_x = 1, chroma_shift_y = 1;  // log2 subsampling: 4:2:0 (1,1), 4:2:2 (1,0), 4:4:4 (0,0)

  int bytes_per_sample() const noexcept { return bit_depth > 8 ? 2 : 1; }
  int bins() const noexcept { return 1 << bit_depth; }  // one histogram bin per luma value
  int plane_width(int i) const noexcept { return i == 0 ? width : (width + (1 << chroma_shift_x) - 1) >> chroma_shift_x; }
  int plane_height(int i) const noexcept { return i == 0 ? height : (height + (1 << chroma_shift_y) - 1) >> chroma_shift_y; }
  // FFmpeg's AVPixelFormat for this layout (yuv420p, yuv422p10le, ...).
  int av_pix_fmt() const noexcept;
  std::string chroma_name() const;  // "4:2:0"
  std::string describe() const;     // "1920x1080 8-bit 4:2:0"
  bool operator==(const FrameFormat& o) const noexcept {
    return width == o.width && height == o.height && bit_depth == o.bit_depth && chroma_shift_x == o.chroma_shift_x &&
           chroma_shift_y == o.chroma_shift_y;
  }
  bool operator!=(const FrameFormat& o) const noexcept { return !(*this == o); }
};

// Checks that a format is one the pipeline handles (sizes >= 1, depth 8 or 10, known subsampling).
Status validate(const FrameFormat& f);

// The pipeline layout for an FFmpeg pixel format: 8-bit YUV keeps its subsampling (4:2:0, 4:2:2,
// 4:4:4; others become 4:2:0), deeper formats become 10-bit, RGB, gray and palette formats become
// 8-bit (or 10-bit) 4:2:0.
FrameFormat natural_format(int av_pix_fmt, int width, int height);

class Frame {
 public:
  ~Frame();
  Frame(const Frame&) = delete;
  Frame& operator=(const Frame&) = delete;

  const FrameFormat& format() const noexcept { return format_; }
  // Plane i (0 = Y, 1 = U, 2 = V) in host memory (MemoryKind::pinned when the pool is pinned).
  PlaneRef plane(int i) const noexcept;
  PlaneView<uint8_t> plane8(int i) const noexcept;    // 8-bit frames only
  PlaneView<uint16_t> plane16(int i) const noexcept;  // 10-bit frames only

  int64_t pts = 0;        // presentation timestamp, in time_base units
  Rational time_base;
  double time_s = 0;      // seconds since the source's first frame
  int64_t index = 0;      // position in the source's output, from 0
  bool damaged = false;   // the decoder concealed errors in it
  ColorTags color;
  pipeline::FrameTiming timing;

  // Device copies of the planes (a GPU equalizer fills them for sinks that read from the device,
  // e.g. a display). The shared_ptr's deleter hands the device buffers back to their owner.
  struct DeviceView {
    PlaneRef planes[3];
    int count = 0;  // 1 = luma only, 3 = all planes
  };
  std::shared_ptr<const DeviceView> device;

  // Set by the equalizer (core/pipeline/equalizer.h), for displays:
  std::string kernel;  // the histogram kernel that equalized this frame ("" when none did)
  // EqualizerOptions::keep_input_luma: the luma as it was before equalization, in device memory
  // when `device` is set, else in host memory. The shared_ptr keeps its storage alive.
  std::shared_ptr<const PlaneRef> input_luma;
  // EqualizerOptions::keep_histogram: the input luma histogram (one counter per bin) and the LUT
  // that was applied (one entry per bin), so the output histogram is the input's pushed through it.
  std::vector<uint32_t> histogram;
  std::vector<uint16_t> lut;

  // The underlying FFmpeg frame (core/video internals: encoder, converter).
  AVFrame* av() const noexcept { return av_; }

 private:
  friend class FramePool;
  Frame() = default;
  AVFrame* av_ = nullptr;
  FrameFormat format_;
  MemoryKind memory_ = MemoryKind::host;
};
using FramePtr = std::unique_ptr<Frame>;

class FramePool {
 public:
  // pinned: page-locked memory (needs a CUDA device) so that uploads are asynchronous.
  static Result<std::unique_ptr<FramePool>> create(const FrameFormat& format, bool pinned);
  ~FramePool();
  FramePool(const FramePool&) = delete;
  FramePool& operator=(const FramePool&) = delete;

  const FrameFormat& format() const noexcept { return format_; }
  bool pinned() const noexcept { return pinned_; }
  // A frame whose planes hold whatever the buffer last held. Thread-safe.
  Result<FramePtr> get();

 private:
  FramePool() = default;
  FrameFormat format_;
  bool pinned_ = false;
  AVBufferPool* pool_ = nullptr;
  size_t offsets_[3] = {0, 0, 0};
  int linesize_[3] = {0, 0, 0};
};

}  // namespace histeq::video
