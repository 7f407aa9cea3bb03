// What the sources of core/api share (private to core/api): the settings' representation, the
// conversion of the core's errors into the public API's, and the checks of public images.
//
// The public header is included with HISTEQ_API_NO_USING (set for this folder by CMake), so that
// histeq::Status here is the core's and histeq::api::Status the public one.
#pragma once

#include <exception>
#include <new>
#include <string>
#include <vector>

#include <cuda_runtime_api.h>

#include "core/cuda/backend.h"
#include "core/cuda/status.h"
#include "core/equalize/controls.h"
#include "core/equalize/quality.h"
#include "core/image/plane.h"
#include "core/video/frame.h"
#include "histeq/histeq.hpp"

namespace histeq::api {

// The settings: the control table's controls in `quality`, and the equalizer's own controls
// (kernel, strength, backend, device) in `own`, a second Quality whose params hold them, so that
// the control table's functions (set_control_text, control_text, check_control) serve both.
struct Settings::Impl {
  eq::Quality quality = eq::default_quality();
  eq::Quality own;
};

// The equalizer's device made current for one call, the caller's put back after: a library must
// not change the calling thread's current device.
class DeviceScope {
 public:
  explicit DeviceScope(int device) {
    if (device < 0 || cudaGetDevice(&previous_) != cudaSuccess || previous_ == device) return;
    if (cudaSetDevice(device) == cudaSuccess) changed_ = true;
  }
  ~DeviceScope() {
    if (changed_) (void)cudaSetDevice(previous_);
  }
  DeviceScope(const DeviceScope&) = delete;
  DeviceScope& operator=(const DeviceScope&) = delete;

 private:
  int previous_ = -1;
  bool changed_ = false;
};

// The equalizer's own controls, declared once (with their accessors onto Settings::Impl::own).
const std::vector<eq::Control>& own_controls();
// The choices of the backend control, in its order.
enum class BackendChoice { automatic = 0, gpu = 1, cpu = 2 };

// The own controls' values as the equalizer uses them, from Settings::Impl::own.
std::string kernel_of(const eq::Quality& own);  // "" = the backend's default
double strength_of(const eq::Quality& own);
BackendChoice backend_of(const eq::Quality& own);
int device_of(const eq::Quality& own);

// A core Status as the public API's (ok stays ok); faults keep their file and line.
Status to_public(const histeq::Status& s);
// Runs `f`, which returns a public Status, turning an escaping exception into an error value.
template <class F>
Status guarded(F&& f) noexcept {
  try {
    return f();
  } catch (const std::bad_alloc&) {
    return Status(ErrorCode::internal, "out of host memory");
  } catch (const std::exception& e) {
    return Status(ErrorCode::internal, std::string("unexpected error: ") + e.what());
  } catch (...) {
    return Status(ErrorCode::internal, "unexpected error");
  }
}

// The layout of a public format as the core's FrameFormat (gray formats: the planar 4:2:0 layout
// of their luma; their chroma planes are absent).
video::FrameFormat frame_format(const Image& image);
bool is_gray(PixelFormat f) noexcept;
// Checks that `image` fits its format: sizes, planes, pitches, the memory kind and device
// (`device` = the equalizer's device, -1: any). Errors name the image ("in", "out").
Status check_image(const Image& image, const char* what, int device);
// Plane i of `image` as the core's PlaneRef (its memory, its pitch resolved).
PlaneRef plane_ref(const Image& image, int i);
// The FFmpeg range tag of an image (video::ColorTags::range): 0 unknown, 1 limited, 2 full.
int range_tag(ColorRange r) noexcept;

}  // namespace histeq::api
