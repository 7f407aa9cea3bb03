#include "core/video/ffmpeg_version.h"

extern "C" {
#include <libavcodec/avcodec.h>
#include <libavdevice/avdevice.h>
#include <libavformat/avformat.h>
#include <libavutil/avutil.h>
#include <libswresample/swresample.h>
#include <libswscale/swscale.h>
}

namespace histeq::video {
namespace {

std::string version_text(unsigned v) {
  return std::to_string(AV_VERSION_MAJOR(v)) + "." + std::to_string(AV_VERSION_MINOR(v)) + "." + std::to_string(AV_VERSION_MICRO(v));
}

}  // namespace

std::vector<FfmpegLibrary> ffmpeg_libraries() {
  return {
      {"libavutil", version_text(LIBAVUTIL_VERSION_INT), version_text(avutil_version())},
      {"libavcodec", version_text(LIBAVCODEC_VERSION_INT), version_text(avcodec_version())},
      {"libavformat", version_text(LIBAVFORMAT_VERSION_INT), version_text(avformat_version())},
      {"libavdevice", version_text(LIBAVDEVICE_VERSION_INT), version_text(avdevice_version())},
      {"libswscale", version_text(LIBSWSCALE_VERSION_INT), version_text(swscale_version())},
      {"libswresample", version_text(LIBSWRESAMPLE_VERSION_INT), version_text(swresample_version())},
  };
}

std::string ffmpeg_release() {
  const char* v = av_version_info();
  return v ? v : "unknown";
}

}  // namespace histeq::video
