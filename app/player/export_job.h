// "Export..." in the player: the export command's code path (pipeline::Exporter: its own source,
// pipeline and encoder) on a thread of its own, so playback goes on; progress is read by polling.
// No SDL, no ImGui.
#pragma once

#include <atomic>
#include <mutex>
#include <string>
#include <thread>

#include "core/pipeline/export.h"

namespace histeq::app::player {

class ExportJob {
 public:
  ExportJob() = default;
  ~ExportJob();  // cancels a running export (its output is then not written) and waits for it
  ExportJob(const ExportJob&) = delete;
  ExportJob& operator=(const ExportJob&) = delete;

  // Starts an export; an error when one is running already.
  Status start(const pipeline::ExportOptions& opts);
  void cancel();

  struct Progress {
    bool running = false;
    bool finished = false;   // a job ended (ok, failed or cancelled) since start()
    bool failed = false;
    std::string output;
    std::string message;     // the outcome once finished ("wrote out.mp4: 600 frames in 12.3 s")
    int64_t frames = 0, frames_expected = 0;
    double elapsed_s = 0, fraction = -1, fps = 0, eta_s = -1;
  };
  Progress progress() const;

 private:
  void run(pipeline::ExportOptions opts);
  std::thread thread_;
  std::atomic<bool> stop_{false};
  mutable std::mutex mu_;
  Progress p_;
};

}  // namespace histeq::app::player
