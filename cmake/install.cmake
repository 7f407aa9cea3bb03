# What `cmake --install build --prefix P` installs, relocatable (P may be moved). LIBDIR is
# lib/<triplet> on Debian (lib/x86_64-linux-gnu; the top CMakeLists.txt), lib elsewhere.
#   P/bin/histeq                                   the command line; RUNPATH $ORIGIN/../LIBDIR/histeq
#   P/LIBDIR/libhisteq.so.VERSION                  the public API (target histeq_lib), SONAME with the
#                                                  major.minor version; RUNPATH $ORIGIN/histeq
#   P/LIBDIR/histeq/libhisteq-core.so.VERSION      the core, private: the one copy the CLI and
#                                                  libhisteq share (HISTEQ_SHARED_CORE); RUNPATH $ORIGIN
#   P/LIBDIR/histeq/libcudart.so.MAJOR             the CUDA runtime they share, NVIDIA's file unmodified
#   P/LIBDIR/gstreamer-1.0/libgsthisteq.so         the GStreamer element (app/gstreamer/)
#   P/include/histeq/                              the public headers (histeq.hpp: C++, histeq.h: C)
#   P/LIBDIR/cmake/histeq/                         find_package(histeq) -> histeq::histeq
#   P/LIBDIR/pkgconfig/histeq.pc                   pkg-config --cflags --libs histeq
#   P/share/histeq/                                the scripts the commands run (quality.py, plot_paper.py),
#                                                  found relative to the binary (app/commands/data_files.cpp)
#   P/share/man/man1/histeq.1                      from the CLI's own help (help2man), at build time
#   P/share/bash-completion/completions/histeq     completion from the CLI (`histeq completion bash`),
#   P/share/zsh/vendor-completions/_histeq         zsh's and fish's likewise, at build time
#   P/share/fish/vendor_completions.d/histeq.fish
#   P/share/doc/histeq/copyright                   the licences, in Debian's format (cmake/copyright.in)
# Included from the top CMakeLists.txt after every target exists. tests/install/ installs into a
# temporary prefix and builds examples/ against it; cmake/package.cmake makes the .deb of the same.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set(HISTEQ_INSTALL_DATA_DIR ${CMAKE_INSTALL_DATADIR}/histeq)
set(HISTEQ_INSTALL_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/histeq)
set(HISTEQ_INSTALL_PRIVATE_DIR ${CMAKE_INSTALL_LIBDIR}/histeq)

# ---- the command line and its data files -------------------------------------------------------
# The binary finds share/histeq relative to itself; the build tree's binary falls back to the
# source tree (it has no share/ beside it).
file(RELATIVE_PATH _histeq_data_rel ${CMAKE_INSTALL_FULL_BINDIR} ${CMAKE_INSTALL_FULL_DATADIR}/histeq)
file(RELATIVE_PATH _histeq_lib_rel ${CMAKE_INSTALL_FULL_BINDIR} ${CMAKE_INSTALL_PREFIX}/${HISTEQ_INSTALL_PRIVATE_DIR})
target_compile_definitions(histeq PRIVATE HISTEQ_DATA_RELDIR="${_histeq_data_rel}" HISTEQ_SOURCE_DIR="${PROJECT_SOURCE_DIR}"
                           HISTEQ_BUILD_EXE_DIR="$<TARGET_FILE_DIR:histeq>")
