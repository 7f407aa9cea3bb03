// Puts an equalized frame into the VideoRenderer's textures, with the split view's "before" picture
// (the comparison of the equalizer's side data: the input, or another equalization of it):
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
  // `before`: the split view's left picture, in the frame's memory and format; null: the frame.
  Status put(const video::Frame& f, const video::Frame* before, gl::VideoRenderer& r);
  const std::string& path() const noexcept { return path_; }  // how frames reach GL, for the overlay

  static gl::FrameGeometry geometry(const video::FrameFormat& f);
  // BT.601/709 and range from the colour tags (untagged: 709 above 576 lines).
  static gl::ColorInfo color(const video::ColorTags& tags, int height);

 private:
  Status planes(const video::Frame& f, int first_split, gl::Planes& out);
  Status put_device(const gl::Planes& after, const gl::Planes& before, gl::VideoRenderer& r);
  Status through_host(const gl::Planes& after, const gl::Planes& before, gl::VideoRenderer& r);

  std::string path_;
  bool interop_failed_ = false;
  cuda::Stream stream_;
  cuda::Buffer staging_[6];  // pinned, for the fallback
  cuda::Buffer split_[4];    // NV12/P010: U and V split out of the UV plane, of the frame and of `before`
};

}  // namespace histeq::app::player
