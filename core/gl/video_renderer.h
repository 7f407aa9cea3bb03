// Draws a planar YUV frame into the current framebuffer with the shaders of shaders/: BT.601 or
// BT.709, limited or full range, aspect ratio kept (letterboxed), and an optional split with a
// divider: left of it a second picture (all three planes: the input, or another equalization). Frames arrive either from host planes (CPU path, glTexSubImage2D) or from
// device planes through CUDA-GL interop (textures registered once per geometry, mapped per frame).
//
// Thread: the GL context's thread, with the context current for every call. No SDL here.
#pragma once

#include <cuda_runtime_api.h>

#include <memory>

#include "core/cuda/status.h"
#include "core/gl/cuda_gl.h"
#include "core/gl/program.h"
#include "core/gl/texture.h"
#include "core/image/plane.h"

namespace histeq::gl {

struct FrameGeometry {
  int width = 0, height = 0;                // luma
  int chroma_width = 0, chroma_height = 0;  // 4:2:0: (w+1)/2 x (h+1)/2
  int bytes_per_sample = 1;
  int bit_depth = 8;
  bool operator==(const FrameGeometry& o) const {
    return width == o.width && height == o.height && chroma_width == o.chroma_width && chroma_height == o.chroma_height &&
           bytes_per_sample == o.bytes_per_sample && bit_depth == o.bit_depth;
  }
};

struct ColorInfo {
  bool bt709 = true;       // false: BT.601
  bool full_range = false;
};

// The planes of one picture (host planes for upload, device planes for write_from_device).
struct Planes {
  PlaneRef y, u, v;
};

struct DrawOptions {
  ColorInfo color;
  float split = -1.f;         // 0..1 of the video's width: left shows the "before" picture; < 0: off
  float sample_aspect = 1.f;  // pixel aspect ratio of the video
};

// Where the video landed in the framebuffer, in pixels from the bottom-left (GL convention).
struct Rect {
  int x = 0, y = 0, w = 0, h = 0;
};

class VideoRenderer {
 public:
  static Result<std::unique_ptr<VideoRenderer>> create();

  // (Re)creates the textures when the geometry changes; a no-op otherwise.
  Status configure(const FrameGeometry& g);
  const FrameGeometry& geometry() const noexcept { return geom_; }

  // CPU path: the equalized frame and the split view's "before" picture (the input, or another
  // equalization of it), host planes.
  Status upload(const Planes& after, const Planes& before);
  // GPU path: the same from device planes, through interop, ordered on `stream`.
  Status write_from_device(const Planes& after, const Planes& before, cudaStream_t stream);

  // Draws into the current framebuffer of fb_width x fb_height pixels (clears the borders).
  Result<Rect> draw(int fb_width, int fb_height, const DrawOptions& opts);

  const Texture2D& luma() const noexcept { return y_; }

 private:
  VideoRenderer() = default;
  Program program_;
  GLuint vao_ = 0;
  FrameGeometry geom_;
  Texture2D y_, y_before_, u_, v_, u_before_, v_before_;
  std::unique_ptr<CudaGlTextures> interop_;  // registered lazily, on the first device write
 public:
  ~VideoRenderer();
  VideoRenderer(const VideoRenderer&) = delete;
  VideoRenderer& operator=(const VideoRenderer&) = delete;
};

// The letterboxed rectangle of a w x h video (with sample aspect sar) in a fb_w x fb_h framebuffer.
Rect fit_rect(int fb_w, int fb_h, int w, int h, float sar);

}  // namespace histeq::gl
