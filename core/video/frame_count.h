// How many video frames a finished file holds, by reading its packets (no decoding): what batch
// resume compares with the count an export recorded when it completed.
#pragma once

#include <cstdint>
#include <string>

#include "core/cuda/status.h"

namespace histeq::video {

// The packets of the file's best video stream (one frame each for the encoders histeq writes).
// Errors (io_error/invalid_argument, naming the file): it cannot be opened or read, or holds no
// video. Blocking; any thread.
Result<int64_t> count_video_packets(const std::string& path);

}  // namespace histeq::video
