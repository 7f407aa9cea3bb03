#include "core/pipeline/export.h"

#include <cmath>
#include <chrono>

#include "core/cuda/device.h"
#include "core/pipeline/sink_factory.h"
#include "core/pipeline/source_factory.h"
#include "core/video/file_source.h"

namespace histeq::pipeline {
namespace {

double now_s() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// ExportReport::short_input for an export that ran to the end of its input (or range).
std::string short_input_note(const ExportPlan& plan, const video::FileSource& src, int64_t frames_in, double start_s) {
  if (src.info().live) return "";
  const std::string cut = src.truncation();
  const int64_t expected = plan.frames_hint;
  const bool fewer = expected > 0 && static_cast<double>(frames_in) < 0.95 * static_cast<double>(expected);
  const double reached = src.time_reached_s() - start_s;
  const bool sooner = plan.duration_s > 0 && reached < 0.95 * plan.duration_s;
  const bool short_count = fewer && (plan.frames_exact || sooner);
  if (cut.empty() && !short_count) return "";
  char b[160];
  const auto n = static_cast<long long>(frames_in), m = static_cast<long long>(expected);
  if (short_count && plan.frames_exact) std::snprintf(b, sizeof(b), "%lld of the %lld frames the container lists", n, m);
  else if (short_count) std::snprintf(b, sizeof(b), "%lld of about %lld frames (%.2f of %.2f s)", n, m, reached, plan.duration_s);
  else std::snprintf(b, sizeof(b), "%lld frames read", n);
  return "the input ends early: " + (cut.empty() ? std::string(b) : short_count ? std::string(b) + "; " + cut : cut + "; " + b);
}

}  // namespace

struct Exporter::Impl {
  ExportOptions opts;
  ExportPlan plan;
  OpenedSource src;
  std::unique_ptr<Pipeline> pipeline;
  std::unique_ptr<OutputSink> sink;  // removes its temporary file when destroyed unfinished
  // run()'s progress, called by the sink after each encoded frame.
  std::function<void(const ExportProgress&)> progress;
  double t0 = 0;
  bool ran = false;
  static const std::string kNone;

