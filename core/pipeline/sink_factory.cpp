#include "core/pipeline/sink_factory.h"

#include "core/pipeline/hidden_names.h"

#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <thread>

#include "core/pipeline/pacer.h"
#include "core/video/file_source.h"
#include "core/video/writer.h"

namespace histeq::pipeline {
namespace {

using Clock = std::chrono::steady_clock;

double now_s() { return std::chrono::duration<double>(Clock::now().time_since_epoch()).count(); }

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

Status fail_out(const std::string& output, const std::string& cause, Code code = Code::io_error) {
  return HISTEQ_ERROR(code, output + ": " + cause);
}

const std::string kStandardOutput = "-";
const std::string kStandardOutputName = "standard output";  // in messages
constexpr const char* kPipeDefaultContainer = "matroska";

// The container -f named (its FFmpeg name), checked that it streams for standard output; "" for a
// file without -f (its extension picks it), matroska for standard output (with a note).
Result<std::string> output_container(const OutputRequest& r, std::vector<std::string>* notes) {
  const bool pipe = r.path == kStandardOutput;
  if (r.format.empty() && !pipe) return std::string();
  if (r.format.empty()) {
    if (notes != nullptr)
      notes->push_back(std::string("standard output: ") + kPipeDefaultContainer +
                       " (-f picks another container: nut, mpegts, yuv4mpegpipe, ...)");
    return std::string(kPipeDefaultContainer);
  }
  auto name = video::container_named(r.format);
  if (!name) return name.status();
  if (pipe) HISTEQ_TRY(video::check_pipe_container(*name, kStandardOutputName));
  return name;
}

// The temporary file: in the output's folder (so the final rename is atomic), unique, hidden, and
// with the permissions a newly created file would get; its name fits the folder's NAME_MAX
// whatever the output's length (hidden_names.h).
Result<std::string> make_temp_file(const std::string& output) {
  const std::string dir = parent_dir(output);
  std::string templ = hidden_sibling(dir + "/" + base_name(output), ".XXXXXX.part");
  std::vector<char> buf(templ.begin(), templ.end());
  buf.push_back('\0');
  const int fd = ::mkstemps(buf.data(), 5);
  if (fd < 0) {
    const int err = errno;
    if (err == ENOENT) return fail_out(output, "cannot write there: the folder " + dir + " does not exist");
    if (err == ENOTDIR) return fail_out(output, "cannot write there: " + dir + " is not a folder");
    return fail_out(output, "cannot write in " + dir + ": " + std::strerror(err));
  }
  const mode_t mask = ::umask(0);
  ::umask(mask);
  (void)::fchmod(fd, 0666 & ~mask);
  ::close(fd);
  return std::string(buf.data());
}

// A file: the encoder as a sink, frames in, packets into the muxer (with the source's other
// streams copied in by the decode thread); the encode stage is timed here. The bytes go to a
// temporary file, renamed to the output by finish() and removed otherwise; or, for "-", straight
// to standard output, where what was written stays written.
class FileSink final : public OutputSink {
 public:
  static Result<std::unique_ptr<OutputSink>> open(const OutputRequest& r, video::FileSource& src, std::vector<std::string>& notes);
  ~FileSink() override { discard(); }

  FrameMemory memory() const noexcept override { return FrameMemory::host; }
  Status consume(PipelineFrame f, FrameRecord& rec) override {
    const double a = now_s();
    HISTEQ_TRY(writer_->encode(*f.frame));
    ++frames_;
    f.frame.reset();  // back to its pool once the encoder lets go of its reference
    rec.timing.set(video::stage::encode, (now_s() - a) * 1e3);
    if (on_frame_) on_frame_(writer_->frames_sent(), rec.time_s);
    return Status::ok();
  }
  Status finish() override;
  std::string description() const override { return description_; }
  const std::string& partial_path() const override { return temp_; }
  SinkCounters counters() const noexcept override { return {frames_.load(), packets_.load(), copied_.load()}; }

