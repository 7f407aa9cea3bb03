# Embeds the GLSL files of shaders/ into a C++ source at build time, so the binaries carry their
# shaders while the GLSL stays in its own files. Run as: cmake -DOUT=... -DSRC_DIR=... -P embed.cmake
file(GLOB files RELATIVE "${SRC_DIR}" "${SRC_DIR}/*.vert" "${SRC_DIR}/*.frag")
list(SORT files)
set(body "// Generated from shaders/ by shaders/embed.cmake. Do not edit.\n#include \"core/gl/shaders.h\"\n\nnamespace histeq::gl {\n\nconst char* shader_source(const std::string& name) {\n")
foreach(f ${files})
  file(READ "${SRC_DIR}/${f}" text)
  string(APPEND body "  if (name == \"${f}\") return R\"histeq_glsl(${text})histeq_glsl\";\n")
endforeach()
string(APPEND body "  return nullptr;\n}\n\n}  // namespace histeq::gl\n")
file(WRITE "${OUT}.tmp" "${body}")
file(COPY_FILE "${OUT}.tmp" "${OUT}" ONLY_IF_DIFFERENT)
file(REMOVE "${OUT}.tmp")
