// CUDA-GL interop for video planes: GL textures are registered with CUDA once, then each frame the
// equalized device planes are copied into them while mapped, so the picture never leaves the GPU.
// The only CUDA code that knows about GL; it knows nothing of SDL or windows.
//
// Thread: the GL context's thread, with that context current. The CUDA stream passed to write()
// orders the copies; unmapping makes GL's later use of the textures wait for them.
#pragma once

#include <cuda_runtime_api.h>

#include <vector>

#include "core/cuda/status.h"
#include "core/gl/texture.h"

struct cudaGraphicsResource;

namespace histeq::gl {

class CudaGlTextures {
 public:
  CudaGlTextures() = default;
  // Registers each texture for CUDA writes (write-discard: CUDA replaces the whole content).
  // The textures must outlive this object.
  static Result<CudaGlTextures> register_textures(const std::vector<const Texture2D*>& textures);
  ~CudaGlTextures() { reset(); }
  CudaGlTextures(CudaGlTextures&& o) noexcept : res_(std::move(o.res_)), tex_(std::move(o.tex_)) { o.res_.clear(); }
  CudaGlTextures& operator=(CudaGlTextures&& o) noexcept {
    if (this != &o) {
      reset();
      res_ = std::move(o.res_);
      tex_ = std::move(o.tex_);
      o.res_.clear();
    }
    return *this;
  }
  CudaGlTextures(const CudaGlTextures&) = delete;
  CudaGlTextures& operator=(const CudaGlTextures&) = delete;

  // Maps every texture (one map call), copies device plane i into texture i on `stream`, unmaps.
  // planes.size() must equal the number of textures; each plane must match its texture's size and
  // sample width.
  Status write(const std::vector<PlaneRef>& planes, cudaStream_t stream);
  size_t size() const noexcept { return res_.size(); }
  void reset() noexcept;

 private:
  std::vector<cudaGraphicsResource*> res_;
  std::vector<const Texture2D*> tex_;
};

}  // namespace histeq::gl
