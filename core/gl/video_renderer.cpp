#include "core/gl/video_renderer.h"

#include <algorithm>
#include <cmath>

namespace histeq::gl {

Rect fit_rect(int fb_w, int fb_h, int w, int h, float sar) {
  if (fb_w <= 0 || fb_h <= 0 || w <= 0 || h <= 0) return {};
  const double video = (static_cast<double>(w) * (sar > 0 ? sar : 1.0)) / h;
  const double screen = static_cast<double>(fb_w) / fb_h;
  Rect r;
  if (video > screen) {  // full width, bars above and below
    r.w = fb_w;
    r.h = std::max(1, static_cast<int>(std::lround(fb_w / video)));
  } else {
    r.h = fb_h;
    r.w = std::max(1, static_cast<int>(std::lround(fb_h * video)));
  }
  r.x = (fb_w - r.w) / 2;
  r.y = (fb_h - r.h) / 2;
  return r;
}

Result<std::unique_ptr<VideoRenderer>> VideoRenderer::create() {
  std::unique_ptr<VideoRenderer> r(new VideoRenderer());
  auto p = Program::build("video.vert", "yuv_to_rgb.frag");
  if (!p) return p.status();
  r->program_ = std::move(p.value());
  glGenVertexArrays(1, &r->vao_);  // core profile: a bound VAO is required even without attributes
  HISTEQ_TRY(gl_status("glGenVertexArrays"));
  return r;
}

VideoRenderer::~VideoRenderer() {
  interop_.reset();  // unregister before the textures go
  if (vao_ != 0) glDeleteVertexArrays(1, &vao_);
}

Status VideoRenderer::configure(const FrameGeometry& g) {
  if (g == geom_ && y_.id() != 0) return Status::ok();
  interop_.reset();
  auto y = Texture2D::create(g.width, g.height, g.bytes_per_sample);
  auto yb = Texture2D::create(g.width, g.height, g.bytes_per_sample);
  auto u = Texture2D::create(g.chroma_width, g.chroma_height, g.bytes_per_sample);
  auto v = Texture2D::create(g.chroma_width, g.chroma_height, g.bytes_per_sample);
  auto ub = Texture2D::create(g.chroma_width, g.chroma_height, g.bytes_per_sample);
  auto vb = Texture2D::create(g.chroma_width, g.chroma_height, g.bytes_per_sample);
  for (auto* t : {&y, &yb, &u, &v, &ub, &vb})
    if (!*t) return t->status();
  y_ = std::move(y.value());
  y_before_ = std::move(yb.value());
  u_ = std::move(u.value());
  v_ = std::move(v.value());
  u_before_ = std::move(ub.value());
  v_before_ = std::move(vb.value());
  geom_ = g;
  return Status::ok();
}

Status VideoRenderer::upload(const Planes& after, const Planes& before) {
  HISTEQ_TRY(y_.upload(after.y));
  HISTEQ_TRY(u_.upload(after.u));
  HISTEQ_TRY(v_.upload(after.v));
  HISTEQ_TRY(y_before_.upload(before.y));
  HISTEQ_TRY(u_before_.upload(before.u));
  return v_before_.upload(before.v);
}

Status VideoRenderer::write_from_device(const Planes& after, const Planes& before, cudaStream_t stream) {
  if (!interop_) {
    auto reg = CudaGlTextures::register_textures({&y_, &y_before_, &u_, &v_, &u_before_, &v_before_});
    if (!reg) return reg.status();
    interop_ = std::make_unique<CudaGlTextures>(std::move(reg.value()));
  }
  return interop_->write({after.y, before.y, after.u, after.v, before.u, before.v}, stream);
}

Result<Rect> VideoRenderer::draw(int fb_width, int fb_height, const DrawOptions& o) {
  if (y_.id() == 0) return HISTEQ_ERROR(Code::invalid_argument, "draw before configure");
  const Rect r = fit_rect(fb_width, fb_height, geom_.width, geom_.height, o.sample_aspect);
  glViewport(0, 0, fb_width, fb_height);
  glClearColor(0.f, 0.f, 0.f, 1.f);
  glClear(GL_COLOR_BUFFER_BIT);
  glViewport(r.x, r.y, r.w, r.h);
  glUseProgram(program_.id());
  const Texture2D* units[6] = {&y_, &y_before_, &u_, &v_, &u_before_, &v_before_};
  const char* names[6] = {"u_y", "u_y_before", "u_u", "u_v", "u_u_before", "u_v_before"};
  for (int i = 0; i < 6; ++i) {
    glActiveTexture(GL_TEXTURE0 + i);
    glBindTexture(GL_TEXTURE_2D, units[i]->id());
    glUniform1i(program_.uniform(names[i]), i);
  }
  glUniform1i(program_.uniform("u_matrix"), o.color.bt709 ? 1 : 0);
  glUniform1i(program_.uniform("u_full_range"), o.color.full_range ? 1 : 0);
  // Normalized texture value -> 8-bit-equivalent code value.
  const float scale = geom_.bytes_per_sample == 1 ? 255.f : 65535.f / static_cast<float>(1 << (geom_.bit_depth - 8));
  glUniform1f(program_.uniform("u_scale"), scale);
  glUniform1f(program_.uniform("u_split"), o.split);
  glUniform1f(program_.uniform("u_divider_px"), 1.5f);
  glUniform1f(program_.uniform("u_width_px"), static_cast<float>(r.w));
  glBindVertexArray(vao_);
  glDrawArrays(GL_TRIANGLE_STRIP, 0, 4);
  glBindVertexArray(0);
  glActiveTexture(GL_TEXTURE0);
  glViewport(0, 0, fb_width, fb_height);
  HISTEQ_TRY(gl_status("draw video"));
  return r;
}

}  // namespace histeq::gl