 private:
  FileSink() = default;
  void discard() {
    writer_.reset();  // closes the file first
    if (!temp_.empty()) ::unlink(temp_.c_str());
    temp_.clear();
  }
  std::string output_, temp_, description_;
  std::unique_ptr<video::VideoWriter> writer_;
  std::function<void(int64_t, double)> on_frame_;
  std::atomic<int64_t> frames_{0}, packets_{0}, copied_{0};
};

Result<std::unique_ptr<OutputSink>> FileSink::open(const OutputRequest& r, video::FileSource& src, std::vector<std::string>& notes) {
  std::unique_ptr<FileSink> s(new FileSink());
  s->output_ = r.path;
  s->on_frame_ = r.on_frame;
  // The encoder's layout. NVDEC frames (NV12/P010) go to an encoder that takes them as they are;
  // otherwise the writer converts them (swscale, no resampling). Software frames are converted by
  // the source into the layout chosen for the encoder.
  const video::FrameFormat& decoded = src.info().format;
  const bool gpu_frames = decoded.layout == video::PlaneLayout::semi_planar;
  auto container = output_container(r, &notes);
  if (!container) return container.status();
  std::string codec = r.encoder.codec;
  if (codec.empty()) {
    auto c = video::default_encoder(r.path, src.native().codec_name, notes, *container);
    if (!c) return c.status();
    codec = *c;
  }
  const std::string& pix_fmt = r.encoder.control.pix_fmt;
  Result<video::FrameFormat> fmt = !pix_fmt.empty() ? video::format_for_pix_fmt(codec, pix_fmt, src.native())
                                   : gpu_frames && video::encoder_takes(codec, decoded)
                                       ? Result<video::FrameFormat>(decoded)
                                       : video::choose_format(codec, src.native(), notes);
  if (!fmt) return !pix_fmt.empty() ? Status(fmt.status().code(), r.path + ": " + fmt.status().message()) : fmt.status();
  if (!gpu_frames) HISTEQ_TRY(src.set_output_format(*fmt));
  video::WriterOptions wo;
  wo.path = r.path == kStandardOutput ? kStandardOutputName : r.path;  // the container is named: the path is for messages
  wo.format = *container;
  if (r.path == kStandardOutput) {
    wo.temp_path = "pipe:1";
  } else {
    auto temp = make_temp_file(r.path);
    if (!temp) return temp.status();
    s->temp_ = wo.temp_path = *temp;
  }
  wo.codec = codec;
  wo.control = r.encoder.control;
  wo.streams = r.streams;
  wo.crf = r.encoder.crf;
  wo.preset = r.encoder.preset;
  wo.threads = r.encoder.threads;
  wo.range = r.range;
  auto writer = video::VideoWriter::open(wo, video::video_input_of(src), *fmt, notes);
  if (!writer) return writer.status();  // ~FileSink removes the temporary file
  s->writer_ = std::move(writer.value());
  s->description_ = s->writer_->description();
  video::VideoWriter* w = s->writer_.get();
  src.set_packet_handler([w](AVPacket* p) { return w->write_copied(p); });
  return std::unique_ptr<OutputSink>(std::move(s));
}

Status FileSink::finish() {
  if (!writer_) return HISTEQ_ERROR(Code::invalid_argument, output_ + ": the output is finished already");
  Status s = writer_->finish();
  if (!s) {
    discard();
    return s;
  }
  packets_ = writer_->video_packets();
  copied_ = writer_->copied_packets();
  writer_.reset();
  if (output_ == kStandardOutput) return Status::ok();
  if (::rename(temp_.c_str(), output_.c_str()) != 0) {
    const std::string err = std::strerror(errno);
    discard();
    return fail_out(output_, "cannot move the finished file into place: " + err);
  }
  temp_.clear();
  return Status::ok();
}

// A library callback: every frame handed to a function, in order.
class CallbackSink final : public OutputSink {
 public:
  explicit CallbackSink(FrameCallback fn) : fn_(std::move(fn)) {}
  FrameMemory memory() const noexcept override { return FrameMemory::host; }
  Status consume(PipelineFrame f, FrameRecord&) override {
    HISTEQ_TRY(fn_(f));
    ++frames_;
    return Status::ok();
  }
  Status finish() override { return Status::ok(); }
  std::string description() const override { return "callback"; }
  SinkCounters counters() const noexcept override { return {frames_.load(), frames_.load(), 0}; }

 private:
  FrameCallback fn_;
  std::atomic<int64_t> frames_{0};
};

// -f null, as ffmpeg's: every frame decoded and equalized, then let go where it is (a device frame
// stays on the device), nothing encoded or written. What a batch's throughput is measured with when
// the encoder must not be the bound, and a check that a file decodes to its end.
class NullSink final : public OutputSink {
 public:
  explicit NullSink(std::function<void(int64_t, double)> on_frame) : on_frame_(std::move(on_frame)) {}
  FrameMemory memory() const noexcept override { return FrameMemory::none; }
  Status consume(PipelineFrame f, FrameRecord& rec) override {
    f.frame.reset();
    const int64_t n = ++frames_;
    if (on_frame_) on_frame_(n, rec.time_s);
    return Status::ok();
  }
  Status finish() override { return Status::ok(); }
  std::string description() const override { return "null (nothing written)"; }
  SinkCounters counters() const noexcept override { return {frames_.load(), frames_.load(), 0}; }

