# Writes OUT, a header defining HISTEQ_GIT_DESCRIBE: `git describe --tags --always --dirty` of the
# source tree ("v0.1.0-3-g0a38245ab1c2-dirty", or the commit alone without a tag), "unknown" outside
# a git checkout of it or without git. Run by every build (app/CMakeLists.txt), so the commit is the
# one built, not the one configured; OUT is rewritten only when the text changes, so nothing is
# recompiled otherwise.
#   cmake -DSOURCE_DIR=src -DOUT=path/histeq_git.h -P git_describe.cmake
cmake_minimum_required(VERSION 3.25)

set(describe unknown)
find_program(GIT_EXECUTABLE git)
if(GIT_EXECUTABLE)
  # Only the source tree's own repository: a tarball unpacked inside another checkout is "unknown".
  execute_process(COMMAND ${GIT_EXECUTABLE} -C ${SOURCE_DIR} rev-parse --show-toplevel
                  OUTPUT_VARIABLE top RESULT_VARIABLE rc ERROR_QUIET OUTPUT_STRIP_TRAILING_WHITESPACE)
  if(rc EQUAL 0)
    file(REAL_PATH "${top}" top)
    file(REAL_PATH "${SOURCE_DIR}" src)
    if(top STREQUAL src)
      execute_process(COMMAND ${GIT_EXECUTABLE} -C ${SOURCE_DIR} describe --tags --always --dirty --abbrev=12
                      OUTPUT_VARIABLE out RESULT_VARIABLE rc ERROR_QUIET OUTPUT_STRIP_TRAILING_WHITESPACE)
      if(rc EQUAL 0 AND out MATCHES "^[A-Za-z0-9._+-]+$")
        set(describe "${out}")
      endif()
    endif()
  endif()
endif()

file(WRITE ${OUT}.new "// Written by cmake/git_describe.cmake at build time; do not edit.\n#define HISTEQ_GIT_DESCRIBE \"${describe}\"\n")
file(COPY_FILE ${OUT}.new ${OUT} ONLY_IF_DIFFERENT)
file(REMOVE ${OUT}.new)
