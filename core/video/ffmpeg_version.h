// The FFmpeg libraries histeq uses: the versions it was compiled against and the ones it runs with
// (histeq --version, histeq info: the first facts of a bug report).
#pragma once

#include <string>
#include <vector>

namespace histeq::video {

struct FfmpegLibrary {
  std::string name;      // "libavcodec"
  std::string compiled;  // "59.37.100": the headers' LIBAVCODEC_VERSION
  std::string running;   // avcodec_version() of the library loaded (equal when linked statically)
};

// libavutil, libavcodec, libavformat, libavdevice, libswscale, libswresample, in that order.
// Thread-safe; loads nothing (the libraries are linked).
std::vector<FfmpegLibrary> ffmpeg_libraries();

// The running FFmpeg's release as its build names it (av_version_info(): "5.1.6-0+deb12u1").
std::string ffmpeg_release();

}  // namespace histeq::video
