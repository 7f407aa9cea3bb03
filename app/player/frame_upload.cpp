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

// A frame's planes as the renderer takes them: planar frames as they are; NV12/P010 with the UV
// plane split into U and V scratch planes (split_[first], split_[first + 1]) in the frame's memory
// (on the device, a kernel on stream_).
Status FrameUploader::planes(const video::Frame& f, int first, gl::Planes& out) {
  out.y = f.plane(0);
  if (f.format().layout == video::PlaneLayout::planar) {
    out.u = f.plane(1);
    out.v = f.plane(2);
    return Status::ok();
  }
  const video::FrameFormat& fmt = f.format();
  const size_t pitch = static_cast<size_t>(fmt.chroma_width()) * fmt.bytes_per_sample();
  const size_t bytes = pitch * static_cast<size_t>(fmt.chroma_height());
  PlaneRef split[2];
  for (int i = 0; i < 2; ++i) {
    cuda::Buffer& b = split_[first + i];
    if (b.bytes() < bytes || b.kind() != f.memory()) {
      auto a = cuda::Buffer::allocate(f.memory(), bytes);
      if (!a) return a.status();
      b = std::move(a.value());
    }
    split[i].data = b.data();
    split[i].width = fmt.chroma_width();
    split[i].height = fmt.chroma_height();
    split[i].pitch = pitch;
    split[i].bytes_per_sample = fmt.bytes_per_sample();
    split[i].bit_depth = fmt.storage_depth();
    split[i].memory = f.memory();
  }
  out.u = split[0];
  out.v = split[1];
  return deinterleave_uv(f.plane(1), out.u, out.v, stream_.get());
}

Status FrameUploader::put(const video::Frame& f, const video::Frame* before, gl::VideoRenderer& r) {
  HISTEQ_TRY(r.configure(geometry(f.format())));
  if (before != nullptr && (before->format() != f.format() || before->memory() != f.memory())) before = nullptr;
  if (f.on_device() && stream_.get() == nullptr) {
    auto s = cuda::Stream::create();
    if (!s) return s.status();
    stream_ = std::move(s.value());
  }
  gl::Planes after, left;
  HISTEQ_TRY(planes(f, 0, after));
  if (before != nullptr) HISTEQ_TRY(planes(*before, 2, left));
  else left = after;
  if (f.on_device()) return put_device(after, left, r);
  path_ = "host upload (glTexSubImage2D)";
  return r.upload(after, left);
}

Status FrameUploader::put_device(const gl::Planes& after, const gl::Planes& before, gl::VideoRenderer& r) {
  if (!interop_failed_) {
    const Status s = r.write_from_device(after, before, stream_.get());
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
  return through_host(after, before, r);
}

Status FrameUploader::through_host(const gl::Planes& after, const gl::Planes& before, gl::VideoRenderer& r) {
  const PlaneRef dev[6] = {after.y, after.u, after.v, before.y, before.u, before.v};
  PlaneRef host[6];
  for (int i = 0; i < 6; ++i) {
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
  return r.upload({host[0], host[1], host[2]}, {host[3], host[4], host[5]});
}

}  // namespace histeq::app::player
