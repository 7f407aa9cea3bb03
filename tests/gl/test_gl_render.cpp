// The GL display path without a window: an EGL context (NVIDIA's EGL device on the GPU machine,
// Mesa's software renderer elsewhere), the YUV->RGB shaders, letterboxing, the split view, and the
// CUDA-GL interop (register a texture, write it with CUDA, read it back with GL). Tests skip when
// no EGL context can be made; the interop test also needs a CUDA device.
#include <gtest/gtest.h>

#include <cstring>

#include "core/cuda/check.h"
#include "core/cuda/device.h"
#include "core/gl/cuda_gl.h"
#include "core/gl/video_renderer.h"
#include "tests/common/egl_context.h"

namespace histeq::test {
namespace {

class GlTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto c = EglContext::create();
    if (!c) GTEST_SKIP() << "no headless OpenGL: " << c.status().message();
    ctx_ = std::move(c.value());
    RecordProperty("gl", ctx_->description());
  }
  std::unique_ptr<EglContext> ctx_;
};

// An RGBA8 render target the size of the "window".
struct Target {
  GLuint fbo = 0, tex = 0;
  int w, h;
  Target(int w_, int h_) : w(w_), h(h_) {
    glGenTextures(1, &tex);
    glBindTexture(GL_TEXTURE_2D, tex);
    glTexImage2D(GL_TEXTURE_2D, 0, GL_RGBA8, w, h, 0, GL_RGBA, GL_UNSIGNED_BYTE, nullptr);
    glGenFramebuffers(1, &fbo);
    glBindFramebuffer(GL_FRAMEBUFFER, fbo);
    glFramebufferTexture2D(GL_FRAMEBUFFER, GL_COLOR_ATTACHMENT0, GL_TEXTURE_2D, tex, 0);
  }
  ~Target() {
    glBindFramebuffer(GL_FRAMEBUFFER, 0);
    glDeleteFramebuffers(1, &fbo);
    glDeleteTextures(1, &tex);
  }
  // Pixel (x, y) with y counted from the TOP row, as in an image.
  std::array<int, 3> at(int x, int y) {
    unsigned char px[4];
    glReadPixels(x, h - 1 - y, 1, 1, GL_RGBA, GL_UNSIGNED_BYTE, px);
    return {px[0], px[1], px[2]};
  }
};

struct Yuv {
  Plane8 y, yb, u, v;
};

Yuv make_frame(int w, int h, uint8_t Y, uint8_t Yb, uint8_t U, uint8_t V) {
  Yuv f;
  f.y = std::move(Plane8::allocate(MemoryKind::host, w, h, w + 3).value());  // padded pitch on purpose
  f.yb = std::move(Plane8::allocate(MemoryKind::host, w, h).value());
  f.u = std::move(Plane8::allocate(MemoryKind::host, (w + 1) / 2, (h + 1) / 2).value());
  f.v = std::move(Plane8::allocate(MemoryKind::host, (w + 1) / 2, (h + 1) / 2).value());
  for (int r = 0; r < h; ++r) {
    std::memset(f.y.view().row(r), Y, w);
    std::memset(f.yb.view().row(r), Yb, w);
  }
  for (int r = 0; r < (h + 1) / 2; ++r) {
    std::memset(f.u.view().row(r), U, (w + 1) / 2);
    std::memset(f.v.view().row(r), V, (w + 1) / 2);
  }
  return f;
}

void expect_rgb(std::array<int, 3> got, int r, int g, int b, const char* what) {
  EXPECT_NEAR(got[0], r, 3) << what;
  EXPECT_NEAR(got[1], g, 3) << what;
  EXPECT_NEAR(got[2], b, 3) << what;
}

TEST_F(GlTest, YuvToRgbMatricesAndRanges) {
  auto r = gl::VideoRenderer::create();
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  ASSERT_TRUE((*r)->configure({64, 32, 32, 16, 1, 8}).is_ok());
  Target t(64, 32);
  struct Case {
    uint8_t y, u, v;
    bool bt709, full;
    int r, g, b;
    const char* name;
  } cases[] = {
      {235, 128, 128, false, false, 255, 255, 255, "limited white"},
      {16, 128, 128, true, false, 0, 0, 0, "limited black"},
      {81, 90, 240, false, false, 255, 0, 0, "BT.601 limited red"},
      {63, 102, 240, true, false, 255, 0, 0, "BT.709 limited red"},
      {128, 128, 128, true, true, 128, 128, 128, "full-range grey"},
  };
  for (const auto& c : cases) {
    Yuv f = make_frame(64, 32, c.y, c.y, c.u, c.v);
    ASSERT_TRUE((*r)->upload({f.y, f.u, f.v}, {f.yb, f.u, f.v}).is_ok());
    gl::DrawOptions o;
    o.color = {c.bt709, c.full};
    ASSERT_TRUE((*r)->draw(64, 32, o).is_ok());
    expect_rgb(t.at(32, 16), c.r, c.g, c.b, c.name);
  }
}

