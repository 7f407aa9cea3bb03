// Frames of the pipeline: a picture in planar (Y, U, V) or semi-planar (Y + interleaved UV: NV12,
// P010) layout, with its planes in host, pinned host or device memory, each plane with its pitch.
// 8-bit samples, or 16-bit samples holding 10-bit values (in the low bits for planar layouts, in
// the high bits for P010, as FFmpeg and NVDEC store them).
//
// A Frame does not care where its storage comes from: a recycling FramePool (host, pinned or
// device memory), FFmpeg, or any owner handed to Frame::wrap(). Destroying the Frame releases its
// reference to that storage (a pooled buffer goes back to its pool, even after the FramePool
// object itself is gone).
//
// Thread-safety: a Frame belongs to one thread at a time (it moves down the pipeline by
// unique_ptr). FramePool::get() may be called from any thread.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "core/cuda/status.h"
#include "core/image/plane.h"
#include "core/video/timing.h"

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

enum class PlaneLayout {
  planar,       // three planes: Y, U, V (yuv420p, yuv422p10le, ...)
  semi_planar,  // two planes: Y, then U and V interleaved (NV12, P010); 4:2:0 only
};

struct FrameFormat {
  int width = 0, height = 0;
  int bit_depth = 8;                           // significant bits: 8, or 10 (in 16-bit samples)
  int chroma_shift_x = 1, chroma_shift_y = 1;  // log2 subsampling: 4:2:0 (1,1), 4:2:2 (1,0), 4:4:4 (0,0)
  PlaneLayout layout = PlaneLayout::planar;

  int bytes_per_sample() const noexcept { return bit_depth > 8 ? 2 : 1; }
  int bins() const noexcept { return 1 << bit_depth; }  // one histogram bin per luma value
  int plane_count() const noexcept { return layout == PlaneLayout::planar ? 3 : 2; }
  // Unused low bits of each stored sample: 16 - bit_depth for P010 (values in the high bits), else 0.
  int sample_shift() const noexcept { return layout == PlaneLayout::semi_planar && bit_depth > 8 ? 16 - bit_depth : 0; }
  // The bit depth of the stored samples (PlaneRef::bit_depth of the planes): bit_depth + sample_shift.
  int storage_depth() const noexcept { return bit_depth + sample_shift(); }
  int chroma_width() const noexcept { return (width + (1 << chroma_shift_x) - 1) >> chroma_shift_x; }
  int chroma_height() const noexcept { return (height + (1 << chroma_shift_y) - 1) >> chroma_shift_y; }
  // Samples per row and rows of plane i. Semi-planar plane 1 holds U,V pairs: 2 x chroma_width samples.
  int plane_width(int i) const noexcept {
    if (i == 0) return width;
    return layout == PlaneLayout::semi_planar ? 2 * chroma_width() : chroma_width();
  }
  int plane_height(int i) const noexcept { return i == 0 ? height : chroma_height(); }
  // FFmpeg's AVPixelFormat for this layout (yuv420p, yuv422p10le, nv12, p010le, ...).
  int av_pix_fmt() const noexcept;
  std::string chroma_name() const;  // "4:2:0"
  std::string describe() const;     // "1920x1080 8-bit 4:2:0" (", NV12" / ", P010" for semi-planar)
  bool operator==(const FrameFormat& o) const noexcept {
    return width == o.width && height == o.height && bit_depth == o.bit_depth && chroma_shift_x == o.chroma_shift_x &&
           chroma_shift_y == o.chroma_shift_y && layout == o.layout;
  }
  bool operator!=(const FrameFormat& o) const noexcept { return !(*this == o); }
};

// Checks that a format is one the pipeline handles (sizes >= 1, depth 8 or 10, known subsampling,
// semi-planar only for 4:2:0).
Status validate(const FrameFormat& f);

