// `histeq play` with a window: the front end of a playback Session (app/player/session.h). The
// session runs the pipeline (decode -> equalize) and times the frames; the window uploads each one
// to the VideoRenderer (CUDA-GL interop on the GPU path, glTexSubImage2D on the CPU path) and draws
// it under the ImGui overlay, which reads the session's state and sends commands back.
//
// Everything runs on the window's thread, the session's: window frames are drawn when a frame
// arrives, while the next one is not due yet or playback is paused (the previous frame is redrawn
// with a live UI), when the pipeline is starved, and after the input has ended (the last frame
// stays).
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
