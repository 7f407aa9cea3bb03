#include "core/cuda/status.h"

#include <cstring>

#include "core/cuda/check.h"

namespace histeq {

const char* code_name(Code c) noexcept {
  switch (c) {
    case Code::ok: return "ok";
    case Code::invalid_argument: return "invalid argument";
    case Code::unsupported: return "unsupported";
    case Code::not_found: return "not found";
    case Code::no_device: return "no CUDA device";
    case Code::cuda_error: return "CUDA error";
    case Code::io_error: return "I/O error";
    case Code::out_of_memory: return "out of memory";
    case Code::internal: return "internal error";
    case Code::cancelled: return "cancelled";
  }
  return "unknown";
}

std::string Status::to_string() const {
  if (is_ok()) return "ok";
  std::string s = message_.empty() ? std::string(code_name(code_)) : message_;
  // Where it failed matters for faults (CUDA, memory, bugs), not for a user's bad request.
  const bool fault = code_ == Code::cuda_error || code_ == Code::internal || code_ == Code::out_of_memory;
  if (file_ != nullptr && fault) {
    // Keep the path from the source root: "core/cuda/buffer.cpp", not the builder's absolute path.
    const char* f = file_;
    for (const char* root : {"/core/", "/app/", "/bench/", "/tests/"}) {
      if (const char* p = std::strstr(file_, root)) { f = p + 1; break; }
    }
    s += " (" + std::string(f) + ":" + std::to_string(line_) + ")";
  }
  return s;
}

namespace cuda {

Status make_cuda_status(cudaError_t err, const char* call, const char* file, int line) {
  // Clear the sticky "last error" for non-sticky errors so the next call starts clean.
  (void)cudaGetLastError();
  const Code code = (err == cudaErrorMemoryAllocation)                                  ? Code::out_of_memory
                    : (err == cudaErrorNoDevice || err == cudaErrorInsufficientDriver) ? Code::no_device
                                                                                        : Code::cuda_error;
  return Status(code, std::string(call) + ": " + cudaGetErrorName(err) + " (" + cudaGetErrorString(err) + ")",
                file, line);
}

}  // namespace cuda
}  // namespace histeq
