// Helpers for the video and pipeline tests: clips written with our own writer (no ffmpeg CLI, so
// the GPU machine can run them), frames decoded back, the pipeline run into a collecting sink, and
// the CPU reference equalization every output is checked against.
#pragma once

#include <atomic>
#include <string>
#include <vector>

#include "core/cuda/status.h"
#include "core/equalize/lut.h"
#include "core/pipeline/pipeline.h"
#include "core/video/frame.h"
#include "core/video/source.h"

namespace histeq::test {

// A frame's planes as tight byte rows, for comparisons.
struct FrameCopy {
  video::FrameFormat format;
  int64_t pts = 0;
  double time_s = 0;  // pts in seconds, from the source's first frame
  std::vector<std::vector<uint8_t>> planes;  // format.plane_count() planes, rows packed
  bool full_range = false;                    // the frame's range tag (unset or limited: false)
  bool operator==(const FrameCopy& o) const { return format == o.format && planes == o.planes; }
};
FrameCopy copy_frame(const video::Frame& f);

// Equalizes the luma of `f` in place the reference way: cpu_reference histogram, build_lut, apply_lut,
// within the levels of the frame's range (as plain settings do), or with `textbook` the classic
// formula's (0..max).
void reference_equalize(FrameCopy& f, uint32_t weight, bool textbook = false);
// The levels reference_equalize uses for `f`.
eq::Levels reference_levels(const FrameCopy& f, bool textbook = false);

// Mean luma and the Kolmogorov-Smirnov distance of the luma histogram to the uniform one (0 =
// perfectly flat).
double ks_to_uniform(const FrameCopy& f);

// Writes a synthetic clip with `codec` (ffv1: lossless) to `path`; in the layout `as` when given
// (e.g. 4:4:4; the writer converts), else the source's.
Status write_synthetic_clip(const std::string& path, const video::SyntheticOptions& opts, const std::string& codec = "ffv1",
                            const video::FrameFormat* as = nullptr);

// Every frame of a file, decoded.
Result<std::vector<FrameCopy>> read_frames(const std::string& path);

// Runs the pipeline over `source`, keeping a copy of every output frame (device frames are copied
// down; those are also in `device_frames`) and its side data.
struct PipelineRun {
  std::vector<FrameCopy> frames;
  std::vector<FrameCopy> device_frames;
  std::vector<pipeline::SideData> side;
  std::vector<video::StageId> stages;  // Pipeline::stages()
  pipeline::PipelineCounters counters;
  pipeline::EqualizerInfo equalizer;
  std::vector<pipeline::FrameRecord> records;
};
Result<PipelineRun> run_pipeline(video::Source& source, const pipeline::PipelineOptions& opts);

// The synthetic source at 30 fps for `frames` frames of width x height, 8-bit 4:2:0.
video::SyntheticOptions synthetic_clip(int width, int height, int frames);

// A fresh path in the temporary folder: <TMPDIR or /tmp>/histeq-test-<pid>-<n>-<name>.
std::string temp_path(const std::string& name);

}  // namespace histeq::test
