#include "tests/common/egl_context.h"

#include <epoxy/egl.h>
#include <epoxy/gl.h>

#include <vector>

namespace histeq::test {
namespace {

EGLContext make_context(EGLDisplay dpy) {
  if (!eglBindAPI(EGL_OPENGL_API)) return EGL_NO_CONTEXT;
  const EGLint cfg_attrs[] = {EGL_SURFACE_TYPE, EGL_PBUFFER_BIT, EGL_RENDERABLE_TYPE, EGL_OPENGL_BIT, EGL_RED_SIZE, 8,
                              EGL_GREEN_SIZE, 8, EGL_BLUE_SIZE, 8, EGL_NONE};
  EGLConfig cfg = nullptr;
  EGLint n = 0;
  if (!eglChooseConfig(dpy, cfg_attrs, &cfg, 1, &n) || n < 1) {
    // Surfaceless displays may offer configs without pbuffer support.
    const EGLint any[] = {EGL_RENDERABLE_TYPE, EGL_OPENGL_BIT, EGL_NONE};
    if (!eglChooseConfig(dpy, any, &cfg, 1, &n) || n < 1) cfg = nullptr;
  }
  const EGLint ctx_attrs[] = {EGL_CONTEXT_MAJOR_VERSION, 3, EGL_CONTEXT_MINOR_VERSION, 3, EGL_CONTEXT_OPENGL_PROFILE_MASK,
                              EGL_CONTEXT_OPENGL_CORE_PROFILE_BIT, EGL_NONE};
  EGLContext ctx = eglCreateContext(dpy, cfg, EGL_NO_CONTEXT, ctx_attrs);
  if (ctx == EGL_NO_CONTEXT) return ctx;
  if (!eglMakeCurrent(dpy, EGL_NO_SURFACE, EGL_NO_SURFACE, ctx)) {
    eglDestroyContext(dpy, ctx);
    return EGL_NO_CONTEXT;
  }
  return ctx;
}

}  // namespace

Result<std::unique_ptr<EglContext>> EglContext::create() {
  std::unique_ptr<EglContext> c(new EglContext());
  std::vector<std::pair<EGLDisplay, std::string>> candidates;
  if (epoxy_has_egl_extension(EGL_NO_DISPLAY, "EGL_EXT_device_enumeration") &&
      epoxy_has_egl_extension(EGL_NO_DISPLAY, "EGL_EXT_platform_device")) {
    EGLDeviceEXT devices[8];
    EGLint n = 0;
    if (eglQueryDevicesEXT(8, devices, &n))
      for (EGLint i = 0; i < n; ++i)
        candidates.emplace_back(eglGetPlatformDisplayEXT(EGL_PLATFORM_DEVICE_EXT, devices[i], nullptr), "EGL device " + std::to_string(i));
  }
  if (epoxy_has_egl_extension(EGL_NO_DISPLAY, "EGL_MESA_platform_surfaceless"))
    candidates.emplace_back(eglGetPlatformDisplayEXT(EGL_PLATFORM_SURFACELESS_MESA, EGL_DEFAULT_DISPLAY, nullptr), "Mesa surfaceless");
  candidates.emplace_back(eglGetDisplay(EGL_DEFAULT_DISPLAY), "default display");
  for (auto& [dpy, name] : candidates) {
    if (dpy == EGL_NO_DISPLAY) continue;
    EGLint major = 0, minor = 0;
    if (!eglInitialize(dpy, &major, &minor)) continue;
    EGLContext ctx = make_context(dpy);
    if (ctx == EGL_NO_CONTEXT) {
      eglTerminate(dpy);
      continue;
    }
    if (epoxy_gl_version() < 33) {
      eglMakeCurrent(dpy, EGL_NO_SURFACE, EGL_NO_SURFACE, EGL_NO_CONTEXT);
      eglDestroyContext(dpy, ctx);
      eglTerminate(dpy);
      continue;
    }
    c->display_ = dpy;
    c->context_ = ctx;
    c->desc_ = name + ": " + reinterpret_cast<const char*>(glGetString(GL_RENDERER));
    return c;
  }
  return HISTEQ_ERROR(Code::unsupported, "no EGL display gives an OpenGL 3.3 core context");
}

EglContext::~EglContext() {
  if (display_ == nullptr) return;
  eglMakeCurrent(display_, EGL_NO_SURFACE, EGL_NO_SURFACE, EGL_NO_CONTEXT);
  eglDestroyContext(display_, context_);
  eglTerminate(display_);
}

}  // namespace histeq::test
