// What the C++ examples share: their CONTROL=VALUE arguments as histeq::Settings, and a y4m
// video's frame as a histeq::Image (format, size, colour range; the caller sets the planes).
#pragma once

#include <histeq/histeq.hpp>

#include <string>

#include "y4m.h"

// argv[first..] ("clip-limit=2", "mode=clahe") on histeq's defaults.
inline histeq::Result<histeq::Settings> settings_from_args(int argc, char** argv, int first) {
  histeq::Settings settings;
  for (int i = first; i < argc; ++i) {
    const std::string arg = argv[i];
    const size_t eq = arg.find('=');
    const histeq::Status st = settings.set(arg.substr(0, eq), eq == std::string::npos ? "" : arg.substr(eq + 1));
    if (!st) return st;
  }
  return settings;
}

inline histeq::Image image_of(const y4m_video& v, histeq::Memory memory) {
  histeq::Image image;
  const bool gray = v.planes == 1, deep = v.bit_depth > 8;
  image.format = gray ? (deep ? histeq::PixelFormat::gray10 : histeq::PixelFormat::gray8)
                      : (deep ? histeq::PixelFormat::yuv420p10 : histeq::PixelFormat::yuv420p);
  image.width = v.width;
  image.height = v.height;
  image.memory = memory;
  image.range = v.range == 2 ? histeq::ColorRange::full : v.range == 1 ? histeq::ColorRange::limited : histeq::ColorRange::unspecified;
  return image;
}

// The time of frame n (the temporal filter's clock, as `histeq export` takes it from the timestamps).
inline double frame_time(const y4m_video& v, long n) { return static_cast<double>(n) * v.fps_den / v.fps_num; }
