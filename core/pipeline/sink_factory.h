// The sink factory: the one place that turns an output request into a sink for the pipeline.
//
// The sink interface is pipeline::Sink (pipeline.h: consume each frame in order, idle while
// starved). Everything that takes the pipeline's frames is one: the player window
// (app/player's Player), the headless presenter (app/commands/play.cpp), and the outputs made
// here. An OutputSink is a Sink that delivers somewhere and so has an end: finish() once the
// input ended, and whatever it wrote is discarded when it is destroyed unfinished.
//
//   request                         sink
//   path "out.mkv" + encoder        FileSink: VideoWriter into ".out.mkv.XXXXXX.part", renamed on finish()
//   path "-" + format + encoder     FileSink on standard output ("pipe:1"): a container that streams, no
//                                   temporary file; without a format, matroska (said in a note)
//   any path + format "null"        NullSink: frames decoded, equalized and let go, nothing encoded or
//                                   written (ffmpeg's -f null; device frames stay on the device)
//   callback                        CallbackSink: the function gets every frame, in order
//   present (play --headless)       Presenter: frames held to their schedule, as a window would, not drawn
//   (the window)                    app/player's Player, a Sink of its own (SDL and GL stay in app/)
//   (later: a GStreamer buffer)     a sink that hands frames to the element
//
// A file needs the input it continues (its time base, its streams to copy), so it is opened
// after the source, from the OpenedSource; check_output() checks what can be checked before
// (the name), so that a bad output fails before any input is opened. core/: nothing is printed.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "core/cuda/status.h"
#include "core/pipeline/pipeline.h"
#include "core/pipeline/source_factory.h"
#include "core/video/encode_options.h"
#include "core/video/media_time.h"

namespace histeq::pipeline {

// Where a sink wants the equalizer's output frames (EqualizerOptions::download / keep_on_device).
enum class FrameMemory {
  none,    // reads no picture (a headless presenter): the frame may stay wherever it is
  host,    // reads the host frame (an encoder, a callback)
  device,  // reads a device frame with all planes (the window's CUDA-GL interop)
};
// Sets `eq`'s download / keep_on_device for a sink that wants `memory`.
void want_frames(EqualizerOptions& eq, FrameMemory memory) noexcept;

struct SinkCounters {
  int64_t frames = 0;          // frames taken (consume)
  int64_t frames_out = 0;      // frames delivered: a file's video packets (after finish), a callback's calls that returned ok
  int64_t copied_packets = 0;  // a file: the input's other streams' packets copied or cut in (after finish)
};

class OutputSink : public Sink {
 public:
  // Where its frames must be (want_frames()).
  virtual FrameMemory memory() const noexcept = 0;
  // After the pipeline's run ended well: flushes and completes the output (an encoder's trailer,
  // a file renamed into place). Once; consume() is not called after it.
  virtual Status finish() = 0;
  // "libx264 (crf 23) yuv420p mkv, 1 stream copied", "callback".
  virtual std::string description() const = 0;
  // A file that a hard stop must remove while the output is being written ("" for none).
  virtual const std::string& partial_path() const;
  // Any thread; a file's written counts once finish() succeeded.
  virtual SinkCounters counters() const noexcept = 0;
};

// What the encoder of a file output is told.
struct EncoderRequest {
  std::string codec;     // "": follows the input and the container (video::default_encoder)
  int crf = -1;          // -1: the encoder's default
  std::string preset;    // "": the encoder's default
  int threads = 0;       // 0: the encoder's choice
  video::EncoderControl control;  // --bitrate, --encoder-opt, --pix-fmt, --gop, --tag
};

// Each delivered frame, on the pipeline's sink thread, in order. The frame is a host frame (the
// equalized luma, the chroma as it came); the callback may keep the PipelineFrame. An error stops
// the pipeline with it.
using FrameCallback = std::function<Status(PipelineFrame& frame)>;

struct OutputRequest {
  std::string path;          // a file: its extension picks the container; "-": standard output; "" with a callback
  std::string format;        // the container (-f, video::container_named): overrides the extension; "" for "-": matroska
  bool overwrite = false;    // a file: replace one that exists
  EncoderRequest encoder;
  video::StreamChoice streams;  // a file: the input's other streams to write, and how (-map, -an, -sn, --audio-codec)
  // A trimmed export's range (VideoWriter: timestamps from 0 at its start, audio cut to it).
  video::TimeRange range;
  FrameCallback callback;    // a library callback: the frames go here, nothing is written
  // The headless presenter (no path, no callback): each frame is held until its time, as a
  // display would hold it (Pacer: the source's schedule, or a live frame's capture time), then let
  // go; a frame past its time is dropped, one presented late counts as late (FrameRecord), and
  // the present stage is timed. With `realtime` false, as fast as possible.
  bool present = false;
  bool realtime = true;
  double interval_s = 1.0 / 30;  // the source's frame interval
  // Called after each frame a sink took (a file: encoded; the presenter: shown or dropped): the
  // frames so far and the frame's media time. On the sink thread.
  std::function<void(int64_t frames, double time_s)> on_frame;
};

// Whether `request` is -f null: nothing is written, its path is only a name (writes_nothing).
bool writes_nothing(const OutputRequest& request) noexcept;

// The output's name before anything is opened: a file must not be a folder, nor `input`, nor
// exist unless overwrite; "-" (standard output) needs a container that streams. Errors
// (invalid_argument, "<output>: <cause>"): "no output file given (-o OUT)", "is a folder, not a file
// name", "is the input file; choose another output name", "already exists (use -y to overwrite it)";
// a path together with a callback or the presenter; video::container_named's and
// check_pipe_container's (unsupported) for the format; -f null with encoder settings.
Status check_output(const OutputRequest& request, const std::string& input);

// Opens the sink `request` asks for, for the frames of `source`. A file sink picks the layout its
// encoder takes (the source is told: FileSource::set_output_format, before its first frame),
// creates the temporary file beside the output, writes the header, and takes the source's other
// streams (its packet handler). Layout changes and streams left out are lines in `notes`.
// Errors: check_output()'s, "<output>: cannot write there: the folder D does not exist", the
// writer's; a file output from the synthetic source is unsupported.
Result<std::unique_ptr<OutputSink>> open_output(const OutputRequest& request, OpenedSource& source,
                                                std::vector<std::string>& notes);

}  // namespace histeq::pipeline