set_target_properties(histeq PROPERTIES INSTALL_RPATH "$ORIGIN/${_histeq_lib_rel}")
install(TARGETS histeq RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(FILES ${PROJECT_SOURCE_DIR}/bench/quality.py ${PROJECT_SOURCE_DIR}/bench/plot_paper.py
        DESTINATION ${HISTEQ_INSTALL_DATA_DIR})

# ---- the shared core and the CUDA runtime, private to histeq ------------------------------------
if(HISTEQ_SHARED_CORE)
  set_target_properties(histeq_core_shared PROPERTIES INSTALL_RPATH "$ORIGIN")
  install(TARGETS histeq_core_shared LIBRARY DESTINATION ${HISTEQ_INSTALL_PRIVATE_DIR} NAMELINK_SKIP)
  # The toolkit's runtime under its SONAME, unmodified (its licence allows redistribution only so:
  # never stripped, as install(FILES) never is). Debian has no package of CUDA 13's runtime.
  get_target_property(_histeq_cudart CUDA::cudart IMPORTED_LOCATION)
  file(REAL_PATH "${_histeq_cudart}" _histeq_cudart)
  execute_process(COMMAND ${CMAKE_OBJDUMP} -p "${_histeq_cudart}" OUTPUT_VARIABLE _histeq_cudart_soname)
  if(NOT _histeq_cudart_soname MATCHES "SONAME +(libcudart[^\n ]+)")
    message(FATAL_ERROR "histeq: no SONAME in ${_histeq_cudart} (${CMAKE_OBJDUMP} -p)")
  endif()
  set(_histeq_cudart_soname ${CMAKE_MATCH_1})
  install(FILES "${_histeq_cudart}" DESTINATION ${HISTEQ_INSTALL_PRIVATE_DIR} RENAME ${_histeq_cudart_soname})
endif()

# ---- the man page and the shell completions, written by the binary at build time ----------------
find_program(HISTEQ_HELP2MAN help2man)
if(NOT HISTEQ_HELP2MAN)
  message(STATUS "histeq: help2man not found: no man page (scripts/setup.sh installs it)")
endif()
set(_histeq_cli_docs ${PROJECT_BINARY_DIR}/cli_docs)
set(_histeq_cli_outputs ${_histeq_cli_docs}/histeq.bash ${_histeq_cli_docs}/_histeq ${_histeq_cli_docs}/histeq.fish)
if(HISTEQ_HELP2MAN)
  list(APPEND _histeq_cli_outputs ${_histeq_cli_docs}/histeq.1)
endif()
add_custom_command(OUTPUT ${_histeq_cli_outputs}
                   COMMAND ${CMAKE_COMMAND} -E make_directory ${_histeq_cli_docs}
                   COMMAND ${CMAKE_COMMAND} -DHISTEQ=$<TARGET_FILE:histeq> -DOUT_DIR=${_histeq_cli_docs}
                           -DHELP2MAN=${HISTEQ_HELP2MAN} -P ${PROJECT_SOURCE_DIR}/cmake/cli_docs.cmake
                   DEPENDS histeq ${PROJECT_SOURCE_DIR}/cmake/cli_docs.cmake ${PROJECT_SOURCE_DIR}/cmake/man_sections.h2m
                   COMMENT "histeq: the man page and the shell completions from the CLI" VERBATIM)
add_custom_target(histeq_cli_docs ALL DEPENDS ${_histeq_cli_outputs})
install(FILES ${_histeq_cli_docs}/histeq.bash DESTINATION ${CMAKE_INSTALL_DATADIR}/bash-completion/completions
        RENAME histeq)
# zsh: Debian's folder for packages' completions (on zsh's $fpath there); fish: its vendor folder,
# found under every XDG data folder ($XDG_DATA_DIRS: /usr/local/share, /usr/share).
set(HISTEQ_ZSH_COMPLETION_DIR ${CMAKE_INSTALL_DATADIR}/zsh/vendor-completions CACHE STRING "Where zsh's completion _histeq goes")
install(FILES ${_histeq_cli_docs}/_histeq DESTINATION ${HISTEQ_ZSH_COMPLETION_DIR})
install(FILES ${_histeq_cli_docs}/histeq.fish DESTINATION ${CMAKE_INSTALL_DATADIR}/fish/vendor_completions.d)
if(HISTEQ_HELP2MAN)
  install(FILES ${_histeq_cli_docs}/histeq.1 DESTINATION ${CMAKE_INSTALL_MANDIR}/man1)
endif()

# ---- the licences ---------------------------------------------------------------------------------
# share/doc/histeq/copyright: Debian's machine-readable format, MIT for histeq, and what else the
# binaries carry (cmake/copyright.in).
set(HISTEQ_COPYRIGHT_GUI_HOLDERS "")
set(HISTEQ_COPYRIGHT_GUI "")
if(HISTEQ_GUI)
  set(HISTEQ_COPYRIGHT_GUI_HOLDERS "\n 2014-2021 Omar Cornut\n 2014-2022 Sean Barrett")
  set(HISTEQ_COPYRIGHT_GUI "; Dear ImGui with its SDL2 and\n OpenGL 3 backends (MIT), linked statically; stb (public domain or MIT: MIT here), compiled in")
endif()
set(HISTEQ_COPYRIGHT_CUDART "")
if(HISTEQ_SHARED_CORE)
  set(HISTEQ_COPYRIGHT_CORE_FILES "usr/${HISTEQ_INSTALL_PRIVATE_DIR}/libhisteq-core.so.*")
  # NVIDIA's licence of the runtime, shipped beside the copyright file: the toolkit's own copy (a
  # runfile or .deb toolkit has EULA.txt, a pip one its wheel's licence), else where it is published.
  file(GLOB _histeq_cuda_licence "${CUDAToolkit_LIBRARY_ROOT}/EULA.txt" "${CUDAToolkit_BIN_DIR}/../EULA.txt"
       "${CUDAToolkit_LIBRARY_ROOT}/dist-info/nvidia_cuda_runtime*/licenses/License.txt")
  if(_histeq_cuda_licence)
    list(GET _histeq_cuda_licence 0 _histeq_cuda_licence)
  else()
    message(WARNING "histeq: no licence text of the CUDA toolkit (EULA.txt) under ${CUDAToolkit_LIBRARY_ROOT}: "
                    "share/doc/histeq/cuda-runtime-licence.txt names where NVIDIA publishes it")
    set(_histeq_cuda_licence ${PROJECT_BINARY_DIR}/cuda-runtime-licence.txt)
    file(WRITE ${_histeq_cuda_licence} "The CUDA runtime (libcudart) is redistributed under NVIDIA's CUDA Toolkit End User License\n"
               "Agreement, https://docs.nvidia.com/cuda/eula/index.html (its Attachment A lists it as distributable).\n")
  endif()
  install(FILES "${_histeq_cuda_licence}" DESTINATION ${CMAKE_INSTALL_DOCDIR} RENAME cuda-runtime-licence.txt)
  set(HISTEQ_COPYRIGHT_CUDART "Files: usr/${HISTEQ_INSTALL_PRIVATE_DIR}/${_histeq_cudart_soname}
Copyright: NVIDIA Corporation
License: NVIDIA-CUDA-EULA
Comment: The CUDA runtime, which histeq, libhisteq-core and libhisteq share, redistributed unmodified
 as its licence allows (its Attachment A lists it as distributable).

License: NVIDIA-CUDA-EULA
 NVIDIA's End User License Agreement of the CUDA Toolkit; its full text is in
 /usr/${CMAKE_INSTALL_DOCDIR}/cuda-runtime-licence.txt.
")
else()
  set(HISTEQ_COPYRIGHT_CORE_FILES "usr/bin/histeq usr/${CMAKE_INSTALL_LIBDIR}/libhisteq.so.*")
endif()
configure_file(${PROJECT_SOURCE_DIR}/cmake/copyright.in ${PROJECT_BINARY_DIR}/copyright @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/copyright DESTINATION ${CMAKE_INSTALL_DOCDIR})

# ---- the library: libhisteq, its headers, the CMake package and pkg-config ----------------------
if(TARGET histeq_lib)
  get_target_property(_histeq_soversion histeq_lib SOVERSION)
  if(NOT _histeq_soversion)
    set_target_properties(histeq_lib PROPERTIES VERSION ${PROJECT_VERSION} SOVERSION ${PROJECT_VERSION})
  endif()
  set(_histeq_lib_rpath "$ORIGIN")
  if(HISTEQ_SHARED_CORE)
    set(_histeq_lib_rpath "$ORIGIN/histeq")  # libhisteq-core and the CUDA runtime
  endif()
  set_target_properties(histeq_lib PROPERTIES OUTPUT_NAME histeq EXPORT_NAME histeq INSTALL_RPATH "${_histeq_lib_rpath}")
  install(TARGETS histeq_lib EXPORT histeqTargets
          LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
          ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
          INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
  install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/histeq DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}
          FILES_MATCHING PATTERN "*.h" PATTERN "*.hpp")
  install(EXPORT histeqTargets NAMESPACE histeq:: DESTINATION ${HISTEQ_INSTALL_CMAKE_DIR})
  configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/histeqConfig.cmake.in
                                ${PROJECT_BINARY_DIR}/histeqConfig.cmake
                                INSTALL_DESTINATION ${HISTEQ_INSTALL_CMAKE_DIR}
                                PATH_VARS HISTEQ_INSTALL_DATA_DIR)
  # 0.x: a minor version may change the API, so only the same major.minor is compatible.
  write_basic_package_version_file(${PROJECT_BINARY_DIR}/histeqConfigVersion.cmake COMPATIBILITY SameMinorVersion)
  install(FILES ${PROJECT_BINARY_DIR}/histeqConfig.cmake ${PROJECT_BINARY_DIR}/histeqConfigVersion.cmake
          DESTINATION ${HISTEQ_INSTALL_CMAKE_DIR})

  # pkg-config. Libs: libhisteq alone. It is a shared library only (no libhisteq.a), which brings
  # its own dependencies (NEEDED, RUNPATH): so no Requires.private, which would make every
  # `pkg-config --cflags` need FFmpeg's .pc files; Libs.private names what libhisteq.so itself
  # links from the system, for the record. No public header includes FFmpeg or CUDA.
  file(RELATIVE_PATH HISTEQ_PC_PREFIX_FROM_PCDIR ${CMAKE_INSTALL_FULL_LIBDIR}/pkgconfig ${CMAKE_INSTALL_PREFIX})
  string(REGEX REPLACE "/$" "" HISTEQ_PC_PREFIX_FROM_PCDIR "${HISTEQ_PC_PREFIX_FROM_PCDIR}")  # "../../..", not "../../../"
  if(HISTEQ_SHARED_CORE)
    set(HISTEQ_PC_LIBS_PRIVATE "-lstdc++ -lm")  # and its private libhisteq-core and CUDA runtime
  else()
    set(HISTEQ_PC_LIBS_PRIVATE "-lstdc++ -lm -lpthread -ldl -lrt")  # the static CUDA runtime's too
  endif()
  configure_file(${PROJECT_SOURCE_DIR}/cmake/histeq.pc.in ${PROJECT_BINARY_DIR}/histeq.pc @ONLY)
  install(FILES ${PROJECT_BINARY_DIR}/histeq.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
else()
  message(STATUS "histeq: no histeq_lib target yet: the library, its headers and packages are not installed")
endif()

# The Debian package of all the above (cpack -G DEB --config build/CPackConfig.cmake).
include(${PROJECT_SOURCE_DIR}/cmake/package.cmake)
