// What the user asked `histeq play` (and the player window's Open) to read, as a source factory
// request (core/pipeline/source_factory.h): the input or --webcam, the synthetic source's
// --size/--fps/--bit-depth/length/--synthetic-on, --hwdec, --live and --live-timeout.
#pragma once

#include <string>

#include "app/common/play_options.h"
#include "core/pipeline/source_factory.h"

namespace histeq::app {

// The command line's source: its input, else the webcam with --webcam, else the synthetic source.
// Errors (invalid_argument): a bad --size ("bad size 'x' (WxH, 720p, 1080p or 4k)"), and what
// pipeline::classify refuses (an input together with --webcam).
Result<pipeline::SourceRequest> play_source_request(const PlayOptions& opts);
// A file or URL opened later (the player's Open), with the command line's decode and live options
// (its input and --webcam no longer apply).
pipeline::SourceRequest open_request(const PlayOptions& opts, const std::string& path);

// Whether --webcam was given (with or without a device).
bool webcam_asked(const PlayOptions& opts);

}  // namespace histeq::app