 private:
  std::function<void(int64_t, double)> on_frame_;
  std::atomic<int64_t> frames_{0};
};

int64_t now_ns() { return std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now().time_since_epoch()).count(); }

// Headless presentation: nothing is drawn, but frames are held to their schedule exactly as a
// display would hold them, so late and dropped frames mean what they will mean with a window.
class Presenter final : public OutputSink {
 public:
  explicit Presenter(const OutputRequest& r) : realtime_(r.realtime), pacer_(r.interval_s), on_frame_(r.on_frame) {}
  FrameMemory memory() const noexcept override { return FrameMemory::none; }
  Status consume(PipelineFrame f, FrameRecord& rec) override {
    const double time_s = f.frame->time_s;
    if (realtime_) {
      const int64_t capture = f.frame->timing.capture_ns;
      const auto plan = capture > 0 ? pacer_.plan_live(capture, now_ns()) : pacer_.plan(time_s, now_ns());
      if (plan.drop) {
        rec.dropped = true;
        return took(time_s);
      }
      std::this_thread::sleep_until(Clock::time_point(std::chrono::nanoseconds(plan.due_ns)));
      const int64_t a = now_ns();
      f.frame.reset();  // "present": hand the frame back (a window would draw it here)
      rec.timing.set(video::stage::present, (now_ns() - a) / 1e6);
      rec.late = pacer_.late(plan.due_ns, a);
    } else {
      const int64_t a = now_ns();
      f.frame.reset();
      rec.timing.set(video::stage::present, (now_ns() - a) / 1e6);
    }
    ++shown_;
    return took(time_s);
  }
  Status finish() override { return Status::ok(); }
  std::string description() const override { return "headless"; }
  SinkCounters counters() const noexcept override { return {frames_.load(), shown_.load(), 0}; }

 private:
  Status took(double time_s) {
    const int64_t n = ++frames_;
    if (on_frame_) on_frame_(n, time_s);
    return Status::ok();
  }
  bool realtime_;
  Pacer pacer_;
  std::function<void(int64_t, double)> on_frame_;
  std::atomic<int64_t> frames_{0}, shown_{0};
};

}  // namespace

const std::string& OutputSink::partial_path() const {
  static const std::string none;
  return none;
}

bool writes_nothing(const OutputRequest& r) noexcept { return r.format == "null" && !r.callback && !r.present; }

void want_frames(EqualizerOptions& eq, FrameMemory memory) noexcept {
  eq.download = memory == FrameMemory::host;
  eq.keep_on_device = memory == FrameMemory::device;
}

Status check_output(const OutputRequest& r, const std::string& input) {
  if (r.callback && r.present) return HISTEQ_ERROR(Code::invalid_argument, "give either a callback or the presenter, not both");
  if (r.callback || r.present) {
    if (!r.path.empty()) return HISTEQ_ERROR(Code::invalid_argument, r.path + ": give either an output file or a callback, not both");
    return Status::ok();
  }
  if (r.path.empty()) return HISTEQ_ERROR(Code::invalid_argument, "no output file given (-o OUT)");
  if (writes_nothing(r)) {
    if (!r.encoder.codec.empty() || r.encoder.crf >= 0 || !r.encoder.preset.empty())
      return HISTEQ_ERROR(Code::invalid_argument, "-f null encodes nothing: drop -c, --crf and --preset");
    return Status::ok();  // the name is not opened: "-o -", as ffmpeg's "-f null -"
  }
  if (auto container = output_container(r, nullptr); !container) return container.status();
  if (r.path == kStandardOutput) return Status::ok();
  if (r.path.back() == '/') return fail_out(r.path, "is a folder, not a file name", Code::invalid_argument);
  struct stat out_st {}, in_st {};
  if (::stat(r.path.c_str(), &out_st) == 0) {
    if (S_ISDIR(out_st.st_mode)) return fail_out(r.path, "is a folder, not a file name", Code::invalid_argument);
    if (input != "-" && ::stat(input.c_str(), &in_st) == 0 && in_st.st_dev == out_st.st_dev && in_st.st_ino == out_st.st_ino)
      return fail_out(r.path, "is the input file; choose another output name", Code::invalid_argument);
    if (!r.overwrite) return fail_out(r.path, "already exists (use -y to overwrite it)", Code::invalid_argument);
  }
  return Status::ok();
}

Result<std::unique_ptr<OutputSink>> open_output(const OutputRequest& r, OpenedSource& source, std::vector<std::string>& notes) {
  if (r.callback || r.present) {
    HISTEQ_TRY(check_output(r, ""));
    if (r.present) return std::unique_ptr<OutputSink>(std::make_unique<Presenter>(r));
    return std::unique_ptr<OutputSink>(std::make_unique<CallbackSink>(r.callback));
  }
  if (writes_nothing(r)) {
    HISTEQ_TRY(check_output(r, ""));
    return std::unique_ptr<OutputSink>(std::make_unique<NullSink>(r.on_frame));
  }
  if (source.file == nullptr)
    return HISTEQ_ERROR(Code::unsupported, r.path + ": writing a file needs a video input (not the synthetic source)");
  return FileSink::open(r, *source.file, notes);
}

}  // namespace histeq::pipeline
