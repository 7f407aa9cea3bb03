#include "core/pipeline/export.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <algorithm>
#include <vector>

#include "core/cuda/device.h"
#include "core/video/file_source.h"
#include "core/video/writer.h"

namespace histeq::pipeline {
namespace {

double now_s() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

std::string parent_dir(const std::string& path) {
  const size_t slash = path.find_last_of('/');
  if (slash == std::string::npos) return ".";
  if (slash == 0) return "/";
  return path.substr(0, slash);
}

std::string base_name(const std::string& path) {
  const size_t slash = path.find_last_of('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

// The encoder as a sink: frames in, packets into the muxer; the encode stage is timed here.
class EncodeSink final : public Sink {
 public:
  EncodeSink(video::VideoWriter& w, const std::function<void(const ExportProgress&)>& progress, double t0, double start_s)
      : w_(w), progress_(progress), t0_(t0), start_s_(start_s) {}
  Status consume(PipelineFrame f, FrameRecord& rec) override {
    const double a = now_s();
    HISTEQ_TRY(w_.encode(*f.frame));
    f.frame.reset();  // back to its pool once the encoder lets go of its reference
    const double b = now_s();
    rec.timing.set(video::stage::encode, (b - a) * 1e3);
    if (progress_) progress_({w_.frames_sent(), rec.time_s - start_s_, b - t0_});
    return Status::ok();
  }

 private:
  video::VideoWriter& w_;
  const std::function<void(const ExportProgress&)>& progress_;
  double t0_, start_s_;
};

}  // namespace

struct Exporter::Impl {
  ExportOptions opts;
  ExportPlan plan;
  std::unique_ptr<video::FileSource> src;
  std::unique_ptr<Pipeline> pipeline;
  std::unique_ptr<video::VideoWriter> writer;
  std::string temp;
  bool committed = false;

  void discard() {
    writer.reset();  // closes the file first
    if (!temp.empty() && !committed) ::unlink(temp.c_str());
    temp.clear();
  }
  ~Impl() { discard(); }

  Status fail_out(const std::string& cause, Code code = Code::io_error) const {
    return HISTEQ_ERROR(code, opts.output + ": " + cause);
  }
};

Exporter::Exporter() : impl_(std::make_unique<Impl>()) {}
Exporter::~Exporter() = default;
const ExportPlan& Exporter::plan() const { return impl_->plan; }
const std::string& Exporter::temp_path() const { return impl_->temp; }

Result<std::unique_ptr<Exporter>> Exporter::open(const ExportOptions& opts) {
  std::unique_ptr<Exporter> x(new Exporter());
  Impl& m = *x->impl_;
  m.opts = opts;
  if (opts.output.empty()) return HISTEQ_ERROR(Code::invalid_argument, "no output file given (-o OUT)");
  if (opts.output.back() == '/') return m.fail_out("is a folder, not a file name", Code::invalid_argument);

  struct stat out_st {}, in_st {};
  if (::stat(opts.output.c_str(), &out_st) == 0) {
    if (S_ISDIR(out_st.st_mode)) return m.fail_out("is a folder, not a file name", Code::invalid_argument);
    if (::stat(opts.input.c_str(), &in_st) == 0 && in_st.st_dev == out_st.st_dev && in_st.st_ino == out_st.st_ino)
      return m.fail_out("is the input file; choose another output name", Code::invalid_argument);
    if (!opts.overwrite) return m.fail_out("already exists (use -y to overwrite it)", Code::invalid_argument);
  }

  video::FileSourceOptions so;
  so.hwdec = opts.hwdec;
  so.frames_held = 2 * opts.pipeline.queue_frames + std::max(2, opts.pipeline.equalizer.frames_in_flight) + 1;
  // Audio that belongs at the start may lie before the video key frame in the file (interleaving):
  // the demuxer starts this much earlier, so the audio cut has all of it.
  if (opts.range.start_s > 0) so.seek_preroll_s = 2.0;
  auto src = video::FileSource::open(opts.input, so);
  if (!src) return src.status();
  m.src = std::move(src.value());
  HISTEQ_TRY(video::check_time_range(opts.range, m.src->info().duration_s, opts.input));
  if (opts.range.start_s > 0) {
    if (!m.src->can_seek())
      return HISTEQ_ERROR(Code::unsupported, opts.input + ": --start needs an input that can seek (a file, not a pipe)");
    HISTEQ_TRY(m.src->seek(opts.range.start_s));
  }
  m.plan.decoder = m.src->info().decoder;
  // The decoder chosen is said in the plan; why NVDEC was not used is a note where it was asked for
  // by name, or could have been used (auto with a GPU).
  const bool nvdec_expected = opts.hwdec == video::HwDecode::nvdec || (opts.hwdec == video::HwDecode::auto_ && cuda::have_device());
  if (nvdec_expected && !m.src->info().decode_note.empty()) m.plan.notes.push_back(m.src->info().decode_note);

  // The encoder's layout. NVDEC frames (NV12/P010) go to an encoder that takes them as they are;
  // otherwise the writer converts them (swscale, no resampling). Software frames are converted by
  // the source into the layout chosen for the encoder.
  const video::FrameFormat& decoded = m.src->info().format;
  const bool gpu_frames = decoded.layout == video::PlaneLayout::semi_planar;
  Result<video::FrameFormat> fmt = gpu_frames && video::encoder_takes(opts.codec, decoded)
                                       ? Result<video::FrameFormat>(decoded)
                                       : video::choose_format(opts.codec, m.src->native(), m.plan.notes);
  if (!fmt) return fmt.status();
  if (!gpu_frames) HISTEQ_TRY(m.src->set_output_format(*fmt));

  // The temporary file: same folder (so the final rename is atomic), unique, hidden, and with the
  // permissions a newly created file would get.
  const std::string dir = parent_dir(opts.output);
  std::string templ = dir + "/." + base_name(opts.output) + ".XXXXXX.part";
  std::vector<char> buf(templ.begin(), templ.end());
  buf.push_back('\0');
  const int fd = ::mkstemps(buf.data(), 5);
  if (fd < 0) {
    const int err = errno;
    if (err == ENOENT) return m.fail_out("cannot write there: the folder " + dir + " does not exist");
    if (err == ENOTDIR) return m.fail_out("cannot write there: " + dir + " is not a folder");
    return m.fail_out("cannot write in " + dir + ": " + std::strerror(err));
  }
  m.temp = buf.data();
  const mode_t mask = ::umask(0);
  ::umask(mask);
  (void)::fchmod(fd, 0666 & ~mask);
  ::close(fd);

  video::WriterOptions wo;
  wo.path = opts.output;
  wo.temp_path = m.temp;
  wo.codec = opts.codec;
  wo.crf = opts.crf;
  wo.preset = opts.preset;
  wo.threads = opts.encoder_threads;
  wo.range = opts.range;
  auto writer = video::VideoWriter::open(wo, video::video_input_of(*m.src), *fmt, m.plan.notes);
  if (!writer) return writer.status();  // ~Impl removes the temporary file
  m.writer = std::move(writer.value());
  // The pipeline after the writer: its GPU setup then overlaps a context a warm-up thread may be
  // creating (the app starts one) with the input probe and the encoder's start.
  PipelineOptions po = opts.pipeline;
  po.equalizer.download = true;         // the encoder reads the host frame
  po.equalizer.keep_on_device = false;
  if (opts.range.end_s > 0) po.max_seconds = opts.range.end_s;
  auto pipeline = Pipeline::create(po, m.src->info());
  if (!pipeline) return pipeline.status();
  m.pipeline = std::move(pipeline.value());

  video::VideoWriter* w = m.writer.get();
  m.src->set_packet_handler([w](AVPacket* p) { return w->write_copied(p); });

  const video::SourceInfo& si = m.src->info();
  m.plan.input_description = si.description;
  m.plan.output_description = m.writer->description();
  m.plan.format = m.src->info().format;
  m.plan.equalizer = m.pipeline->equalizer();
  m.plan.stages = m.pipeline->stages();
  m.plan.frames_hint = si.frames_hint;
  m.plan.frames_exact = si.frames_exact;
  m.plan.duration_s = si.duration_s;
  if (opts.range.trimmed()) {
    m.plan.duration_s = opts.range.length(si.duration_s);
    m.plan.frames_exact = false;
    if (si.frame_rate.valid() && m.plan.duration_s > 0)
      m.plan.frames_hint = static_cast<int64_t>(std::ceil(m.plan.duration_s * si.frame_rate.value() - 1e-6));
  }
  return x;
}

Result<ExportReport> Exporter::run(const std::atomic<bool>& stop, RunStats* stats,
                                   const std::function<void(const ExportProgress&)>& progress) {
  Impl& m = *impl_;
  if (!m.writer) return HISTEQ_ERROR(Code::invalid_argument, "export already ran");
  const double t0 = now_s();
  EncodeSink sink(*m.writer, progress, t0, m.opts.range.start_s);
  Status s = m.pipeline->run(*m.src, sink, stop, stats);
  // The video stopped at the end of the range: the audio up to it may lie further on in the file.
  if (s && m.opts.range.end_s > 0) s = m.src->read_other_streams(m.opts.range.end_s);
  if (s) s = m.writer->finish();
  if (!s) {
    m.discard();
    return s;
  }
  ExportReport r;
  r.frames_in = m.pipeline->counters().frames_in;
  r.frames_out = m.writer->video_packets();
  r.source = m.src->counters();
  r.copied_packets = m.writer->copied_packets();
  m.writer.reset();
  if (::rename(m.temp.c_str(), m.opts.output.c_str()) != 0) {
    const std::string err = std::strerror(errno);
    m.discard();
    return m.fail_out("cannot move the finished file into place: " + err);
  }
  m.committed = true;
  m.temp.clear();
  r.elapsed_s = now_s() - t0;
  return r;
}

}  // namespace histeq::pipeline
