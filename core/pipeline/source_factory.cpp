#include "core/pipeline/source_factory.h"

#include <algorithm>
#include <cctype>
#include <cstring>

#include "core/cuda/device.h"
#include "core/video/file_source.h"

namespace histeq::pipeline {
namespace {

bool is_v4l2_device(const std::string& path) { return path.compare(0, 10, "/dev/video") == 0 && path.size() > 10; }

// Containers FFmpeg reads that hold video, and raw elementary streams; a folder's other files
// (pictures, subtitles, notes) are not inputs.
constexpr const char* kVideoExtensions[] = {"mp4", "m4v", "mkv", "mov", "avi",  "webm", "ts", "mts",  "m2ts",
                                            "mpg", "mpeg", "flv", "wmv", "3gp", "ogv",  "mxf", "y4m", "nut",
                                            "vob", "dv",  "ivf", "h264", "hevc"};

}  // namespace

const char* source_kind_name(SourceKind kind) noexcept {
  switch (kind) {
    case SourceKind::file: return "file";
    case SourceKind::standard_input: return "standard input";
    case SourceKind::network: return "network stream";
    case SourceKind::webcam: return "webcam";
    default: return "synthetic";
  }
}

Result<SourceKind> classify(const SourceRequest& r) {
  if (r.webcam) {
    if (!r.input.empty()) return HISTEQ_ERROR(Code::invalid_argument, "give either an input file or --webcam, not both");
    return SourceKind::webcam;
  }
  if (r.input.empty()) return SourceKind::synthetic;
  if (r.input == "-") return SourceKind::standard_input;
  if (video::is_stream_url(r.input)) return SourceKind::network;
  if (is_v4l2_device(r.input)) return SourceKind::webcam;
  return SourceKind::file;
}

Result<OpenedSource> open_source(const SourceRequest& r) {
  auto kind = classify(r);
  if (!kind) return kind.status();
  OpenedSource out;
  out.kind = *kind;
  const cuda::DeviceScope scope(r.cuda_device);  // the GPU source's buffers and stream there
  if (out.kind == SourceKind::synthetic) {
    auto s = video::open_synthetic(r.synthetic);
    if (!s) return s.status();
    out.source = std::move(s.value());
    return out;
  }
  video::FileSourceOptions fo;
  fo.webcam = out.kind == SourceKind::webcam;
  fo.live = r.live;
  fo.decoder_threads = r.decoder_threads;
  fo.hwdec = r.hwdec;
  fo.cuda_device = r.cuda_device;
  fo.frames_held = r.frames_held;
  fo.live_timeout_s = r.live_timeout_s;
  fo.seek_preroll_s = r.seek_preroll_s;
  const std::string path = r.webcam ? (r.device.empty() ? "/dev/video0" : r.device) : r.input;
  auto s = video::FileSource::open(path, fo);
  if (!s) return s.status();
  out.file = s->get();
  out.source = std::move(s.value());
  return out;
}

int frames_held_by(const PipelineOptions& opts) noexcept {
  return 2 * opts.queue_frames + std::max(2, opts.equalizer.frames_in_flight) + 1;
}

bool is_video_file_name(const std::string& name) {
  const size_t dot = name.find_last_of("./");
  if (dot == std::string::npos || name[dot] != '.' || dot + 1 == name.size() || dot == 0 || name[dot - 1] == '/') return false;
  std::string e = name.substr(dot + 1);
  std::transform(e.begin(), e.end(), e.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return std::any_of(std::begin(kVideoExtensions), std::end(kVideoExtensions), [&](const char* x) { return e == x; });
}

const char* video_extensions_hint() noexcept { return "mp4, mkv, mov, avi, webm, ts, ..."; }

}  // namespace histeq::pipeline
