#include "core/gl/cuda_gl.h"

// epoxy's gl.h (through cuda_gl.h) must come before cuda_gl_interop.h, which includes <GL/gl.h>.
#include <cuda_gl_interop.h>

#include "core/cuda/check.h"

namespace histeq::gl {

Result<CudaGlTextures> CudaGlTextures::register_textures(const std::vector<const Texture2D*>& textures) {
  CudaGlTextures r;
  for (const Texture2D* t : textures) {
    cudaGraphicsResource* res = nullptr;
    HISTEQ_CUDA_TRY(cudaGraphicsGLRegisterImage(&res, t->id(), GL_TEXTURE_2D, cudaGraphicsRegisterFlagsWriteDiscard));
    r.res_.push_back(res);
    r.tex_.push_back(t);
  }
  return r;
}

Status CudaGlTextures::write(const std::vector<PlaneRef>& planes, cudaStream_t stream) {
  if (planes.size() != res_.size()) return HISTEQ_ERROR(Code::invalid_argument, "one plane per registered texture");
  for (size_t i = 0; i < planes.size(); ++i) {
    const PlaneRef& p = planes[i];
    if (!p.on_device()) return HISTEQ_ERROR(Code::invalid_argument, "interop writes take device planes");
    if (p.width != tex_[i]->width() || p.height != tex_[i]->height() || p.bytes_per_sample != tex_[i]->bytes_per_sample())
      return HISTEQ_ERROR(Code::invalid_argument, "plane does not match its texture");
  }
  HISTEQ_CUDA_TRY(cudaGraphicsMapResources(static_cast<int>(res_.size()), res_.data(), stream));
  Status st;
  for (size_t i = 0; i < res_.size() && st.is_ok(); ++i) {
    cudaArray_t array = nullptr;
    st = HISTEQ_CUDA_STATUS(cudaGraphicsSubResourceGetMappedArray(&array, res_[i], 0, 0));
    if (!st) break;
    const PlaneRef& p = planes[i];
    st = HISTEQ_CUDA_STATUS(cudaMemcpy2DToArrayAsync(array, 0, 0, p.data, p.pitch, p.row_bytes(), p.height,
                                                     cudaMemcpyDeviceToDevice, stream));
  }
  // Unmap even after a failed copy, so the textures go back to GL.
  const Status unmap = HISTEQ_CUDA_STATUS(cudaGraphicsUnmapResources(static_cast<int>(res_.size()), res_.data(), stream));
  return st.is_ok() ? unmap : st;
}

void CudaGlTextures::reset() noexcept {
  for (cudaGraphicsResource* r : res_) (void)cudaGraphicsUnregisterResource(r);
  res_.clear();
  tex_.clear();
}

}  // namespace histeq::gl
