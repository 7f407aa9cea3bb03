// A front end for driving a playback session (app/player/session.h) in tests, without a window:
// it records what the session hands it and runs a script of commands from its draw(), as the
// window's keys and overlay do.
#pragma once

#include <gtest/gtest.h>

#include <chrono>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "app/player/session.h"
#include "tests/common/video_helpers.h"

namespace histeq::test {

struct ShownFrame {
  int64_t index = 0;
  double time_s = 0;
  std::string kernel, quality;  // of the equalizer that made the frame
};

// One step of a script: when `ready` holds at a window frame, `act` runs (once), and the next step
// is waited for.
struct ScriptStep {
  std::function<bool()> ready;
  std::function<void()> act;
};

class ScriptedFrontend final : public app::player::Frontend {
 public:
  explicit ScriptedFrontend(app::player::Session& s, int keep_copies = 0) : session_(s), keep_copies_(keep_copies) {}

  std::string describe() const override { return "scripted front end"; }
  int64_t tick_period_ns() const override { return 1'000'000; }
  Status upload(const pipeline::PipelineFrame& pf) override {
    shown.push_back({pf.frame->index, pf.frame->time_s, pf.side.kernel, eq::describe(pf.side.quality)});
    if (static_cast<int>(copies.size()) < keep_copies_) copies.emplace_back(pf.frame->index, copy_frame(*pf.frame));
    return Status::ok();
  }
  Status draw() override {
    ++draws;
    rendered_ = std::chrono::steady_clock::now().time_since_epoch().count();
    if (next_ < script.size() && script[next_].ready()) script[next_++].act();
    // A script that stalls ends the run instead of hanging the test.
    if (std::chrono::steady_clock::now() - start_ > std::chrono::seconds(60) && !session_.quitting()) {
      ADD_FAILURE() << "the script stalled at step " << next_;
      session_.quit();
    }
    return Status::ok();
  }
  int64_t rendered_ns() const override { return rendered_; }

  size_t steps_done() const { return next_; }

  std::vector<ScriptStep> script;
  std::vector<ShownFrame> shown;
  std::vector<std::pair<int64_t, FrameCopy>> copies;  // the first frames shown, by index
  int64_t draws = 0;

 private:
  app::player::Session& session_;
  int keep_copies_;
  size_t next_ = 0;
  int64_t rendered_ = 0;
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
};

}  // namespace histeq::test
