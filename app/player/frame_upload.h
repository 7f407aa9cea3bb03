// Puts an equalized frame into the VideoRenderer's textures, with the input luma for the split view:
//   - GPU path (a device frame): CUDA-GL interop, device planes copied into the registered
//     textures; the picture never leaves the GPU. Should interop be unavailable (a GL context on
//     another GPU or a software renderer, e.g. a remote display), the planes go through host
//     memory instead, once said in path();
//   - CPU path: the host planes, with glTexSubImage2D.
// NV12/P010 frames (NVDEC) have their UV plane split into U and V first (on the GPU for device frames).
// Thread: the GL context's.
#pragma once

#include <string>

#include "core/cuda/resources.h"
#include "core/gl/video_renderer.h"
#include "core/video/frame.h"

namespace histeq::app::player {

class FrameUploader {
 public:
  // `input_luma`: the luma before equalization (the split view's "before"), in the frame's memory;
  // null: the frame's own luma.
  Status put(const video::Frame& f, const PlaneRef* input_luma, gl::VideoRenderer& r);
  const std::string& path() const noexcept { return path_; }  // how frames reach GL, for the overlay

  static gl::FrameGeometry geometry(const video::FrameFormat& f);
  // BT.601/709 and range from the colour tags (untagged: 709 above 576 lines).
  static gl::ColorInfo color(const video::ColorTags& tags, int height);

 private:
  Status put_device(const video::Frame& f, const PlaneRef* input_luma, const PlaneRef& u, const PlaneRef& v,
                    gl::VideoRenderer& r);
  Status chroma(const video::Frame& f, PlaneRef& u, PlaneRef& v);
  Status through_host(const PlaneRef (&dev)[4], gl::VideoRenderer& r);

  std::string path_;
  bool interop_failed_ = false;
  cuda::Stream stream_;
  cuda::Buffer staging_[4];  // pinned, for the fallback
  cuda::Buffer split_[2];    // NV12/P010: the U and V planes split out of the UV plane
};

}  // namespace histeq::app::player
