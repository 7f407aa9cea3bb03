// Export: a video file in, the same video equalized out. Every frame goes through the pipeline
// (decode thread -> equalizer -> encoder on the caller's thread, the encoder with its own threads);
// audio and subtitle packets are copied untouched as the demuxer meets them (or encoded again, or
// left out: ExportOptions::streams, video/stream_plan.h).
//
// The output is written to a temporary file in the output's folder (".NAME.XXXXXX.part") and
// renamed to NAME only when complete, so NAME never holds a partial file: on an error or a stop
// the temporary file is removed and NAME is left as it was. The output "-" is standard output,
// in a container that streams (sink_factory.h); the input "-" is standard input, read to its end.
//
// The input and the output are opened by the factories (source_factory.h: the input, the decode
// choice; sink_factory.h: the file sink, its encoder and temporary file); Exporter joins them with
// a pipeline, the range and the plan.
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "core/cuda/status.h"
#include "core/pipeline/pipeline.h"
#include "core/video/encode_options.h"
#include "core/video/hw_decode.h"
#include "core/video/media_time.h"
#include "core/video/source.h"

namespace histeq::pipeline {

struct ExportOptions {
  std::string input, output;
  bool overwrite = false;     // replace an existing output
  std::string codec;          // "": follows the input and the container (video::default_encoder: h264 -> libx264, ...)
  int crf = -1;               // -1: the encoder's default
  std::string preset;         // "": the encoder's default
  video::HwDecode hwdec = video::HwDecode::none;  // NVDEC: frames decoded on the GPU (video/hw_decode.h)
  int encoder_threads = 0;    // 0: the encoder's choice (a batch shares the cores among its jobs)
  // The part of the input to write (--start, --duration/--end): video frame-exact (the first
  // frame at or after the start, decoded from the key frame before it; none at or after the
  // end), audio cut to the sample and encoded again, timestamps from 0 at the start (see
  // VideoWriter). Untrimmed: every frame, audio and subtitles copied.
  video::TimeRange range;
  PipelineOptions pipeline;   // kernel, --cpu, strength, passthrough, queue depth, device
  video::EncoderControl encoder_control;  // --bitrate, --encoder-opt, --pix-fmt, --gop, --tag
  video::StreamChoice streams;            // -map, -an, -sn, --audio-codec
  // Pipes: the container (-f: an FFmpeg muxer name or extension; "": from the output's
  // extension, matroska for "-"), and --live (the input read as a live stream: frames dropped
  // rather than waited for, counted in ExportReport::dropped_source).
  std::string format;
  bool live = false;
  // --strict: an input that ends early (ExportReport::short_input) fails the export (io_error,
  // "INPUT: the input ends early: ..."), and nothing is written.
  bool strict = false;
};

struct ExportPlan {
  std::string input_description;   // "h264 (High) 1920x1080 yuv420p, 60 fps, 10.0 s"
  std::string output_description;  // "libx264 yuv420p mp4, 1 stream copied"
  video::FrameFormat format;       // what the pipeline processes
  EqualizerInfo equalizer;
  std::vector<video::StageId> stages;  // the timing rows, in order (Pipeline::stages())
  std::vector<std::string> notes;  // changes of layout, streams left out, the decoder chosen
  std::string decoder;             // "software" or "NVDEC (...)"
  int64_t frames_hint = 0;         // expected frames (exact when frames_exact); of the range when trimmed
  bool frames_exact = false;
  double duration_s = 0;           // of what is written: the range when trimmed
};

struct ExportProgress {
  int64_t frames = 0;     // frames encoded so far
  double media_s = 0;     // media time of the last one, from the start of what is written
  double elapsed_s = 0;   // wall time since run() began
};

struct ExportReport {
  int64_t frames_in = 0;        // frames decoded
  int64_t frames_out = 0;       // frames encoded (video packets written)
  video::SourceCounters source; // corrupt packets, damaged frames, repaired timestamps
  int64_t copied_packets = 0;
  double elapsed_s = 0;
  int64_t dropped_source = 0;   // a live input's frames dropped because the pipeline was full
  int64_t frames_expected = 0;  // what the input should give (ExportPlan::frames_hint; 0 unknown)
  // Why the input ended early, one line for the user ("" when it did not): the demuxer met the end
  // of the data inside a packet or element (FileSource::truncation()), or frames_in falls more
  // than 5% short of frames_expected: by the count alone when the container gives it exactly (an
  // index or header), else only when the time reached falls 5% short of the duration as well (a
  // count from duration x rate is an estimate, off for a variable frame rate). Not for live
  // inputs. The output is complete for what was read: the caller says so and calls it "short".
  std::string short_input;
};

class Exporter {
 public:
  // Checks the output path (not a folder, not the input, not existing unless overwrite), opens the
  // input, picks the layout for the encoder, creates the temporary file and writes the header.
  static Result<std::unique_ptr<Exporter>> open(const ExportOptions& opts);
  ~Exporter();  // removes the temporary file unless run() succeeded

  const ExportPlan& plan() const;
  // The temporary file being written ("" once it is renamed or removed), for a last-resort cleanup
  // by a signal handler.
  const std::string& temp_path() const;
  // Runs to the end of the input and renames the output into place. `progress` is called on this
  // thread after each encoded frame. Code::cancelled when `stop` became true.
  Result<ExportReport> run(const std::atomic<bool>& stop, RunStats* stats,
                           const std::function<void(const ExportProgress&)>& progress);

 private:
  Exporter();
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace histeq::pipeline
