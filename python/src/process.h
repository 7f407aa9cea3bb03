// The frames of a call through the equalizer, in order: each frame as it is where the equalizer
// can take it (Frames::direct), else loaded into work planes of the call, equalized there and
// stored into the output. Runs without the GIL (no Python object is touched).
#pragma once

#include <functional>
#include <vector>

#include "frames.h"

namespace histeq::py {

using ProcessFrame = std::function<Status(const Image& in, const Image& out, Stream stream)>;

// in -> out (out may be in itself); times: one per frame, or empty (unknown: -1). The first error
// stops the frames; the earlier ones are written.
Status run_frames(const Frames& in, const Frames& out, const std::vector<double>& times, Stream stream,
                  const ProcessFrame& process);

}  // namespace histeq::py
