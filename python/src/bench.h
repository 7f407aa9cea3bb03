// The C++ side of bench/python_bench.py: Equalizer::process timed from C++ on the same frames, the
// same equalizer and the same stream as the Python calls it is compared with.
#pragma once

#include "arrays.h"

namespace histeq::py {

// Calls eq.process(frames[i % n], out, stream) `calls` times; around each call a CUDA event pair
// (synchronized before the next call, so the GPU waits on the host as it does for a Python call)
// and the host's clock. Returns (event microseconds, host microseconds), one per call (no event
// times without a GPU: host frames on the CPU).
nb::tuple time_process(Equalizer& eq, nb::handle frames, nb::handle out, nb::handle stream, int calls);

}  // namespace histeq::py
