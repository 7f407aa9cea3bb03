// Frames for the picture-quality tests (CPU and GPU): pictures with known content, shots with a
// cut, and an equalizer driven frame by frame (no threads, so a control set before frame k
// applies exactly from frame k).
#pragma once

#include <functional>
#include <memory>
#include <vector>

#include "core/pipeline/equalizer.h"
#include "core/video/frame.h"
#include "tests/common/video_helpers.h"

namespace histeq::test {

// Sample of plane `plane` at (x, y) of frame `n`.
using Painter = std::function<uint32_t(int plane, int x, int y, int n)>;

// A host frame of `format` painted by `paint`, with index n and time n / fps.
video::FramePtr painted_frame(video::FramePool& pool, int n, double fps, const Painter& paint);

// A scene for the quality tests, 8- or 10-bit (values scale with the depth): a dim, low-contrast
// textured picture with a tint (value noise, like the synthetic source), a bright object moving
// across it, and for n >= cut a different, brighter shot. `seed` varies the texture.
Painter dim_scene(const video::FrameFormat& f, int cut = 1 << 30, uint32_t seed = 1);

// A CPU equalizer's options with these settings, keeping the histograms in the side data.
pipeline::EqualizerOptions cpu_options(const eq::Quality& q);

// Equalizes frames one by one with an equalizer; before frame k, `before(k, eq)` may change its
// controls. Returns copies of the output frames and their side data's compare frames (when on).
struct DrivenRun {
  std::vector<FrameCopy> frames, compare;
  std::vector<pipeline::SideData> side;
};
Result<DrivenRun> drive(const pipeline::EqualizerOptions& opts, const video::FrameFormat& format, int frames, const Painter& paint,
                        const std::function<void(int, pipeline::Equalizer&)>& before = {}, double fps = 30.0);

}  // namespace histeq::test
