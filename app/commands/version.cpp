// histeq --version, and the top of histeq info: what this binary is and what it runs with, as a bug
// report needs it. The build's facts come from CMake (app/CMakeLists.txt, cmake/git_describe.cmake):
// HISTEQ_GIT_DESCRIBE (histeq_git.h, written at every build), HISTEQ_VERSION, HISTEQ_BUILT_* and
// HISTEQ_LINKED_*; the running libraries are asked.
#include <cuda_runtime_api.h>

#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>

#include "app/commands/commands.h"
#include "core/cuda/device.h"
#include "core/video/ffmpeg_version.h"
#include "histeq_git.h"

namespace histeq::app {
namespace {

// The kernel module's version ("580.82.07"), "" without NVIDIA's driver.
std::string nvidia_module_version() {
  std::ifstream f("/proc/driver/nvidia/version");
  std::string line;
  if (!std::getline(f, line)) return "";
  const size_t at = line.find("Kernel Module");
  if (at == std::string::npos) return "";
  std::istringstream words(line.substr(at + 13));
  std::string v;
  words >> v;
  return v;
}

std::string cuda_lines() {
  int runtime = 0, driver = 0;
  // Neither call creates a context: --version stays instant on a machine with a GPU.
  const bool have_runtime = cudaRuntimeGetVersion(&runtime) == cudaSuccess && runtime > 0;
  const bool have_driver = cudaDriverGetVersion(&driver) == cudaSuccess && driver > 0;
  std::string out = "CUDA runtime     " + (have_runtime ? cuda::version_string(runtime) : std::string("unknown")) +
                    " (compiled against " + cuda::version_string(CUDART_VERSION) + ")\n";
  if (!have_driver) return out + "CUDA driver      none\n";
  const std::string module = nvidia_module_version();
  return out + "CUDA driver      " + cuda::version_string(driver) + (module.empty() ? "" : " (NVIDIA " + module + ")") + "\n";
}

const char* yes_no(bool b) { return b ? "yes" : "no"; }

}  // namespace

std::string version_text() {
  std::string out = std::string("histeq ") + HISTEQ_VERSION + "\n";
  out += std::string("git commit       ") + HISTEQ_GIT_DESCRIBE + "\n";
  out += "FFmpeg           " + video::ffmpeg_release() + (HISTEQ_LINKED_FFMPEG_STATIC ? " (linked statically)" : "") + "\n";
  for (const video::FfmpegLibrary& l : video::ffmpeg_libraries()) {
    char line[128];
    std::snprintf(line, sizeof line, "  %-15s%s (compiled against %s)\n", l.name.c_str(), l.running.c_str(), l.compiled.c_str());
    out += line;
  }
  out += cuda_lines();
  out += std::string("built with       window ") + yes_no(HISTEQ_HAVE_GUI) + ", GStreamer element " + yes_no(HISTEQ_BUILT_GSTREAMER) +
         ", Python module " + yes_no(HISTEQ_BUILT_PYTHON) + "\n";
  out += std::string("core             ") +
         (HISTEQ_LINKED_SHARED_CORE ? "libhisteq-core.so (shared with libhisteq), CUDA runtime shared"
                                    : "linked in, CUDA runtime static") +
         "\n";
  out.pop_back();  // the last line's newline: the caller ends it
  return out;
}

}  // namespace histeq::app
