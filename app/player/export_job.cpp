#include "app/player/export_job.h"

#include <algorithm>
#include <cstdio>

namespace histeq::app::player {

ExportJob::~ExportJob() {
  cancel();
  if (thread_.joinable()) thread_.join();
}

Status ExportJob::start(const pipeline::ExportOptions& opts) {
  {
    std::lock_guard<std::mutex> l(mu_);
    if (p_.running) return HISTEQ_ERROR(Code::invalid_argument, "an export is running already");
  }
  if (thread_.joinable()) thread_.join();  // the previous job has ended
  stop_ = false;
  {
    std::lock_guard<std::mutex> l(mu_);
    p_ = Progress();
    p_.running = true;
    p_.output = opts.output;
  }
  thread_ = std::thread([this, opts] { run(opts); });
  return Status::ok();
}

void ExportJob::cancel() { stop_ = true; }

ExportJob::Progress ExportJob::progress() const {
  std::lock_guard<std::mutex> l(mu_);
  return p_;
}

void ExportJob::run(pipeline::ExportOptions opts) {
  auto finish = [&](bool failed, const std::string& message) {
    std::lock_guard<std::mutex> l(mu_);
    p_.running = false;
    p_.finished = true;
    p_.failed = failed;
    p_.message = message;
  };
  auto ex = pipeline::Exporter::open(opts);
  if (!ex) return finish(true, ex.status().to_string());
  const pipeline::ExportPlan& plan = (*ex)->plan();
  {
    std::lock_guard<std::mutex> l(mu_);
    p_.frames_expected = plan.frames_hint;
  }
  auto on_progress = [&](const pipeline::ExportProgress& pr) {
    std::lock_guard<std::mutex> l(mu_);
    p_.frames = pr.frames;
    p_.elapsed_s = pr.elapsed_s;
    p_.fps = pr.elapsed_s > 0 ? pr.frames / pr.elapsed_s : 0;
    double frac = -1;
    if (plan.frames_hint > 0) frac = std::min(1.0, static_cast<double>(pr.frames) / plan.frames_hint);
    else if (plan.duration_s > 0) frac = std::min(1.0, pr.media_s / plan.duration_s);
    p_.fraction = frac;
    p_.eta_s = frac > 0 ? pr.elapsed_s * (1 - frac) / frac : -1;
  };
  auto rep = (*ex)->run(stop_, nullptr, on_progress);
  if (!rep) {
    const bool cancelled = rep.status().code() == Code::cancelled;
    return finish(!cancelled, cancelled ? "export cancelled; nothing written" : rep.status().to_string());
  }
  char b[512];
  std::snprintf(b, sizeof(b), "wrote %s: %lld frames in %.1f s", opts.output.c_str(), static_cast<long long>(rep->frames_out),
                rep->elapsed_s);
  finish(rep->frames_in != rep->frames_out, b);
}

}  // namespace histeq::app::player
