// A linked GLSL program built from files of shaders/ (embedded at build time).
// Thread: the GL context's thread. Requires a current OpenGL 3.3 core context.
#pragma once

#include <string>
#include <utility>

#include "core/cuda/status.h"
#include "core/gl/gl.h"

namespace histeq::gl {

class Program {
 public:
  Program() = default;
  // Compiles shaders/<vert> and shaders/<frag> and links them. Errors carry the GLSL compiler log.
  static Result<Program> build(const std::string& vert, const std::string& frag);
  ~Program() { reset(); }
  Program(Program&& o) noexcept : id_(std::exchange(o.id_, 0)) {}
  Program& operator=(Program&& o) noexcept {
    if (this != &o) { reset(); id_ = std::exchange(o.id_, 0); }
    return *this;
  }
  Program(const Program&) = delete;
  Program& operator=(const Program&) = delete;

  GLuint id() const noexcept { return id_; }
  GLint uniform(const char* name) const { return glGetUniformLocation(id_, name); }
  void reset() noexcept;

 private:
  GLuint id_ = 0;
};

}  // namespace histeq::gl
