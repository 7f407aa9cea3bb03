#include "core/video/frame.h"

#include <cuda_runtime_api.h>

#include <cstdint>
#include <cstdlib>

#include "core/cuda/device.h"
#include "core/video/av_util.h"

extern "C" {
#include <libavutil/buffer.h>
}

namespace histeq::video {
namespace {

constexpr int kAlign = 64;  // row and plane alignment: AVX-512 friendly, >= what swscale and x264 want

size_t align_up(size_t v, size_t a) { return (v + a - 1) / a * a; }

// Pooled buffers: pinned (cudaMallocHost), device (cudaMalloc) or plain 64-byte aligned host
// memory. Each buffer carries its own free callback, so buffers can outlive the pool that made them.
void free_pinned(void*, uint8_t* data) { (void)cudaFreeHost(data); }
void free_host(void*, uint8_t* data) { std::free(data); }

AVBufferRef* alloc_pinned(void*, size_t size) {
  (void)cuda::device_count();  // the context's flags before the context (cuda/device.h)
  void* p = nullptr;
  if (cudaMallocHost(&p, size) != cudaSuccess) {
    (void)cudaGetLastError();
    return nullptr;
  }
  AVBufferRef* ref = av_buffer_create(static_cast<uint8_t*>(p), size, free_pinned, nullptr, 0);
  if (ref == nullptr) (void)cudaFreeHost(p);
  return ref;
}

// A device buffer carries its device (opaque: ordinal + 1): the last reference may go on a thread
// whose current device is another (a pipeline on GPU 1 whose frame a sink on the main thread lets go).
void free_device(void* opaque, uint8_t* data) {
  const cuda::DeviceScope scope(static_cast<int>(reinterpret_cast<intptr_t>(opaque)) - 1);
  (void)cudaFree(data);
}

AVBufferRef* alloc_device(void*, size_t size) {
  (void)cuda::device_count();
  void* p = nullptr;
  if (cudaMalloc(&p, size) != cudaSuccess) {
    (void)cudaGetLastError();
    return nullptr;
  }
  void* device = reinterpret_cast<void*>(static_cast<intptr_t>(cuda::current_device() + 1));
  AVBufferRef* ref = av_buffer_create(static_cast<uint8_t*>(p), size, free_device, device, 0);
  if (ref == nullptr) (void)cudaFree(p);
  return ref;
}

AVBufferRef* alloc_host(void*, size_t size) {
  void* p = std::aligned_alloc(kAlign, align_up(size, kAlign));
  if (p == nullptr) return nullptr;
  AVBufferRef* ref = av_buffer_create(static_cast<uint8_t*>(p), size, free_host, nullptr, 0);
  if (ref == nullptr) std::free(p);
  return ref;
}

}  // namespace

int FrameFormat::av_pix_fmt() const noexcept {
  const bool deep = bit_depth > 8;
  if (layout == PlaneLayout::semi_planar) {
    if (chroma_shift_x == 1 && chroma_shift_y == 1) return deep ? AV_PIX_FMT_P010 : AV_PIX_FMT_NV12;
    return AV_PIX_FMT_NONE;
  }
  if (chroma_shift_x == 1 && chroma_shift_y == 1) return deep ? AV_PIX_FMT_YUV420P10 : AV_PIX_FMT_YUV420P;
  if (chroma_shift_x == 1 && chroma_shift_y == 0) return deep ? AV_PIX_FMT_YUV422P10 : AV_PIX_FMT_YUV422P;
  if (chroma_shift_x == 0 && chroma_shift_y == 0) return deep ? AV_PIX_FMT_YUV444P10 : AV_PIX_FMT_YUV444P;
  return AV_PIX_FMT_NONE;
}

std::string FrameFormat::chroma_name() const {
  if (chroma_shift_x == 1 && chroma_shift_y == 1) return "4:2:0";
  if (chroma_shift_x == 1 && chroma_shift_y == 0) return "4:2:2";
  if (chroma_shift_x == 0 && chroma_shift_y == 0) return "4:4:4";
  return "?";
}

std::string FrameFormat::describe() const {
  std::string s = std::to_string(width) + "x" + std::to_string(height) + " " + std::to_string(bit_depth) + "-bit " + chroma_name();
  if (layout == PlaneLayout::semi_planar) s += bit_depth > 8 ? ", P010" : ", NV12";
  return s;
}

Status validate(const FrameFormat& f) {
  if (f.width < 1 || f.height < 1 || f.width > 32768 || f.height > 32768)
    return HISTEQ_ERROR(Code::unsupported, "frame size " + std::to_string(f.width) + "x" + std::to_string(f.height) +
                                               " is outside 1x1..32768x32768");
  if (f.bit_depth != 8 && f.bit_depth != 10) return HISTEQ_ERROR(Code::unsupported, "bit depth must be 8 or 10");
  if (f.layout == PlaneLayout::semi_planar && !(f.chroma_shift_x == 1 && f.chroma_shift_y == 1))
    return HISTEQ_ERROR(Code::unsupported, "semi-planar (NV12/P010) frames must be 4:2:0");
  if (f.av_pix_fmt() == AV_PIX_FMT_NONE) return HISTEQ_ERROR(Code::unsupported, "chroma subsampling must be 4:2:0, 4:2:2 or 4:4:4");
  return Status::ok();
}

FrameFormat natural_format(int av_pix_fmt, int width, int height) {
  FrameFormat f;
  f.width = width;
  f.height = height;
  const AVPixFmtDescriptor* d = av_pix_fmt_desc_get(static_cast<AVPixelFormat>(av_pix_fmt));
  if (d == nullptr) return f;  // 8-bit 4:2:0
  f.bit_depth = d->comp[0].depth > 8 ? 10 : 8;
  const bool yuv = !(d->flags & (AV_PIX_FMT_FLAG_RGB | AV_PIX_FMT_FLAG_PAL)) && d->nb_components >= 3;
  if (yuv && d->log2_chroma_w <= 1 && d->log2_chroma_h <= d->log2_chroma_w) {
    f.chroma_shift_x = d->log2_chroma_w;
    f.chroma_shift_y = d->log2_chroma_h;
  }
  return f;
}

Frame::~Frame() { av_frame_free(&av_); }

AVFrame* av_frame_of(const Frame& f) noexcept { return f.av_; }

Result<FramePtr> Frame::wrap(const FrameFormat& format, MemoryKind memory, const PlaneRef* planes, int count,
                             std::shared_ptr<const void> owner) {
  HISTEQ_TRY(validate(format));
  if (count != format.plane_count())
    return HISTEQ_ERROR(Code::invalid_argument, "a " + format.describe() + " frame has " + std::to_string(format.plane_count()) +
                                                    " planes, not " + std::to_string(count));
  FramePtr f(new Frame());
  f->format_ = format;
  f->memory_ = memory;
  for (int i = 0; i < count; ++i) {
    const PlaneRef& p = planes[i];
    if (p.width != format.plane_width(i) || p.height != format.plane_height(i) ||
        p.bytes_per_sample != format.bytes_per_sample() || p.data == nullptr || p.pitch < p.row_bytes() ||
        p.memory != memory)
      return HISTEQ_ERROR(Code::invalid_argument, "plane " + std::to_string(i) + " does not fit a " + format.describe() +
                                                      " frame in " + cuda::memory_kind_name(memory) + " memory");
    f->planes_[i] = p;
    f->planes_[i].bit_depth = format.storage_depth();
  }
  f->owner_ = std::move(owner);
  return f;
}

void Frame::copy_props_from(const Frame& o) {
  pts = o.pts;
  time_base = o.time_base;
  time_s = o.time_s;
  index = o.index;
  damaged = o.damaged;
  color = o.color;
  sample_aspect = o.sample_aspect;
  timing = o.timing;
}

PlaneRef Frame::plane(int i) const noexcept {
  if (i < 0 || i >= plane_count()) return {};
  return planes_[i];
}

PlaneView<uint8_t> Frame::plane8(int i) const noexcept {
  const PlaneRef r = plane(i);
  return {static_cast<uint8_t*>(const_cast<void*>(r.data)), r.width, r.height, r.pitch, 8, memory_};
}

PlaneView<uint16_t> Frame::plane16(int i) const noexcept {
  const PlaneRef r = plane(i);
  return {static_cast<uint16_t*>(const_cast<void*>(r.data)), r.width, r.height, r.pitch, r.bit_depth, memory_};
}

Result<std::unique_ptr<FramePool>> FramePool::create(const FrameFormat& format, MemoryKind memory) {
  HISTEQ_TRY(validate(format));
  std::unique_ptr<FramePool> p(new FramePool());
  p->format_ = format;
  p->memory_ = memory;
  // Device rows: 16-byte aligned, so that rows already a multiple of 16 bytes (1920-wide luma) stay
  // contiguous and the histogram kernels take their one-long-row path. Host rows: 64 bytes, for
  // AVX-512, swscale and encoders.
  const size_t row_align = memory == MemoryKind::device ? 16 : kAlign;
  const size_t plane_align = memory == MemoryKind::device ? 256 : kAlign;
  size_t offset = 0;
  for (int i = 0; i < format.plane_count(); ++i) {
    const size_t line = align_up(static_cast<size_t>(format.plane_width(i)) * format.bytes_per_sample(), row_align);
    if (line > static_cast<size_t>(INT32_MAX)) return HISTEQ_ERROR(Code::unsupported, "frame rows too wide");
    p->linesize_[i] = static_cast<int>(line);
    p->offsets_[i] = offset;
    offset = align_up(offset + line * static_cast<size_t>(format.plane_height(i)), plane_align);
  }
  // Slack past the last plane: SIMD code in swscale and encoders may read a vector past a row end.
  const size_t bytes = offset + kAlign;
  AVBufferRef* (*alloc)(void*, size_t) =
      memory == MemoryKind::device ? alloc_device : memory == MemoryKind::pinned ? alloc_pinned : alloc_host;
  p->pool_ = av_buffer_pool_init2(bytes, nullptr, alloc, nullptr);
  if (p->pool_ == nullptr) return HISTEQ_ERROR(Code::out_of_memory, "cannot create a frame pool");
  return p;
}

FramePool::~FramePool() { av_buffer_pool_uninit(&pool_); }  // outstanding frames keep their buffers

Result<FramePtr> FramePool::get() {
  AVBufferRef* buf = av_buffer_pool_get(pool_);
  if (buf == nullptr)
    return HISTEQ_ERROR(Code::out_of_memory, std::string("cannot allocate a frame of ") + format_.describe() + " in " +
                                                 cuda::memory_kind_name(memory_) + " memory");
  FramePtr f(new Frame());
  f->av_ = av_frame_alloc();
  if (f->av_ == nullptr) {
    av_buffer_unref(&buf);
    return HISTEQ_ERROR(Code::out_of_memory, "cannot allocate a frame");
  }
  f->format_ = format_;
  f->memory_ = memory_;
  AVFrame* av = f->av_;
  av->buf[0] = buf;
  for (int i = 0; i < format_.plane_count(); ++i) {
    av->data[i] = buf->data + offsets_[i];
    av->linesize[i] = linesize_[i];
    PlaneRef& r = f->planes_[i];
    r.data = av->data[i];
    r.width = format_.plane_width(i);
    r.height = format_.plane_height(i);
    r.pitch = static_cast<size_t>(linesize_[i]);
    r.bytes_per_sample = format_.bytes_per_sample();
    r.bit_depth = format_.storage_depth();
    r.memory = memory_;
  }
  av->format = format_.av_pix_fmt();
  av->width = format_.width;
  av->height = format_.height;
  return f;
}

}  // namespace histeq::video
