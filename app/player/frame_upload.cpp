#include "app/player/frame_upload.h"

#include "core/image/deinterleave.h"

namespace histeq::app::player {
namespace {

// FFmpeg's AVColorSpace and AVColorRange values (Frame::color holds them as ints).
constexpr int kSpaceBt709 = 1, kSpaceBt470bg = 5, kSpaceSmpte170m = 6;
constexpr int kRangeFull = 2;

Status copy_into(const PlaneRef& src, const PlaneRef& dst, cudaStream_t stream) {
  void* d = const_cast<void*>(dst.data);
  if (dst.bytes_per_sample == 1)
    return copy_plane(src, PlaneView<uint8_t>{static_cast<uint8_t*>(d), dst.width, dst.height, dst.pitch, dst.bit_depth, dst.memory}, stream);
  return copy_plane(src, PlaneView<uint16_t>{static_cast<uint16_t*>(d), dst.width, dst.height, dst.pitch, dst.bit_depth, dst.memory}, stream);
}

}  // namespace

gl::FrameGeometry FrameUploader::geometry(const video::FrameFormat& f) {
  gl::FrameGeometry g;
  g.width = f.width;
  g.height = f.height;
  g.chroma_width = f.chroma_width();
  g.chroma_height = f.chroma_height();
  g.bytes_per_sample = f.bytes_per_sample();
  g.bit_depth = f.storage_depth();  // P010: 16 (values in the high bits)
  return g;
}

gl::ColorInfo FrameUploader::color(const video::ColorTags& tags, int height) {
  gl::ColorInfo c;
  const int space = tags.space;
  // Untagged video: BT.709 from HD sizes up, BT.601 below (what players conventionally assume).
  c.bt709 = space == kSpaceBt709 ? true : (space == kSpaceBt470bg || space == kSpaceSmpte170m) ? false : height > 576;
  c.full_range = tags.range == kRangeFull;
  return c;
}

// The frame's chroma as two planes: planar frames as they are; NV12/P010 split into scratch planes
// in the frame's memory (on the device, a kernel on stream_).
Status FrameUploader::chroma(const video::Frame& f, PlaneRef& u, PlaneRef& v) {
  if (f.format().layout == video::PlaneLayout::planar) {
    u = f.plane(1);
    v = f.plane(2);
    return Status::ok();
  }
  const video::FrameFormat& fmt = f.format();
  const size_t pitch = static_cast<size_t>(fmt.chroma_width()) * fmt.bytes_per_sample();
  const size_t bytes = pitch * static_cast<size_t>(fmt.chroma_height());
  for (cuda::Buffer* b : {&split_[0], &split_[1]}) {
    if (b->bytes() < bytes || b->kind() != f.memory()) {
      auto a = cuda::Buffer::allocate(f.memory(), bytes);
      if (!a) return a.status();
      *b = std::move(a.value());
    }
  }
  PlaneRef planes[2];
  for (int i = 0; i < 2; ++i) {
    planes[i].data = split_[i].data();
    planes[i].width = fmt.chroma_width();
    planes[i].height = fmt.chroma_height();
    planes[i].pitch = pitch;
    planes[i].bytes_per_sample = fmt.bytes_per_sample();
    planes[i].bit_depth = fmt.storage_depth();
    planes[i].memory = f.memory();
  }
  u = planes[0];
  v = planes[1];
  return deinterleave_uv(f.plane(1), u, v, stream_.get());
}

Status FrameUploader::put(const video::Frame& f, const PlaneRef* input_luma, gl::VideoRenderer& r) {
  HISTEQ_TRY(r.configure(geometry(f.format())));
  if (f.on_device() && stream_.get() == nullptr) {
    auto s = cuda::Stream::create();
    if (!s) return s.status();
    stream_ = std::move(s.value());
  }
  PlaneRef u, v;
  HISTEQ_TRY(chroma(f, u, v));
  if (f.on_device()) return put_device(f, input_luma, u, v, r);
  const PlaneRef y = f.plane(0);
  const PlaneRef before = input_luma && !input_luma->on_device() ? *input_luma : y;
  path_ = "host upload (glTexSubImage2D)";
  return r.upload(y, before, u, v);
}

Status FrameUploader::put_device(const video::Frame& f, const PlaneRef* input_luma, const PlaneRef& u, const PlaneRef& v,
                                 gl::VideoRenderer& r) {
  const PlaneRef before = input_luma && input_luma->on_device() ? *input_luma : f.plane(0);
  const PlaneRef planes[4] = {f.plane(0), before, u, v};
  if (!interop_failed_) {
    const Status s = r.write_from_device(planes[0], planes[1], planes[2], planes[3], stream_.get());
    if (s.is_ok()) {
      // The copies read the frame's device planes, which go back to their pool (and to a later
      // frame's upload) as soon as the frame is released: wait for them here.
      HISTEQ_TRY(stream_.synchronize());
      path_ = "CUDA-GL interop (frames stay on the GPU)";
      return Status::ok();
    }
    interop_failed_ = true;
    path_ = "via host memory (CUDA-GL interop unavailable: " + s.message() + ")";
  }
  return through_host(planes, r);
}

Status FrameUploader::through_host(const PlaneRef (&dev)[4], gl::VideoRenderer& r) {
  PlaneRef host[4];
  for (int i = 0; i < 4; ++i) {
    const size_t bytes = dev[i].row_bytes() * static_cast<size_t>(dev[i].height);
    if (staging_[i].bytes() < bytes) {
      auto b = cuda::Buffer::allocate(MemoryKind::pinned, bytes);
      if (!b) return b.status();
      staging_[i] = std::move(b.value());
    }
    host[i] = dev[i];
    host[i].data = staging_[i].data();
    host[i].pitch = dev[i].row_bytes();
    host[i].memory = MemoryKind::pinned;
    HISTEQ_TRY(copy_into(dev[i], host[i], stream_.get()));
  }
  HISTEQ_TRY(stream_.synchronize());
  return r.upload(host[0], host[1], host[2], host[3]);
}

}  // namespace histeq::app::player
