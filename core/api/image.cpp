// Images of the public API: their geometry, and the checks that turn a caller's mistake into one
// line instead of a read out of bounds.
#include <cuda_runtime_api.h>

#include <string>

#include "core/api/api_impl.h"

namespace histeq::api {
namespace {

const char* format_name(PixelFormat f) {
  switch (f) {
    case PixelFormat::gray8: return "gray8";
    case PixelFormat::gray10: return "gray10";
    case PixelFormat::yuv420p: return "yuv420p";
    case PixelFormat::yuv420p10: return "yuv420p10";
    case PixelFormat::nv12: return "nv12";
    case PixelFormat::p010: return "p010";
    case PixelFormat::yuv444p: return "yuv444p";
    case PixelFormat::yuv444p10: return "yuv444p10";
    case PixelFormat::yuv422p: return "yuv422p";
    case PixelFormat::yuv422p10: return "yuv422p10";
  }
  return "?";
}

bool known(PixelFormat f) { return static_cast<unsigned>(f) <= static_cast<unsigned>(PixelFormat::yuv422p10); }

Status bad(const std::string& m) { return Status(ErrorCode::invalid_argument, m); }

// Where the CUDA runtime says `p` lives; a host pointer unknown to CUDA is host memory.
Status check_memory(const Image& im, const void* p, const std::string& what, int device) {
  cudaPointerAttributes a{};
  const cudaError_t e = cudaPointerGetAttributes(&a, p);
  if (e != cudaSuccess) {
    (void)cudaGetLastError();  // no device or driver: only host memory is possible
    if (im.memory == Memory::device) return Status(ErrorCode::unsupported, what + " is device memory, but no CUDA device is usable");
    return Status();
  }
  const bool on_device = a.type == cudaMemoryTypeDevice || a.type == cudaMemoryTypeManaged;
  if (im.memory == Memory::device && !on_device) return bad(what + " is tagged device memory but is host memory");
  if (im.memory == Memory::host && a.type == cudaMemoryTypeDevice) return bad(what + " is tagged host memory but is device memory");
  if (im.memory != Memory::device) return Status();
  if (a.type == cudaMemoryTypeDevice && a.device != im.device)
    return bad(what + " is tagged CUDA device " + std::to_string(im.device) + " but is on device " + std::to_string(a.device));
  if (device >= 0 && im.device != device)
    return bad(what + " is on CUDA device " + std::to_string(im.device) + ", the equalizer's is " + std::to_string(device));
  return Status();
}

}  // namespace

int Image::plane_count() const noexcept {
  if (format == PixelFormat::gray8 || format == PixelFormat::gray10) return 1;
  return format == PixelFormat::nv12 || format == PixelFormat::p010 ? 2 : 3;
}
int Image::bit_depth() const noexcept { return bytes_per_sample() == 1 ? 8 : 10; }
int Image::bytes_per_sample() const noexcept {
  return format == PixelFormat::gray8 || format == PixelFormat::yuv420p || format == PixelFormat::nv12 ||
                 format == PixelFormat::yuv444p || format == PixelFormat::yuv422p
             ? 1
             : 2;
}

bool is_gray(PixelFormat f) noexcept { return f == PixelFormat::gray8 || f == PixelFormat::gray10; }

video::FrameFormat frame_format(const Image& im) {
  video::FrameFormat f;
  f.width = im.width;
  f.height = im.height;
  f.bit_depth = im.bit_depth();
  f.layout = im.format == PixelFormat::nv12 || im.format == PixelFormat::p010 ? video::PlaneLayout::semi_planar
                                                                               : video::PlaneLayout::planar;
  if (im.format == PixelFormat::yuv444p || im.format == PixelFormat::yuv444p10) f.chroma_shift_x = f.chroma_shift_y = 0;
  if (im.format == PixelFormat::yuv422p || im.format == PixelFormat::yuv422p10) f.chroma_shift_y = 0;
  return f;
}

PlaneRef plane_ref(const Image& im, int i) {
  const video::FrameFormat f = frame_format(im);
  PlaneRef r;
  r.data = im.planes[i].data;
  r.width = f.plane_width(i);
  r.height = f.plane_height(i);
  r.bytes_per_sample = im.bytes_per_sample();
  r.pitch = im.planes[i].pitch != 0 ? im.planes[i].pitch : r.row_bytes();
  r.bit_depth = f.storage_depth();
  r.memory = im.memory == Memory::device ? MemoryKind::device : MemoryKind::host;
  return r;
}

int range_tag(ColorRange r) noexcept {
  // FFmpeg's AVColorRange: AVCOL_RANGE_MPEG = 1 (limited), AVCOL_RANGE_JPEG = 2 (full).
  return r == ColorRange::full ? 2 : r == ColorRange::limited ? 1 : 0;
}

Status check_image(const Image& im, const char* what, int device) {
  const std::string w = what;
  if (!known(im.format)) return bad(w + ": unknown pixel format " + std::to_string(static_cast<int>(im.format)));
  if (im.width <= 0 || im.height <= 0 || im.width > (1 << 16) || im.height > (1 << 16))
    return bad(w + ": size " + std::to_string(im.width) + "x" + std::to_string(im.height) + " is not 1..65536 on each axis");
  if (im.memory != Memory::host && im.memory != Memory::device) return bad(w + ": unknown memory kind");
  if (im.range != ColorRange::unspecified && im.range != ColorRange::limited && im.range != ColorRange::full)
    return bad(w + ": unknown colour range");
  for (int i = 0; i < im.plane_count(); ++i) {
    const std::string p = w + " plane " + std::to_string(i) + " (" + format_name(im.format) + ")";
    if (im.planes[i].data == nullptr) return bad(p + " is null");
    const PlaneRef r = plane_ref(im, i);
    if (r.pitch < r.row_bytes())
      return bad(p + ": pitch " + std::to_string(r.pitch) + " bytes is less than a row (" + std::to_string(r.row_bytes()) + " bytes)");
    if (r.pitch % static_cast<size_t>(r.bytes_per_sample) != 0 ||
        reinterpret_cast<uintptr_t>(r.data) % static_cast<uintptr_t>(r.bytes_per_sample) != 0)
      return bad(p + ": 16-bit samples need an even address and pitch");
    const Status m = check_memory(im, r.data, p, device);
    if (!m) return m;
  }
  return Status();
}

}  // namespace histeq::api