TEST_F(GlTest, SplitViewShowsTheBeforePictureOnTheLeft) {
  auto r = gl::VideoRenderer::create();
  ASSERT_TRUE(r.is_ok());
  ASSERT_TRUE((*r)->configure({64, 32, 32, 16, 1, 8}).is_ok());
  Target t(64, 32);
  Yuv f = make_frame(64, 32, 235, 16, 128, 128);  // after: white, before: black
  ASSERT_TRUE((*r)->upload({f.y, f.u, f.v}, {f.yb, f.u, f.v}).is_ok());
  gl::DrawOptions o;
  o.color = {true, false};
  o.split = 0.5f;
  ASSERT_TRUE((*r)->draw(64, 32, o).is_ok());
  expect_rgb(t.at(8, 16), 0, 0, 0, "left of the divider: before");
  expect_rgb(t.at(56, 16), 255, 255, 255, "right of the divider: after");
  o.split = -1.f;
  ASSERT_TRUE((*r)->draw(64, 32, o).is_ok());
  expect_rgb(t.at(8, 16), 255, 255, 255, "split off: all after");
  // The before picture has its own chroma: BT.709 limited red on the left, grey on the right.
  Yuv red = make_frame(64, 32, 63, 63, 102, 240);
  Yuv grey = make_frame(64, 32, 126, 126, 128, 128);
  ASSERT_TRUE((*r)->upload({grey.y, grey.u, grey.v}, {red.y, red.u, red.v}).is_ok());
  o.split = 0.5f;
  ASSERT_TRUE((*r)->draw(64, 32, o).is_ok());
  expect_rgb(t.at(8, 16), 255, 0, 0, "before: its own chroma");
  expect_rgb(t.at(56, 16), 128, 128, 128, "after: its chroma");
}

TEST_F(GlTest, AspectRatioIsKeptWithBars) {
  auto r = gl::VideoRenderer::create();
  ASSERT_TRUE(r.is_ok());
  ASSERT_TRUE((*r)->configure({64, 32, 32, 16, 1, 8}).is_ok());
  Target t(128, 32);  // twice as wide as the video's 2:1
  Yuv f = make_frame(64, 32, 235, 235, 128, 128);
  ASSERT_TRUE((*r)->upload({f.y, f.u, f.v}, {f.yb, f.u, f.v}).is_ok());
  auto rect = (*r)->draw(128, 32, {});
  ASSERT_TRUE(rect.is_ok());
  EXPECT_EQ(rect->w, 64);
  EXPECT_EQ(rect->x, 32);
  expect_rgb(t.at(2, 16), 0, 0, 0, "bar");
  expect_rgb(t.at(64, 16), 255, 255, 255, "video");
}

TEST_F(GlTest, TenBitFrames) {
  auto r = gl::VideoRenderer::create();
  ASSERT_TRUE(r.is_ok());
  ASSERT_TRUE((*r)->configure({16, 8, 8, 4, 2, 10}).is_ok());
  Target t(16, 8);
  auto mk = [](int w, int h, uint16_t v) {
    auto p = Plane16::allocate(MemoryKind::host, w, h, 0, 10);
    for (int y = 0; y < h; ++y)
      for (int x = 0; x < w; ++x) p->view().row(y)[x] = v;
    return std::move(p.value());
  };
  Plane16 y = mk(16, 8, 940), yb = mk(16, 8, 940), u = mk(8, 4, 512), v = mk(8, 4, 512);  // 10-bit limited white
  ASSERT_TRUE((*r)->upload({y, u, v}, {yb, u, v}).is_ok());
  ASSERT_TRUE((*r)->draw(16, 8, {}).is_ok());
  expect_rgb(t.at(8, 4), 255, 255, 255, "10-bit limited white");
}

TEST(GlGeometry, FitRect) {
  auto r = gl::fit_rect(1920, 1080, 1280, 720, 1.f);
  EXPECT_EQ(r.w, 1920);
  EXPECT_EQ(r.h, 1080);
  r = gl::fit_rect(1000, 1000, 1920, 1080, 1.f);
  EXPECT_EQ(r.w, 1000);
  EXPECT_EQ(r.h, 563);
  EXPECT_EQ(r.y, 218);
  r = gl::fit_rect(1000, 1000, 720, 576, 16.f / 15.f);  // anamorphic PAL
  EXPECT_EQ(r.w, 1000);
  EXPECT_EQ(r.h, 750);
}

TEST_F(GlTest, CudaWritesTextureThatGlReadsBack) {
  if (!cuda::have_device()) GTEST_SKIP() << "no CUDA device on this machine";
  for (int bps : {1, 2}) {
    const int w = 37, h = 23;  // odd sizes, pitched device planes
    auto tex = gl::Texture2D::create(w, h, bps);
    ASSERT_TRUE(tex.is_ok()) << tex.status().to_string();
    auto reg = gl::CudaGlTextures::register_textures({&tex.value()});
    ASSERT_TRUE(reg.is_ok()) << reg.status().to_string();
    std::vector<uint8_t> host(static_cast<size_t>(w) * h * bps);
    for (size_t i = 0; i < host.size(); ++i) host[i] = static_cast<uint8_t>((i * 37 + 11) & 0xFF);
    const size_t pitch = 128;
    auto dev = cuda::Buffer::allocate(MemoryKind::device, pitch * h);
    ASSERT_TRUE(dev.is_ok());
    ASSERT_TRUE(HISTEQ_CUDA_STATUS(cudaMemcpy2D(dev->data(), pitch, host.data(), static_cast<size_t>(w) * bps,
                                                static_cast<size_t>(w) * bps, h, cudaMemcpyHostToDevice)).is_ok());
    PlaneRef p;
    p.data = dev->data();
    p.width = w;
    p.height = h;
    p.pitch = pitch;
    p.bytes_per_sample = bps;
    p.bit_depth = bps == 1 ? 8 : 16;
    p.memory = MemoryKind::device;
    ASSERT_TRUE(reg->write({p}, nullptr).is_ok());
    // A second frame through the same registration, as the player does every frame.
    ASSERT_TRUE(reg->write({p}, nullptr).is_ok());
    std::vector<uint8_t> back;
    ASSERT_TRUE(tex->download(back).is_ok());
    EXPECT_EQ(back, host) << bps << " bytes per sample";
  }
}

}  // namespace
}  // namespace histeq::test
