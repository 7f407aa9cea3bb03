// OpenGL 3.3 core through libepoxy, which resolves entry points for GLX (SDL windows) and EGL
// (headless tests) alike. Include this before any other GL header (cuda_gl_interop.h included).
#pragma once
#include <epoxy/gl.h>
