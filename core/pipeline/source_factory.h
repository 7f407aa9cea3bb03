// The source factory: the one place that turns what the user named as input into a video::Source.
// Every front end (play, the player window, export and batch through Exporter, quality) asks here,
// so an input means the same thing everywhere and fails with the same line.
//
//   input                     kind        opened as
//   ""                        synthetic   video::open_synthetic(request.synthetic)
//   "" + webcam [device]      webcam      FileSource on the device, /dev/video0 by default (V4L2)
//   "/dev/videoN"             webcam      FileSource on that device (V4L2)
//   "-"                       standard    FileSource on standard input: a file read to its end
//                                         (every frame, at the reader's pace); live with `live`
//   "udp://...", "rtsp://..." network     FileSource on the URL (live)
//   anything else             file        FileSource on the path (live with `live`: a FIFO fed in real time)
//
// The decode choice (NVDEC or software) and the live options travel in the request to FileSource.
// A live source runs at its own pace and the pipeline drops frames rather than fall behind it
// (pipeline.h); a pipe is not live unless `live` asks for it, so nothing is dropped from it.
//
// Errors (Status, the message naming the input): invalid_argument for a request that contradicts
// itself (an input and the webcam together, "give either an input file or --webcam, not both"),
// and FileSource's and open_synthetic's own errors unchanged. core/: nothing is printed.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "core/cuda/status.h"
#include "core/image/plane.h"
#include "core/pipeline/pipeline.h"
#include "core/video/hw_decode.h"
#include "core/video/source.h"

namespace histeq::video {
class FileSource;
}

namespace histeq::pipeline {

enum class SourceKind { file, standard_input, network, webcam, synthetic };
// "file", "standard input", "network stream", "webcam", "synthetic".
const char* source_kind_name(SourceKind kind) noexcept;

struct SourceRequest {
  std::string input;   // a path, a URL, "-" or /dev/videoN; "" = the synthetic source (the webcam with `webcam`)
  bool webcam = false; // --webcam: capture from `device`; `input` must then be empty
  std::string device;  // with webcam: the V4L2 device ("" = /dev/video0)
  video::SyntheticOptions synthetic;  // size, rate, depth, length, where it is drawn: for the synthetic source
  // FileSource's options: the decode choice, the frames the pipeline may hold (NVDEC), the live
  // timeout, the seek preroll, decoder threads. Its `webcam` flag is set from the kind, not read.
  video::HwDecode hwdec = video::HwDecode::none;
  // The CUDA device of the pipeline the source feeds (-1: the calling thread's current one): NVDEC
  // decodes there and the GPU synthetic source draws there (PipelineOptions' equalizer.device).
  int cuda_device = -1;
  // --live: read standard input or a file as a live stream (FileSourceOptions::live); network URLs
  // and webcams are live without it.
  bool live = false;
  int frames_held = 12;
  double live_timeout_s = 5.0;
  double seek_preroll_s = 0;
  int decoder_threads = 0;
};

// What `request` asks for, without opening anything. Errors: invalid_argument when it contradicts
// itself ("give either an input file or --webcam, not both").
Result<SourceKind> classify(const SourceRequest& request);

struct OpenedSource {
  SourceKind kind = SourceKind::synthetic;
  std::unique_ptr<video::Source> source;
  // The same object when it is read through FFmpeg (every kind but synthetic), for what only a
  // file source has: its streams to copy, its native layout, its packets. Owned by `source`.
  video::FileSource* file = nullptr;
};

// Opens the source `request` asks for, its GPU resources on request.cuda_device (the calling
// thread's current device is left as it was). Errors: classify()'s, then the source's own
// ("clip.mp4: no video stream", "/dev/video9: no webcam here (no such device)", ...).
Result<OpenedSource> open_source(const SourceRequest& request);

// Up to `count` frames' luma as 8-bit host planes (deeper samples keep their top 8 bits), from
// whatever `request` names: spread evenly over the input (first, ..., last) when its length is
// known, else its first frames. What the lab measures on real content (`histeq bench FILE`,
// `histeq quality --bench --input`). At least one frame, or an error naming the input.
Result<std::vector<Plane8>> read_luma_frames(const SourceRequest& request, int count);

// The frames a pipeline with `opts` holds at once (both queues, the frames in flight, one in the
// sink): what an NVDEC decoder's pool must have spare (SourceRequest::frames_held).
int frames_held_by(const PipelineOptions& opts) noexcept;

// Whether a file name looks like a video by its extension (mp4, mkv, mov, avi, webm, ts, ...; any
// case): the one list behind a batch's folder scan and the player's file browser.
bool is_video_file_name(const std::string& name);
// The extensions for a message: "mp4, mkv, mov, avi, webm, ts, ...".
const char* video_extensions_hint() noexcept;

}  // namespace histeq::pipeline