  Status open_input();
  void describe();
};

const std::string Exporter::Impl::kNone;

Exporter::Exporter() : impl_(std::make_unique<Impl>()) {}
Exporter::~Exporter() = default;
const ExportPlan& Exporter::plan() const { return impl_->plan; }
const std::string& Exporter::temp_path() const { return impl_->sink ? impl_->sink->partial_path() : Impl::kNone; }

// The input through the source factory, moved to the range's start.
Status Exporter::Impl::open_input() {
  SourceRequest sr;
  sr.input = opts.input;
  sr.hwdec = opts.hwdec;
  sr.cuda_device = opts.pipeline.equalizer.device;  // NVDEC on the pipeline's GPU
  sr.live = opts.live;
  sr.frames_held = frames_held_by(opts.pipeline);
  // Audio that belongs at the start may lie before the video key frame in the file (interleaving):
  // the demuxer starts this much earlier, so the audio cut has all of it.
  if (opts.range.start_s > 0) sr.seek_preroll_s = 2.0;
  auto opened = open_source(sr);
  if (!opened) return opened.status();
  src = std::move(opened.value());
  if (src.file == nullptr) return HISTEQ_ERROR(Code::invalid_argument, "no input file given");
  HISTEQ_TRY(video::check_time_range(opts.range, src.source->info().duration_s, opts.input));
  if (opts.range.start_s > 0) {
    if (!src.source->can_seek())
      return HISTEQ_ERROR(Code::unsupported, opts.input + ": --start needs an input that can seek (a file, not a pipe)");
    HISTEQ_TRY(src.source->seek(opts.range.start_s));
  }
  plan.decoder = src.source->info().decoder;
  // The decoder chosen is said in the plan; why NVDEC was not used is a note where it was asked for
  // by name, or could have been used (auto with a GPU).
  const bool nvdec_expected = opts.hwdec == video::HwDecode::nvdec || (opts.hwdec == video::HwDecode::auto_ && cuda::have_device());
  if (nvdec_expected && !src.source->info().decode_note.empty()) plan.notes.push_back(src.source->info().decode_note);
  return Status::ok();
}

void Exporter::Impl::describe() {
  const video::SourceInfo& si = src.source->info();
  plan.input_description = si.description;
  plan.output_description = sink->description();
  plan.format = si.format;
  plan.equalizer = pipeline->equalizer();
  plan.stages = pipeline->stages();
  plan.frames_hint = si.frames_hint;
  plan.frames_exact = si.frames_exact;
  plan.duration_s = si.duration_s;
  if (opts.range.trimmed()) {
    plan.duration_s = opts.range.length(si.duration_s);
    plan.frames_exact = false;
    if (si.frame_rate.valid() && plan.duration_s > 0)
      plan.frames_hint = static_cast<int64_t>(std::ceil(plan.duration_s * si.frame_rate.value() - 1e-6));
  }
}

Result<std::unique_ptr<Exporter>> Exporter::open(const ExportOptions& opts) {
  std::unique_ptr<Exporter> x(new Exporter());
  Impl& m = *x->impl_;
  m.opts = opts;
  OutputRequest out;
  out.path = opts.output;
  out.overwrite = opts.overwrite;
  out.format = opts.format;
  out.encoder = {opts.codec, opts.crf, opts.preset, opts.encoder_threads, opts.encoder_control};
  out.streams = opts.streams;
  out.range = opts.range;
  out.on_frame = [&m](int64_t frames, double time_s) {
    if (m.progress) m.progress({frames, time_s - m.opts.range.start_s, now_s() - m.t0});
  };
  HISTEQ_TRY(check_output(out, opts.input));
  HISTEQ_TRY(m.open_input());
  auto sink = open_output(out, m.src, m.plan.notes);
  if (!sink) return sink.status();
  m.sink = std::move(sink.value());
  // The pipeline after the writer: its GPU setup then overlaps a context a warm-up thread may be
  // creating (the app starts one) with the input probe and the encoder's start.
  PipelineOptions po = opts.pipeline;
  want_frames(po.equalizer, m.sink->memory());
  if (opts.range.end_s > 0) po.max_seconds = opts.range.end_s;
  auto pipeline = Pipeline::create(po, m.src.source->info());
  if (!pipeline) return pipeline.status();
  m.pipeline = std::move(pipeline.value());
  m.describe();
  return x;
}

Result<ExportReport> Exporter::run(const std::atomic<bool>& stop, RunStats* stats,
                                   const std::function<void(const ExportProgress&)>& progress) {
  Impl& m = *impl_;
  if (m.ran) return HISTEQ_ERROR(Code::invalid_argument, "export already ran");
  m.ran = true;
  m.t0 = now_s();
  m.progress = progress;
  Status s = m.pipeline->run(*m.src.source, *m.sink, stop, stats);
  // The video stopped at the end of the range: the audio up to it may lie further on in the file.
  if (s && m.opts.range.end_s > 0) s = m.src.file->read_other_streams(m.opts.range.end_s);
  const std::string short_note = s ? short_input_note(m.plan, *m.src.file, m.pipeline->counters().frames_in, m.opts.range.start_s) : "";
  if (!short_note.empty() && m.opts.strict) s = HISTEQ_ERROR(Code::io_error, m.opts.input + ": " + short_note);
  if (s) s = m.sink->finish();
  m.progress = nullptr;
  if (!s) {
    m.sink.reset();  // removes the temporary file
    return s;
  }
  ExportReport r;
  r.frames_in = m.pipeline->counters().frames_in;
  r.frames_out = m.sink->counters().frames_out;
  r.source = m.src.source->counters();
  r.frames_expected = m.plan.frames_hint;
  r.short_input = short_note;
  r.copied_packets = m.sink->counters().copied_packets;
  r.elapsed_s = now_s() - m.t0;
  r.dropped_source = m.pipeline->counters().dropped_source;
  return r;
}

}  // namespace histeq::pipeline