// The pipeline layout for an FFmpeg pixel format: 8-bit YUV keeps its subsampling (4:2:0, 4:2:2,
// 4:4:4; others become 4:2:0), deeper formats become 10-bit, RGB, gray and palette formats become
// 8-bit (or 10-bit) 4:2:0; always planar.
FrameFormat natural_format(int av_pix_fmt, int width, int height);

class Frame;
using FramePtr = std::unique_ptr<Frame>;

class Frame {
 public:
  ~Frame();
  Frame(const Frame&) = delete;
  Frame& operator=(const Frame&) = delete;

  // A frame over planes that `owner` keeps alive (any memory kind; the planes must fit `format`:
  // format.plane_count() planes of plane_width(i) x plane_height(i) samples). The frame holds a
  // reference to `owner` until it is destroyed. Errors: invalid_argument for planes that do not fit.
  static Result<FramePtr> wrap(const FrameFormat& format, MemoryKind memory, const PlaneRef* planes, int count,
                               std::shared_ptr<const void> owner);

  const FrameFormat& format() const noexcept { return format_; }
  MemoryKind memory() const noexcept { return memory_; }
  bool on_device() const noexcept { return memory_ == MemoryKind::device; }
  int plane_count() const noexcept { return format_.plane_count(); }
  // Plane i (0 = Y; planar: 1 = U, 2 = V; semi-planar: 1 = interleaved UV) in memory(). The samples
  // may be written through plane8()/plane16() by whoever holds the frame.
  PlaneRef plane(int i) const noexcept;
  PlaneView<uint8_t> plane8(int i) const noexcept;    // 8-bit frames only
  PlaneView<uint16_t> plane16(int i) const noexcept;  // 16-bit-sample frames only

  int64_t pts = 0;        // presentation timestamp, in time_base units
  Rational time_base;
  double time_s = 0;      // seconds since the source's first frame
  int64_t index = 0;      // position in the source's output, from 0
  bool damaged = false;   // the decoder concealed errors in it
  ColorTags color;
  Rational sample_aspect{0, 1};  // pixel aspect ratio; 0/1 = unknown (square)
  FrameTiming timing;

  // Copies what describes the picture (timestamps, index, flags, colour, aspect, timing), not the
  // samples: for a stage that moves a frame into other storage.
  void copy_props_from(const Frame& o);

 private:
  friend class FramePool;
  friend AVFrame* av_frame_of(const Frame& f) noexcept;
  Frame() = default;
  FrameFormat format_;
  MemoryKind memory_ = MemoryKind::host;
  PlaneRef planes_[3];
  AVFrame* av_ = nullptr;               // pooled frames: the FFmpeg frame that holds the buffer reference
  std::shared_ptr<const void> owner_;   // wrapped frames: what keeps the planes alive
};

// A recycling pool of frames of one format, in host (64-byte aligned rows), pinned host (the same,
// page-locked, so that uploads are asynchronous; needs a CUDA device) or device memory (rows
// 16-byte aligned, so that rows that are already a multiple of 16 bytes are contiguous).
class FramePool {
 public:
  static Result<std::unique_ptr<FramePool>> create(const FrameFormat& format, MemoryKind memory);
  ~FramePool();
  FramePool(const FramePool&) = delete;
  FramePool& operator=(const FramePool&) = delete;

  const FrameFormat& format() const noexcept { return format_; }
  MemoryKind memory() const noexcept { return memory_; }
  // A frame whose planes hold whatever the buffer last held. Thread-safe.
  Result<FramePtr> get();

 private:
  FramePool() = default;
  FrameFormat format_;
  MemoryKind memory_ = MemoryKind::host;
  AVBufferPool* pool_ = nullptr;
  size_t offsets_[3] = {0, 0, 0};
  int linesize_[3] = {0, 0, 0};
};

// The FFmpeg frame behind a pooled host frame (core/video internals: the encoder, the converter);
// null for wrapped frames.
AVFrame* av_frame_of(const Frame& f) noexcept;

}  // namespace histeq::video
