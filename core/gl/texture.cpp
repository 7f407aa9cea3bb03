#include "core/gl/texture.h"

#include <string>

namespace histeq::gl {

Status gl_status(const char* what) {
  const GLenum e = glGetError();
  if (e == GL_NO_ERROR) return Status::ok();
  const char* name = e == GL_INVALID_ENUM        ? "GL_INVALID_ENUM"
                     : e == GL_INVALID_VALUE     ? "GL_INVALID_VALUE"
                     : e == GL_INVALID_OPERATION ? "GL_INVALID_OPERATION"
                     : e == GL_OUT_OF_MEMORY     ? "GL_OUT_OF_MEMORY"
                                                 : "GL error";
  while (glGetError() != GL_NO_ERROR) {
  }
  return HISTEQ_ERROR(Code::internal, std::string(what) + ": " + name);
}

Result<Texture2D> Texture2D::create(int width, int height, int bytes_per_sample) {
  if (width <= 0 || height <= 0 || (bytes_per_sample != 1 && bytes_per_sample != 2))
    return HISTEQ_ERROR(Code::invalid_argument, "bad texture geometry");
  Texture2D t;
  t.w_ = width;
  t.h_ = height;
  t.bps_ = bytes_per_sample;
  glGenTextures(1, &t.id_);
  glBindTexture(GL_TEXTURE_2D, t.id_);
  glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MIN_FILTER, GL_LINEAR);
  glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MAG_FILTER, GL_LINEAR);
  glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_WRAP_S, GL_CLAMP_TO_EDGE);
  glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_WRAP_T, GL_CLAMP_TO_EDGE);
  const GLenum type = bytes_per_sample == 1 ? GL_UNSIGNED_BYTE : GL_UNSIGNED_SHORT;
  glTexImage2D(GL_TEXTURE_2D, 0, bytes_per_sample == 1 ? GL_R8 : GL_R16, width, height, 0, GL_RED, type, nullptr);
  HISTEQ_TRY(gl_status("glTexImage2D"));
  return t;
}

Status Texture2D::upload(const PlaneRef& p) {
  if (p.on_device()) return HISTEQ_ERROR(Code::invalid_argument, "Texture2D::upload takes a host plane");
  if (p.width != w_ || p.height != h_ || p.bytes_per_sample != bps_)
    return HISTEQ_ERROR(Code::invalid_argument, "plane does not match the texture");
  glBindTexture(GL_TEXTURE_2D, id_);
  glPixelStorei(GL_UNPACK_ALIGNMENT, 1);
  glPixelStorei(GL_UNPACK_ROW_LENGTH, static_cast<GLint>(p.pitch / bps_));
  glTexSubImage2D(GL_TEXTURE_2D, 0, 0, 0, w_, h_, GL_RED, bps_ == 1 ? GL_UNSIGNED_BYTE : GL_UNSIGNED_SHORT, p.data);
  glPixelStorei(GL_UNPACK_ROW_LENGTH, 0);
  return gl_status("glTexSubImage2D");
}

Status Texture2D::download(std::vector<uint8_t>& out) const {
  out.resize(static_cast<size_t>(w_) * h_ * bps_);
  glBindTexture(GL_TEXTURE_2D, id_);
  glPixelStorei(GL_PACK_ALIGNMENT, 1);
  glGetTexImage(GL_TEXTURE_2D, 0, GL_RED, bps_ == 1 ? GL_UNSIGNED_BYTE : GL_UNSIGNED_SHORT, out.data());
  return gl_status("glGetTexImage");
}

void Texture2D::reset() noexcept {
  if (id_ != 0) glDeleteTextures(1, &id_);
  id_ = 0;
}

}  // namespace histeq::gl
