// A single-channel 2-D texture holding one video plane: GL_R8 for 8-bit samples, GL_R16 for 16-bit
// samples (10-bit video keeps its values; shaders rescale). Linear filtering, clamped edges.
// Thread: the GL context's thread. Requires a current OpenGL 3.3 core context.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "core/cuda/status.h"
#include "core/gl/gl.h"
#include "core/image/plane.h"

namespace histeq::gl {

class Texture2D {
 public:
  Texture2D() = default;
  static Result<Texture2D> create(int width, int height, int bytes_per_sample);
  ~Texture2D() { reset(); }
  Texture2D(Texture2D&& o) noexcept
      : id_(std::exchange(o.id_, 0)), w_(o.w_), h_(o.h_), bps_(o.bps_) {}
  Texture2D& operator=(Texture2D&& o) noexcept {
    if (this != &o) {
      reset();
      id_ = std::exchange(o.id_, 0);
      w_ = o.w_;
      h_ = o.h_;
      bps_ = o.bps_;
    }
    return *this;
  }
  Texture2D(const Texture2D&) = delete;
  Texture2D& operator=(const Texture2D&) = delete;

  // Uploads a host plane of the texture's size and sample width (the CPU path: glTexSubImage2D,
  // honouring the plane's pitch).
  Status upload(const PlaneRef& host);
  // Reads the texture back into tightly packed rows (tests, screenshots of planes).
  Status download(std::vector<uint8_t>& out) const;

  GLuint id() const noexcept { return id_; }
  int width() const noexcept { return w_; }
  int height() const noexcept { return h_; }
  int bytes_per_sample() const noexcept { return bps_; }
  void reset() noexcept;

 private:
  GLuint id_ = 0;
  int w_ = 0, h_ = 0, bps_ = 1;
};

// The GL error flag as a Status ("glTexSubImage2D: GL_INVALID_VALUE").
Status gl_status(const char* what);

}  // namespace histeq::gl
