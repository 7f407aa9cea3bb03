// A headless OpenGL 3.3 core context through EGL, for tests: no window, no display server.
// Tries, in order, the EGL devices (the NVIDIA driver without X), Mesa's surfaceless platform, and
// the default display. Renders into framebuffer objects (there is no window surface).
#pragma once

#include <memory>
#include <string>

#include "core/cuda/status.h"

namespace histeq::test {

class EglContext {
 public:
  static Result<std::unique_ptr<EglContext>> create();
  ~EglContext();
  const std::string& description() const { return desc_; }  // "EGL device 0: NVIDIA ..." etc.

 private:
  EglContext() = default;
  void* display_ = nullptr;
  void* context_ = nullptr;
  std::string desc_;
};

}  // namespace histeq::test
