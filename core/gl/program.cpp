#include "core/gl/program.h"

#include <vector>

#include "core/gl/shaders.h"

namespace histeq::gl {
namespace {

Result<GLuint> compile(GLenum type, const std::string& name) {
  const char* src = shader_source(name);
  if (src == nullptr) return HISTEQ_ERROR(Code::not_found, "no shader named " + name);
  GLuint s = glCreateShader(type);
  glShaderSource(s, 1, &src, nullptr);
  glCompileShader(s);
  GLint ok = GL_FALSE;
  glGetShaderiv(s, GL_COMPILE_STATUS, &ok);
  if (ok != GL_TRUE) {
    GLint len = 0;
    glGetShaderiv(s, GL_INFO_LOG_LENGTH, &len);
    std::vector<char> log(static_cast<size_t>(std::max(len, 1)));
    glGetShaderInfoLog(s, len, nullptr, log.data());
    glDeleteShader(s);
    return HISTEQ_ERROR(Code::internal, "shader " + name + " does not compile: " + std::string(log.data()));
  }
  return s;
}

}  // namespace

Result<Program> Program::build(const std::string& vert, const std::string& frag) {
  auto vs = compile(GL_VERTEX_SHADER, vert);
  if (!vs) return vs.status();
  auto fs = compile(GL_FRAGMENT_SHADER, frag);
  if (!fs) {
    glDeleteShader(*vs);
    return fs.status();
  }
  Program p;
  p.id_ = glCreateProgram();
  glAttachShader(p.id_, *vs);
  glAttachShader(p.id_, *fs);
  glLinkProgram(p.id_);
  glDeleteShader(*vs);
  glDeleteShader(*fs);
  GLint ok = GL_FALSE;
  glGetProgramiv(p.id_, GL_LINK_STATUS, &ok);
  if (ok != GL_TRUE) {
    GLint len = 0;
    glGetProgramiv(p.id_, GL_INFO_LOG_LENGTH, &len);
    std::vector<char> log(static_cast<size_t>(std::max(len, 1)));
    glGetProgramInfoLog(p.id_, len, nullptr, log.data());
    return HISTEQ_ERROR(Code::internal, "program " + vert + " + " + frag + " does not link: " + std::string(log.data()));
  }
  return p;
}

void Program::reset() noexcept {
  if (id_ != 0) glDeleteProgram(std::exchange(id_, 0));
}

}  // namespace histeq::gl
