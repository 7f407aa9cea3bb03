#include "core/image/plane.h"

#include <cstring>

#include "core/cuda/check.h"

namespace histeq {
namespace {

Status copy_bytes_2d(PlaneRef src, void* dst, size_t dst_pitch, MemoryKind dst_kind, int bps, int w, int h,
                     cudaStream_t stream) {
  if (src.bytes_per_sample != bps) return HISTEQ_ERROR(Code::invalid_argument, "copy_plane: sample sizes differ");
  if (src.width != w || src.height != h) return HISTEQ_ERROR(Code::invalid_argument, "copy_plane: sizes differ");
  if (w == 0 || h == 0) return Status::ok();
  const size_t row = static_cast<size_t>(w) * bps;
  if (src.memory != MemoryKind::device && dst_kind != MemoryKind::device) {
    // Host to host: no CUDA needed, so this works on machines without a GPU.
    for (int y = 0; y < h; ++y) {
      std::memcpy(static_cast<unsigned char*>(dst) + static_cast<size_t>(y) * dst_pitch,
                  static_cast<const unsigned char*>(src.data) + static_cast<size_t>(y) * src.pitch, row);
    }
    return Status::ok();
  }
  HISTEQ_CUDA_TRY(cudaMemcpy2DAsync(dst, dst_pitch, src.data, src.pitch, row, h, cudaMemcpyDefault, stream));
  return Status::ok();
}

}  // namespace

Status copy_plane(PlaneRef src, PlaneView<uint8_t> dst, cudaStream_t stream) {
  return copy_bytes_2d(src, dst.data, dst.pitch, dst.memory, 1, dst.width, dst.height, stream);
}

Status copy_plane(PlaneRef src, PlaneView<uint16_t> dst, cudaStream_t stream) {
  return copy_bytes_2d(src, dst.data, dst.pitch, dst.memory, 2, dst.width, dst.height, stream);
}

}  // namespace histeq
