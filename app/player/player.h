// `histeq play` with a window: the pipeline (decode -> equalize) feeding a presentation sink that
// draws each frame with the VideoRenderer (CUDA-GL interop on the GPU path, glTexSubImage2D on the
// CPU path) under the ImGui overlay, paced at the source's frame rate.
//
// The window's thread runs the pipeline's sink, so every window frame is drawn from there: when a
// frame arrives (Sink::consume), while the next one is not due yet or playback is paused (the
// previous frame is redrawn with a live UI), when the pipeline is starved (Sink::idle), and after
// the input has ended (the last frame stays). Seeks and opening another file stop the pipeline
// run, reposition or replace the source and run again.
#pragma once

#include <atomic>
#include <memory>
#include <string>
#include <vector>

#include "app/common/play_options.h"
#include "app/player/window.h"
#include "core/video/source.h"

namespace histeq::app::player {

// Opens the window for playing `source` (fails, saying why, when there is no display).
Result<std::unique_ptr<Window>> open_window(const PlayOptions& o, const video::SourceInfo& source);

// Plays until the user quits, --frames is reached, or (--exit-at-end) the input ends. Returns
// the exit code; prints a summary like the headless player.
int run_window(const PlayOptions& o, const std::vector<std::string>& argv, std::unique_ptr<video::Source> source,
               std::unique_ptr<Window> window, const std::atomic<bool>& stop);

}  // namespace histeq::app::player
