# The Debian package of what cmake/install.cmake installs, under /usr:
#   cpack -G DEB --config build/CPackConfig.cmake        ->  histeq_VERSION_amd64.deb
# The CLI, libhisteq with its headers, CMake package and histeq.pc, the private libhisteq-core and
# the CUDA runtime (LIBDIR/histeq/), the GStreamer element (LIBDIR/gstreamer-1.0/), the man page, the
# bash, zsh and fish completions, the scripts of share/histeq and share/doc/histeq/copyright.
#
# Depends: from dpkg-shlibdeps over the package's ELF files (FFmpeg, GStreamer, SDL2, ... as this
# build linked them). The CUDA runtime is inside the package (Debian has none of CUDA 13); the
# driver's libcuda is loaded at run time when there is one (histeq runs on the CPU without), so it
# is no dependency. Binaries are stripped (CPACK_STRIP_FILES strips the targets installed, never
# the runtime's file, which its licence wants unmodified). tests/package/ builds the package,
# unpacks it with dpkg -x and runs it from there.
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME histeq)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_VENDOR "the histeq developers")
set(HISTEQ_PACKAGE_MAINTAINER "the histeq developers" CACHE STRING "The Maintainer field of the .deb (Name <address>)")
set(CPACK_PACKAGE_CONTACT "${HISTEQ_PACKAGE_MAINTAINER}")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "real-time GPU video histogram equalization")
set(CPACK_DEBIAN_PACKAGE_DESCRIPTION "real-time GPU video histogram equalization
 histeq equalizes the luma of videos (global, contrast-limited, tiled CLAHE, with a temporal filter
 that adds no flicker) on an NVIDIA GPU with CUDA, or on the CPU without one, and compares GPU
 histogram kernels from the literature. This package holds the command line histeq (export, play,
 quality, bench), the C and C++ library libhisteq with its headers, CMake package and pkg-config file,
 and the GStreamer element histeq. The GPU needs NVIDIA's driver for CUDA 13 (580 or later).")
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)  # histeq_0.1.0_amd64.deb
set(CPACK_DEBIAN_PACKAGE_SECTION video)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
# dpkg-shlibdeps finds the package's own libraries through their RUNPATH ($ORIGIN): these folders
# of the package tree are where it looks for them.
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS_PRIVATE_DIRS usr/${CMAKE_INSTALL_LIBDIR} usr/${HISTEQ_INSTALL_PRIVATE_DIR})
# histeq quality runs share/histeq/quality.py (python3, numpy); the rest of its peers are optional.
set(CPACK_DEBIAN_PACKAGE_RECOMMENDS "python3, python3-numpy")
set(CPACK_DEBIAN_PACKAGE_SUGGESTS "ffmpeg, python3-opencv, python3-skimage, python3-matplotlib, gstreamer1.0-tools")
set(CPACK_STRIP_FILES ON)
set(CPACK_PACKAGE_DIRECTORY ${PROJECT_BINARY_DIR}/package)
include(CPack)
