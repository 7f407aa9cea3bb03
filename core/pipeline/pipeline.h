// The frame pipeline: source -> equalizer -> sink, on three threads joined by bounded queues.
//
//   decode thread     Source::next() (demux, decode, convert into pooled, pinned-when-GPU frames)
//        | queue (queue_frames)      a live source (camera) drops a frame rather than wait
//   equalize thread   Equalizer::submit(): GPU with frames in flight, or CPU
//        | queue (queue_frames)
//   caller's thread   Sink::consume(): encoder (export), presentation (play), ...
//
// Every frame's timing record is completed here (latency = decode start -> end of the sink's work)
// and added to RunStats when one is given. The first error from any thread stops all three and is
// returned; `stop` (e.g. set by a signal handler) stops them with Code::cancelled.
#pragma once

#include <atomic>
#include <memory>
#include <string>
#include <vector>

#include "core/cuda/status.h"
#include "core/pipeline/equalizer.h"
#include "core/pipeline/stats.h"
#include "core/video/source.h"

namespace histeq::pipeline {

// A consumer of equalized frames: called on the thread that runs the pipeline, in frame order.
class Sink {
 public:
  virtual ~Sink() = default;
  // Takes the frame and its side data (it may keep them). Sets the timing of its own stage (encode,
  // present) and the late/dropped flags in `record`; the pipeline fills the rest.
  virtual Status consume(PipelineFrame frame, FrameRecord& record) = 0;
  // Called on the same thread when no frame came for a while (about 20 ms), e.g. so that a window
  // keeps redrawing while the pipeline is starved. An error stops the pipeline as in consume().
  virtual Status idle() { return Status::ok(); }
};

struct PipelineOptions {
  EqualizerOptions equalizer;
  int queue_frames = 4;    // capacity of each of the two queues
  double max_seconds = 0;  // the input ends at this media time (Frame::time_s): later frames are not taken (0: none)
};

struct PipelineCounters {
  int64_t frames_in = 0;       // frames the source produced (and the pipeline accepted)
  int64_t frames_out = 0;      // frames the sink consumed
  int64_t dropped_source = 0;  // live source frames dropped because the pipeline was full
};

class Pipeline {
 public:
  // Creates the equalizer (backend, kernel) and the frame pool for `source`'s format. With
  // equalizer.device set, that device becomes the calling thread's current one, and each of run()'s
  // threads makes it theirs, so that several pipelines share a machine's GPUs (the source must have
  // been opened for the same device: SourceRequest::cuda_device, where NVDEC decodes).
  static Result<std::unique_ptr<Pipeline>> create(const PipelineOptions& opts, const video::SourceInfo& source);
  ~Pipeline();

  const EqualizerInfo& equalizer() const;
  // The timing rows of a frame, in the order it goes through them: the source's (decode,
  // convert), the equalizer's (Equalizer::stages()), then the sinks' (encode, present).
  std::vector<video::StageId> stages() const;

  // Blocks until the source ends (ok), `stop` becomes true (cancelled) or an error. May be called
  // again after it returns, e.g. after seek() (a player seeks by stopping, seeking and running
  // again): frames still in flight at a stop are dropped, counters keep adding up. The equalizer is
  // reset (Equalizer::reset) before a run whose frames do not follow the last run's: after a stop,
  // a seek, or on another source.
  Status run(video::Source& source, Sink& sink, const std::atomic<bool>& stop, RunStats* stats = nullptr);
  // Between runs, on the thread that runs them: Source::seek, and the equalizer forgets what
  // earlier frames left (temporal state) before the next run.
  Status seek(video::Source& source, double time_s);
  PipelineCounters counters() const;  // any thread, also while running
  // Frames equalized and waiting for the sink, now (0 outside run()). The sink's thread only, from
  // consume() or idle(): a player drops a late frame only when a newer one is ready (ffplay's rule).
  size_t ready() const;

  // Live controls (any thread, also while running): Equalizer::set_kernel, set_strength,
  // set_quality and set_compare.
  Status set_kernel(const std::string& name);
  Status set_strength(double strength);
  Status set_quality(const eq::Quality& quality);
  Status set_compare(const Compare& compare);

 private:
  Pipeline();
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace histeq::pipeline
