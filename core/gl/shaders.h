// The GLSL sources of shaders/, embedded at build time (shaders/embed.cmake).
#pragma once
#include <string>

namespace histeq::gl {
// The source of shaders/<name> (e.g. "yuv_to_rgb.frag"), or nullptr if there is no such file.
const char* shader_source(const std::string& name);
}  // namespace histeq::gl
