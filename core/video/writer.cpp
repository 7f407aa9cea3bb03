#include "core/video/writer.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <mutex>

#include "core/cuda/device.h"
#include "core/video/audio_cut.h"
#include "core/video/av_util.h"
#include "core/video/stream_plan.h"

extern "C" {
#include <libavutil/opt.h>
#include <libswscale/swscale.h>
}

namespace histeq::video {

using namespace detail;

namespace {

bool odd_along_subsampled_axis(const FrameFormat& f) {
  return (f.chroma_shift_x > 0 && (f.width & 1)) || (f.chroma_shift_y > 0 && (f.height & 1));
}

bool encoder_takes(const AVCodec* c, int pix_fmt) {
  if (c->pix_fmts == nullptr) return true;
  for (const AVPixelFormat* p = c->pix_fmts; *p != AV_PIX_FMT_NONE; ++p)
    if (*p == pix_fmt) return true;
  return false;
}

std::string pix_name(int f) {
  const char* n = av_get_pix_fmt_name(static_cast<AVPixelFormat>(f));
  return n ? n : "?";
}

// The muxers of the MP4 family, which go back to the start to write the index: they refuse a pipe.
constexpr const char* kSeekBackMuxers[] = {"mp4", "mov", "ipod", "ismv", "3gp", "3g2", "psp", "f4v"};
constexpr const char* kStreamingHint = "use a container that streams: -f nut, matroska, mpegts or yuv4mpegpipe";

}  // namespace

Result<std::string> container_named(const std::string& format) {
  const AVOutputFormat* f = format.empty() ? nullptr : av_guess_format(format.c_str(), nullptr, nullptr);
  if (f == nullptr && !format.empty() && format.find_first_of("./") == std::string::npos)
    f = av_guess_format(nullptr, ("x." + format).c_str(), nullptr);  // an extension: mkv, y4m, ts
  if (f == nullptr)
    return HISTEQ_ERROR(Code::invalid_argument, "-f " + format + ": no such container in this FFmpeg (nut, matroska, mpegts, "
                                                "yuv4mpegpipe, rawvideo, mp4, ...; `ffmpeg -muxers` lists them)");
  return std::string(f->name);
}

Status check_pipe_container(const std::string& name, const std::string& output) {
  const AVOutputFormat* f = av_guess_format(name.c_str(), nullptr, nullptr);
  if (f == nullptr) return container_named(name).status();
  if (f->flags & AVFMT_NOFILE)
    return HISTEQ_ERROR(Code::unsupported, output + ": the " + f->name + " container writes files of its own, not one stream; " +
                                               kStreamingHint);
  for (const char* m : kSeekBackMuxers)
    if (name == m)
      return HISTEQ_ERROR(Code::unsupported, output + ": the " + name + " container cannot be written to a pipe (its muxer goes "
                                                 "back to write the index); " + kStreamingHint);
  return Status::ok();
}

std::string raw_container_codec(const std::string& name) {
  const AVOutputFormat* f = av_guess_format(name.c_str(), nullptr, nullptr);
  if (f == nullptr || f->audio_codec != AV_CODEC_ID_NONE) return "";
  if (f->video_codec != AV_CODEC_ID_RAWVIDEO && f->video_codec != AV_CODEC_ID_WRAPPED_AVFRAME) return "";
  const AVCodec* c = avcodec_find_encoder(f->video_codec);
  return c != nullptr ? c->name : "";
}

bool encoder_takes(const std::string& codec, const FrameFormat& f) {
  const AVCodec* c = avcodec_find_encoder_by_name(codec.c_str());
  if (c == nullptr || c->type != AVMEDIA_TYPE_VIDEO) return false;
  const bool odd_ok = c->id == AV_CODEC_ID_FFV1 || c->id == AV_CODEC_ID_RAWVIDEO;
  return (odd_ok || !odd_along_subsampled_axis(f)) && encoder_takes(c, f.av_pix_fmt());
}

Result<FrameFormat> choose_format(const std::string& codec, const NativeVideo& native, std::vector<std::string>& notes) {
  const AVCodec* c = avcodec_find_encoder_by_name(codec.c_str());
  if (c == nullptr) return HISTEQ_ERROR(Code::not_found, "no encoder named '" + codec + "' in this FFmpeg");
  if (c->type != AVMEDIA_TYPE_VIDEO) return HISTEQ_ERROR(Code::invalid_argument, "'" + codec + "' is not a video encoder");
  bool full = false;
  const FrameFormat want = natural_format(strip_jpeg_range(static_cast<AVPixelFormat>(native.av_pix_fmt), &full),
                                         native.width, native.height);
  // ffv1 and rawvideo store chroma planes of ceil(w/2) samples; block-based codecs cannot.
  const bool odd_ok = c->id == AV_CODEC_ID_FFV1 || c->id == AV_CODEC_ID_RAWVIDEO;
  auto fits = [&](const FrameFormat& f) {
    return (odd_ok || !odd_along_subsampled_axis(f)) && encoder_takes(c, f.av_pix_fmt());
  };
  std::vector<FrameFormat> candidates;
  auto add = [&](int depth, int sx, int sy) {
    FrameFormat f = want;
    f.bit_depth = depth;
    f.chroma_shift_x = sx;
    f.chroma_shift_y = sy;
    candidates.push_back(f);
  };
  add(want.bit_depth, want.chroma_shift_x, want.chroma_shift_y);
  add(8, want.chroma_shift_x, want.chroma_shift_y);
  add(want.bit_depth, 1, 1);
  add(8, 1, 1);
  add(want.bit_depth, 0, 0);
  add(8, 0, 0);
  for (const FrameFormat& f : candidates) {
    if (!fits(f)) continue;
    if (f.bit_depth != want.bit_depth)
      notes.push_back(codec + " cannot encode " + std::to_string(want.bit_depth) + "-bit video: the output is 8-bit");
    if (f.chroma_shift_x != want.chroma_shift_x || f.chroma_shift_y != want.chroma_shift_y) {
      if (f.chroma_shift_x == 0 && f.chroma_shift_y == 0 && odd_along_subsampled_axis(want))
        notes.push_back(std::to_string(want.width) + "x" + std::to_string(want.height) + " has an odd size, which " + codec +
                        " cannot code with " + want.chroma_name() + " chroma: the output is 4:4:4 (chroma samples duplicated, not resampled)");
      else
        notes.push_back(codec + " cannot encode " + want.chroma_name() + " chroma: the output is " + f.chroma_name());
    }
    return f;
  }
  return HISTEQ_ERROR(Code::unsupported, codec + " cannot encode " + want.describe() + " video (" + native.pix_fmt_name +
                                             ") in any layout histeq produces; try --codec libx264 or ffv1");
}

namespace {

// The encoder `name` when this FFmpeg has it and the container holds its codec.
const AVCodec* encoder_for(const char* name, const AVOutputFormat* of) {
  const AVCodec* c = avcodec_find_encoder_by_name(name);
  return c != nullptr && detail::container_holds(of, c->id) ? c : nullptr;
}

}  // namespace

Result<std::string> default_encoder(const std::string& path, const std::string& input_codec, std::vector<std::string>& notes,
                                    const std::string& format) {
  const AVOutputFormat* of = av_guess_format(format.empty() ? nullptr : format.c_str(), path.c_str(), nullptr);
  if (of == nullptr) return std::string("libx264");  // the writer says why the name is no container
  static const char* const kFollow[][2] = {{"h264", "libx264"}, {"hevc", "libx265"}, {"vp9", "libvpx-vp9"}, {"vp8", "libvpx"}};
  // A raw container (yuv4mpegpipe, rawvideo) takes its own raw frames only.
  if (of->video_codec == AV_CODEC_ID_WRAPPED_AVFRAME || of->video_codec == AV_CODEC_ID_RAWVIDEO)
    if (const AVCodec* raw = avcodec_find_encoder(of->video_codec)) return std::string(raw->name);
  std::string missed;  // the input's encoder, which this FFmpeg or the container lacks
  for (const auto& f : kFollow) {
    if (input_codec != f[0]) continue;
    if (encoder_for(f[1], of) != nullptr) return std::string(f[1]);
    missed = f[1];
  }
  const AVCodec* c = encoder_for("libx264", of);
  if (c == nullptr) c = avcodec_find_encoder(of->video_codec);  // the container's own
  if (c == nullptr)
    return HISTEQ_ERROR(Code::unsupported, path + ": this FFmpeg has no encoder for the " + of->name + " container's video; name one with -c");
  if (!missed.empty()) {
    const bool have = avcodec_find_encoder_by_name(missed.c_str()) != nullptr;
    notes.push_back("the input is " + input_codec + ", but " +
                    (have ? std::string("the ") + of->name + " container cannot hold it" : "this FFmpeg has no " + missed + " encoder") +
                    ": the video is encoded with " + c->name);
  } else if (std::string(c->name) != "libx264") {
    notes.push_back(std::string("the ") + of->name + " container cannot hold H.264: the video is encoded with " + c->name);
  }
  return std::string(c->name);
}

// Each option is set on a context that is then thrown away: a value is checked as the encoder
// will take it.
Status check_encoder_options(const std::string& codec_name, const std::vector<std::pair<std::string, std::string>>& options) {
  if (options.empty()) return Status::ok();
  const AVCodec* codec = avcodec_find_encoder_by_name(codec_name.c_str());
  if (codec == nullptr) return HISTEQ_ERROR(Code::not_found, "no encoder named '" + codec_name + "' in this FFmpeg");
  AvCodecPtr probe(avcodec_alloc_context3(codec));
  if (!probe) return HISTEQ_ERROR(Code::out_of_memory, "out of memory");
  for (const auto& [key, value] : options) {
    if (av_opt_find(probe.get(), key.c_str(), nullptr, 0, AV_OPT_SEARCH_CHILDREN) == nullptr)
      return HISTEQ_ERROR(Code::invalid_argument, "--encoder-opt " + key + ": the " + codec_name + " encoder has no option '" + key + "'");
    if (int r = av_opt_set(probe.get(), key.c_str(), value.c_str(), AV_OPT_SEARCH_CHILDREN); r < 0)
      return HISTEQ_ERROR(Code::invalid_argument, "--encoder-opt " + key + "=" + value + ": the " + codec_name + " encoder refuses it (" +
                                                      av_error(r) + ")");
  }
  return Status::ok();
}

Result<FrameFormat> format_for_pix_fmt(const std::string& codec, const std::string& name, const NativeVideo& native) {
  const AVPixelFormat pf = av_get_pix_fmt(name.c_str());
  if (pf == AV_PIX_FMT_NONE) return HISTEQ_ERROR(Code::invalid_argument, "--pix-fmt " + name + ": no such pixel format (ffmpeg -pix_fmts lists them)");
  const AVCodec* c = avcodec_find_encoder_by_name(codec.c_str());
  if (c == nullptr) return HISTEQ_ERROR(Code::not_found, "no encoder named '" + codec + "' in this FFmpeg");
  if (!encoder_takes(c, pf)) {
    std::string takes;
    for (const AVPixelFormat* p = c->pix_fmts; p != nullptr && *p != AV_PIX_FMT_NONE; ++p) takes += (takes.empty() ? "" : ", ") + pix_name(*p);
    return HISTEQ_ERROR(Code::invalid_argument, "--pix-fmt " + name + ": the " + codec + " encoder does not take it (it takes " + takes + ")");
  }
  const FrameFormat f = natural_format(pf, native.width, native.height);
  if (f.av_pix_fmt() != pf)
    return HISTEQ_ERROR(Code::invalid_argument, "--pix-fmt " + name + ": histeq writes planar YUV 4:2:0, 4:2:2 or 4:4:4 of 8 or 10 bits "
                                                "(yuv420p, yuv422p, yuv444p, yuv420p10le, ...)");
  if (!encoder_takes(codec, f))
    return HISTEQ_ERROR(Code::invalid_argument, "--pix-fmt " + name + ": " + std::to_string(native.width) + "x" + std::to_string(native.height) +
                                                " has an odd size, which " + codec + " cannot code with subsampled chroma");
  return f;
}

struct VideoWriter::Impl {
  WriterOptions opts;
  FrameFormat format;
  LogScope log;                 // FFmpeg's error lines of this writer's contexts
  AVFormatContext* oc = nullptr;
  const AVCodec* codec = nullptr;
  AvCodecPtr enc;
  AvPacketPtr pkt;
  AvFramePtr wrapper;           // for frames that are not FFmpeg frames (Frame::wrap)
  std::unique_ptr<FramePool> convert_pool;  // frames of another layout (NV12/P010 from NVDEC) become `format`
  SwsContext* sws = nullptr;
  AVRational in_tb{1, 1};       // the decoded stream's time base (Frame::pts)
  int video_out = -1;
  std::vector<int> map;         // input stream -> output stream, -1: not copied
  std::vector<AVRational> in_tbs;
  // A trimmed export: the cut in stream seconds, the video's shift (input ticks), and per input
  // stream its audio cutter (null: copied as it is).
  double cut_start_s = 0, cut_end_s = 0;
  int64_t video_offset = 0;
  std::vector<std::unique_ptr<detail::AudioCut>> cuts;
  int ncut = 0;
  std::mutex mux_mu;
  bool header_written = false, finished = false;
  int64_t last_pts = AV_NOPTS_VALUE;
  std::atomic<int64_t> frames{0}, vpackets{0}, cpackets{0};
  std::vector<int64_t> copied_dts;  // per output stream: the last copied packet's decode time (the decode thread)
  std::vector<int64_t> copied_end;  // and where it ends (its decode time plus its duration, when it has one)
  int ncopied = 0;
  std::string describe;

  ~Impl() {
    log.disown(sws);
    sws_freeContext(sws);
    log.disown(enc.get());
    enc.reset();
    if (oc != nullptr) {
      log.disown(oc);
      if (!(oc->oformat->flags & AVFMT_NOFILE)) avio_closep(&oc->pb);
      avformat_free_context(oc);
    }
  }

  Status fail(const std::string& cause, Code code = Code::io_error) const {
    return HISTEQ_ERROR(code, opts.path + ": " + cause);
  }

  // open(): container -> encoder -> video stream -> copied streams -> header -> description.
  Status create_container();
  Status open_encoder(const VideoInput& input);
  int try_open_encoder(const VideoInput& input, AVRational tb);
  bool has_private_option(const char* name) const;
  Status check_encoder_options();
  Status add_video_stream(const VideoInput& input);
  Status add_copied_streams(const VideoInput& input, std::vector<std::string>& notes);
  Status add_encoded_stream(const AVStream* is, const detail::StreamDecision& d, std::vector<std::string>& notes);
  Status write_header();
  void make_description();

  Result<FramePtr> convert(const Frame& f);
  // A copied packet's decode time made to increase on its output stream `out` (write_copied).
  void keep_increasing(AVPacket* p, int out);

  // A muxer or output error `e` while doing `what`; a pipe whose reader went away (EPIPE: SIGPIPE
  // is ignored) is said as such.
  Status write_failed(const std::string& what, int e) const {
    if (e == AVERROR(EPIPE))
      return fail("the reader closed the pipe (broken pipe) after " + std::to_string(frames.load()) + " frames; the output is incomplete");
    return fail(what + log.describe_failure(e));
  }

  Status write(AVPacket* p) {  // takes p's reference
    std::lock_guard<std::mutex> l(mux_mu);
    const LogScope::Active active(log);
    const int e = av_interleaved_write_frame(oc, p);
    if (e < 0) return write_failed("cannot write: ", e);
    return Status::ok();
  }

  Status drain() {
    for (;;) {
      const int e = avcodec_receive_packet(enc.get(), pkt.get());
      if (e == AVERROR(EAGAIN) || e == AVERROR_EOF) return Status::ok();
      if (e < 0) return fail("encoder error: " + log.describe_failure(e));
      av_packet_rescale_ts(pkt.get(), enc->time_base, oc->streams[video_out]->time_base);
      pkt->stream_index = video_out;
      ++vpackets;
      HISTEQ_TRY(write(pkt.get()));
    }
  }
};

VideoWriter::VideoWriter() : impl_(std::make_unique<Impl>()) {}
VideoWriter::~VideoWriter() = default;

VideoInput video_input_of(const FileSource& src) {
  VideoInput in;
  const AVFormatContext* ic = src.format_context();
  AVStream* vs = ic->streams[src.video_stream_index()];
  in.time_base = to_rational(vs->time_base);
  in.frame_rate = to_rational(av_guess_frame_rate(const_cast<AVFormatContext*>(ic), vs, nullptr));
  in.sample_aspect = to_rational(vs->sample_aspect_ratio.num > 0 ? vs->sample_aspect_ratio : vs->codecpar->sample_aspect_ratio);
  in.color = src.info().color;
  in.copy_from = &src;
  in.origin_s = src.time_origin_s();
  return in;
}

// The output container from the name, and the encoder, which it must be able to hold.
Status VideoWriter::Impl::create_container() {
  const char* muxer = opts.format.empty() ? nullptr : opts.format.c_str();
  if (avformat_alloc_output_context2(&oc, nullptr, muxer, opts.path.c_str()) < 0 || oc == nullptr) {
    if (muxer != nullptr) return container_named(opts.format).status();
    return fail("cannot tell the container from the name (use an extension such as .mp4, .mkv, .mov)", Code::invalid_argument);
  }
  log.own(oc);
  codec = avcodec_find_encoder_by_name(opts.codec.c_str());
  if (codec == nullptr) return HISTEQ_ERROR(Code::not_found, "no encoder named '" + opts.codec + "' in this FFmpeg");
  const std::string raw = raw_container_codec(oc->oformat->name);
  if (!raw.empty() && codec->id != oc->oformat->video_codec)
    return fail(std::string("the ") + oc->oformat->name + " container holds only uncompressed video (-c " + raw + ", the default "
                "with it), not " + codec->name, Code::unsupported);
  // FFmpeg writes and reads y4m's 10- and 16-bit layouts, which the format's own list lacks.
  if (std::strcmp(oc->oformat->name, "yuv4mpegpipe") == 0) oc->strict_std_compliance = FF_COMPLIANCE_UNOFFICIAL;
  if (avformat_query_codec(oc->oformat, codec->id, FF_COMPLIANCE_NORMAL) == 0)
    return fail(std::string("the ") + oc->oformat->name + " container cannot hold " + codec->name + " video", Code::unsupported);
  return Status::ok();
}

// One attempt at the encoder with time base `tb`: the input's timing, aspect and colour description.
int VideoWriter::Impl::try_open_encoder(const VideoInput& input, AVRational tb) {
  log.disown(enc.get());
  enc.reset(avcodec_alloc_context3(codec));
  if (!enc) return AVERROR(ENOMEM);
  log.own(enc.get());
  AVCodecContext* e = enc.get();
  e->opaque = &log;
  e->width = format.width;
  e->height = format.height;
  e->pix_fmt = static_cast<AVPixelFormat>(format.av_pix_fmt());
  e->time_base = tb;
  const AVRational rate = to_av(input.frame_rate);
  if (rate.num > 0 && rate.den > 0) e->framerate = rate;
  e->sample_aspect_ratio = to_av(input.sample_aspect);
  const ColorTags& ct = input.color;
  e->color_range = static_cast<AVColorRange>(ct.range);
  e->color_primaries = static_cast<AVColorPrimaries>(ct.primaries);
  e->color_trc = static_cast<AVColorTransferCharacteristic>(ct.transfer);
  e->colorspace = static_cast<AVColorSpace>(ct.space);
  e->chroma_sample_location = static_cast<AVChromaLocation>(ct.chroma_location);
  e->thread_count = opts.threads;
  if (oc->oformat->flags & AVFMT_GLOBALHEADER) e->flags |= AV_CODEC_FLAG_GLOBAL_HEADER;
  if (opts.control.bit_rate > 0) e->bit_rate = opts.control.bit_rate;
  if (opts.control.gop > 0) e->gop_size = opts.control.gop;
  AVDictionary* o = nullptr;
  if (opts.crf >= 0) av_dict_set_int(&o, "crf", opts.crf, 0);
  if (!opts.preset.empty()) av_dict_set(&o, "preset", opts.preset.c_str(), 0);
  // x265 prints its banner and statistics on stderr itself, past FFmpeg's log: errors only (the
  // user's own x265-params come after, so theirs win).
  if (codec->id == AV_CODEC_ID_HEVC && has_private_option("x265-params")) av_dict_set(&o, "x265-params", "log-level=error", 0);
  for (const auto& [key, value] : opts.control.options) {
    const AVDictionaryEntry* prev = key == "x265-params" ? av_dict_get(o, key.c_str(), nullptr, 0) : nullptr;
    av_dict_set(&o, key.c_str(), prev != nullptr ? (std::string(prev->value) + ":" + value).c_str() : value.c_str(), 0);
  }
  const int r = avcodec_open2(e, codec, &o);
  av_dict_free(&o);
  return r;
}

bool VideoWriter::Impl::has_private_option(const char* name) const {
  // AV_OPT_SEARCH_FAKE_OBJ: look the option up in the class without an instance.
  return codec->priv_class != nullptr &&
         av_opt_find(const_cast<AVClass**>(&codec->priv_class), name, nullptr, 0, AV_OPT_SEARCH_FAKE_OBJ) != nullptr;
}

// --encoder-opt, before any frame (the output's name before the cause).
Status VideoWriter::Impl::check_encoder_options() {
  const Status s = video::check_encoder_options(codec->name, opts.control.options);
  return s ? s : fail(s.message(), s.code());
}

Status VideoWriter::Impl::open_encoder(const VideoInput& input) {
  auto has_option = [&](const char* name) { return has_private_option(name); };
  HISTEQ_TRY(check_encoder_options());
  if (opts.crf >= 0 && !has_option("crf"))
    return HISTEQ_ERROR(Code::invalid_argument, std::string("--crf: the ") + codec->name + " encoder has no crf setting");
  if (!opts.preset.empty() && !has_option("preset"))
    return HISTEQ_ERROR(Code::invalid_argument, std::string("--preset: the ") + codec->name + " encoder has no presets");
  const AVRational rate = to_av(input.frame_rate);
  const bool have_rate = rate.num > 0 && rate.den > 0;
  // A container without timestamps (yuv4mpegpipe, rawvideo) has only a frame rate, which it takes
  // from the stream's time base: code in frame-rate ticks there.
  const bool frame_ticks = have_rate && (oc->oformat->flags & AVFMT_NOTIMESTAMPS);
  int e = try_open_encoder(input, frame_ticks ? av_inv_q(rate) : in_tb);
  if (e < 0 && have_rate && !frame_ticks) {
    // Some encoders (mpeg4: denominators <= 65535) refuse fine time bases such as 1/90000: code in
    // frame-rate ticks instead; timestamps are rescaled (and kept strictly increasing).
    log.clear();
    e = try_open_encoder(input, av_inv_q(rate));
  }
  if (e < 0) {
    if (!opts.preset.empty() && e == AVERROR(EINVAL) && log.last_error().find("preset") != std::string::npos)
      return HISTEQ_ERROR(Code::invalid_argument, "--preset '" + opts.preset + "': " + log.last_error());
    const std::string name = codec->name;
    if (name.size() > 6 && name.compare(name.size() - 6, 6, "_nvenc") == 0) {
      // NVENC: say which of "no NVIDIA driver", "a GPU without the encoder engine" it is.
      auto dev = cuda::have_device() ? cuda::device_info() : Result<cuda::DeviceInfo>(HISTEQ_ERROR(Code::no_device, ""));
      const std::string where = dev ? "this GPU (" + dev->name + ") has no usable NVENC encoder"
                                    : std::string("there is no NVIDIA GPU with a driver here");
      return fail("--codec " + name + ": " + where + " (" + log.describe_failure(e) + "); use a software encoder such as libx264",
                  Code::unsupported);
    }
    return fail(std::string("cannot open the ") + codec->name + " encoder: " + log.describe_failure(e), Code::unsupported);
  }
  return Status::ok();
}

// The video stream first: the encoder's parameters, and the input stream's rate, disposition,
// metadata and side data (display matrix, HDR metadata, ...).
Status VideoWriter::Impl::add_video_stream(const VideoInput& input) {
  AVStream* ovs = avformat_new_stream(oc, nullptr);
  if (ovs == nullptr) return fail("out of memory", Code::out_of_memory);
  video_out = ovs->index;
  if (int r = avcodec_parameters_from_context(ovs->codecpar, enc.get()); r < 0) return fail("encoder parameters: " + av_error(r));
  ovs->time_base = enc->time_base;
  ovs->sample_aspect_ratio = enc->sample_aspect_ratio;
  if (!opts.control.tag.empty()) {
    const std::string& t = opts.control.tag;
    if (t.size() != 4) return fail("--tag " + t + ": a codec tag is four characters (hvc1, avc1, ...)", Code::invalid_argument);
    ovs->codecpar->codec_tag = MKTAG(t[0], t[1], t[2], t[3]);  // the muxer checks it against the codec in its header
  }
  const AVRational rate = to_av(input.frame_rate);
  if (rate.num > 0 && rate.den > 0) ovs->avg_frame_rate = ovs->r_frame_rate = rate;
  const AVFormatContext* ic = input.copy_from ? input.copy_from->format_context() : nullptr;
  if (ic == nullptr) return Status::ok();
  const AVStream* ivs = ic->streams[input.copy_from->video_stream_index()];
  ovs->avg_frame_rate = ivs->avg_frame_rate;
  ovs->r_frame_rate = ivs->r_frame_rate;
  ovs->disposition = ivs->disposition;
  av_dict_copy(&ovs->metadata, ivs->metadata, 0);
  av_dict_set(&ovs->metadata, "encoder", nullptr, 0);
  for (int i = 0; i < ivs->nb_side_data; ++i) {
    const AVPacketSideData& sd = ivs->side_data[i];
    if (sd.type == AV_PKT_DATA_CPB_PROPERTIES) continue;  // the old encoder's buffer model
    uint8_t* dst = av_stream_new_side_data(ovs, sd.type, sd.size);
    if (dst == nullptr) return fail("out of memory", Code::out_of_memory);
    std::memcpy(dst, sd.data, sd.size);
  }
  return Status::ok();
}

// Then the input's audio and subtitle streams, in input order, as the stream plan says: copied,
// encoded again (AudioCut: a trimmed export's cut, or a codec the container cannot hold), or left
// out (with a note, or an error for a stream the user named).
Status VideoWriter::Impl::add_copied_streams(const VideoInput& input, std::vector<std::string>& notes) {
  const AVFormatContext* ic = input.copy_from ? input.copy_from->format_context() : nullptr;
  const unsigned nin = ic ? ic->nb_streams : 0;
  map.assign(nin, -1);
  in_tbs.resize(nin);
  cuts.resize(nin);
  if (ic == nullptr) return Status::ok();
  auto plan = detail::plan_streams(ic, input.copy_from->video_stream_index(), oc->oformat, opts.streams, opts.range.trimmed(),
                                   opts.path, notes);
  if (!plan) return plan.status();
  for (unsigned i = 0; i < nin; ++i) {
    const AVStream* is = ic->streams[i];
    in_tbs[i] = is->time_base;
    const detail::StreamDecision& d = (*plan)[i];
    if (d.action == detail::StreamAction::leave_out) continue;
    if (d.action == detail::StreamAction::encode) {
      HISTEQ_TRY(add_encoded_stream(is, d, notes));
      continue;
    }
    AVStream* os = avformat_new_stream(oc, nullptr);
    if (os == nullptr) return fail("out of memory", Code::out_of_memory);
    if (int r = avcodec_parameters_copy(os->codecpar, is->codecpar); r < 0) return fail("stream copy: " + av_error(r));
    os->codecpar->codec_tag = 0;  // let the muxer pick its own tag for the codec
    os->time_base = is->time_base;
    os->disposition = is->disposition;
    av_dict_copy(&os->metadata, is->metadata, 0);
    for (int k = 0; k < is->nb_side_data; ++k) {
      const AVPacketSideData& sd = is->side_data[k];
      uint8_t* dst = av_stream_new_side_data(os, sd.type, sd.size);
      if (dst == nullptr) return fail("out of memory", Code::out_of_memory);
      std::memcpy(dst, sd.data, sd.size);
    }
    map[i] = os->index;
    ++ncopied;
  }
  av_dict_copy(&oc->metadata, ic->metadata, 0);
  av_dict_set(&oc->metadata, "encoder", nullptr, 0);  // the muxer writes its own
  return Status::ok();
}

// An audio stream decoded and encoded again: cut to a trimmed export's range, or whole (from
// stream time 0, so that it stays on the copied video's clock).
Status VideoWriter::Impl::add_encoded_stream(const AVStream* is, const detail::StreamDecision& d, std::vector<std::string>& notes) {
  const bool cut = opts.range.trimmed();
  const std::string what = "stream #" + std::to_string(is->index);  // AudioCut's note adds the codec, rate and channels
  std::string note;
  auto a = detail::AudioCut::create(is, oc, cut ? cut_start_s : 0, cut ? cut_end_s : 0, log, what, note, d.encoder, cut);
  if (!a) {
    // A cut that cannot be made leaves the stream out, as before; a whole stream the user or the
    // container asked to encode must be written.
    if (!cut || d.encoder != nullptr) return Status(a.status().code(), opts.path + ": " + a.status().message());
    notes.push_back(a.status().message() + "; it is left out");
    return Status::ok();
  }
  notes.push_back(d.reason.empty() ? note : note + " (" + d.reason + ")");
  map[static_cast<size_t>(is->index)] = a.value()->out_index();
  cuts[static_cast<size_t>(is->index)] = std::move(a.value());
  ++ncopied;
  ++ncut;
  return Status::ok();
}

Status VideoWriter::Impl::write_header() {
  if (!(oc->oformat->flags & AVFMT_NOFILE)) {
    if (int r = avio_open(&oc->pb, opts.temp_path.c_str(), AVIO_FLAG_WRITE); r < 0)
      return fail("cannot create " + opts.temp_path + ": " + av_error(r));
  }
  if (int r = avformat_write_header(oc, nullptr); r < 0) return write_failed("cannot write the container header: ", r);
  header_written = true;
  pkt.reset(av_packet_alloc());
  wrapper.reset(av_frame_alloc());
  if (!pkt || !wrapper) return fail("out of memory", Code::out_of_memory);
  return Status::ok();
}

void VideoWriter::Impl::make_description() {
  std::string d = codec->name;
  std::string settings;
  auto add = [&settings](const std::string& x) { settings += (settings.empty() ? "" : ", ") + x; };
  if (opts.crf >= 0) add("crf " + std::to_string(opts.crf));
  if (!opts.preset.empty()) add("preset " + opts.preset);
  if (opts.control.bit_rate > 0) add(std::to_string(opts.control.bit_rate / 1000) + " kb/s");
  if (opts.control.gop > 0) add("gop " + std::to_string(opts.control.gop));
  if (!opts.control.tag.empty()) add("tag " + opts.control.tag);
  for (const auto& [key, value] : opts.control.options) add(key + "=" + value);
  if (!settings.empty()) d += " (" + settings + ")";
  d += " " + pix_name(format.av_pix_fmt()) + " " + oc->oformat->name;
  const int ncopy = ncopied - ncut;
  if (ncopy > 0) d += ", " + std::to_string(ncopy) + (ncopy == 1 ? " stream" : " streams") + " copied";
  if (ncut > 0) d += ", " + std::to_string(ncut) + " audio " + (ncut == 1 ? "stream" : "streams") + (opts.range.trimmed() ? " cut" : " encoded");
  describe = d;
}

Result<std::unique_ptr<VideoWriter>> VideoWriter::open(const WriterOptions& opts, const VideoInput& input,
                                                        const FrameFormat& format, std::vector<std::string>& notes) {
  HISTEQ_TRY(validate(format));
  if (!input.time_base.valid()) return HISTEQ_ERROR(Code::invalid_argument, "VideoWriter: the input has no time base");
  std::unique_ptr<VideoWriter> w(new VideoWriter());
  Impl& m = *w->impl_;
  m.opts = opts;
  m.format = format;
  m.in_tb = to_av(input.time_base);
  if (opts.range.trimmed()) {
    if (input.copy_from == nullptr && opts.range.start_s > 0)
      return HISTEQ_ERROR(Code::invalid_argument, "VideoWriter: a trimmed export needs its input (copy_from)");
    m.cut_start_s = input.origin_s + opts.range.start_s;
    m.cut_end_s = opts.range.end_s > 0 ? input.origin_s + opts.range.end_s : 0;
    const double tb = av_q2d(m.in_tb);
    m.video_offset = std::llround(input.origin_s / tb) + std::llround(opts.range.start_s / tb);
  }
  const LogScope::Active active(m.log);
  HISTEQ_TRY(m.create_container());
  HISTEQ_TRY(m.open_encoder(input));
  HISTEQ_TRY(m.add_video_stream(input));
  HISTEQ_TRY(m.add_copied_streams(input, notes));
  HISTEQ_TRY(m.write_header());
  m.make_description();
  return w;
}

// A muxer refuses a decode time that does not increase. The source already joins the parts of a
// discontinuous input (ts_continuity.h); what is left is a packet or two of overlap where parts
// meet, moved a tick later as ffmpeg does, rather than the whole export failing.
void VideoWriter::Impl::keep_increasing(AVPacket* p, int out) {
  if (copied_dts.size() < oc->nb_streams) {
    copied_dts.resize(oc->nb_streams, AV_NOPTS_VALUE);
    copied_end.resize(oc->nb_streams, AV_NOPTS_VALUE);
  }
  int64_t& last = copied_dts[static_cast<size_t>(out)];
  int64_t& end = copied_end[static_cast<size_t>(out)];
  // A packet without a decode time (damaged input: a PES header without timestamps, in a codec
  // that gives no duration to count on) would have the muxer guess one, unchecked here, and a
  // guess that goes back fails the export ("non monotonically increasing dts"): it gets its
  // presentation time, else the end of the packet before it, and then the check below.
  if (p->dts == AV_NOPTS_VALUE && last != AV_NOPTS_VALUE) p->dts = p->pts != AV_NOPTS_VALUE ? p->pts : std::max(last + 1, end);
  if (p->dts != AV_NOPTS_VALUE && last != AV_NOPTS_VALUE && p->dts <= last) {
    const int64_t moved = last + 1 - p->dts;
    p->dts += moved;
    if (p->pts != AV_NOPTS_VALUE) p->pts = std::max(p->pts, p->dts);
  }
  if (p->dts != AV_NOPTS_VALUE) {
    last = p->dts;
    end = p->duration > 0 ? p->dts + p->duration : AV_NOPTS_VALUE;
  }
}

Status VideoWriter::write_copied(AVPacket* p) {
  Impl& m = *impl_;
  if (p->stream_index < 0 || p->stream_index >= static_cast<int>(m.map.size())) return Status::ok();
  const int out = m.map[p->stream_index];
  if (out < 0) return Status::ok();
  if (const auto& cut = m.cuts[static_cast<size_t>(p->stream_index)]) {
    const LogScope::Active active(m.log);
    return cut->feed(p, [&m](AVPacket* q) { return m.write(q); });
  }
  if (m.opts.range.trimmed()) {
    // A subtitle (or other copied) packet: kept where it overlaps the cut, from the cut on.
    const AVRational tb = m.in_tbs[p->stream_index];
    const int64_t ts = p->pts != AV_NOPTS_VALUE ? p->pts : p->dts;
    if (ts == AV_NOPTS_VALUE) return Status::ok();
    const int64_t start = std::llround(m.cut_start_s / av_q2d(tb));
    const int64_t end = m.cut_end_s > 0 ? std::llround(m.cut_end_s / av_q2d(tb)) : INT64_MAX;
    const int64_t stop = p->duration > 0 ? ts + p->duration : ts + 1;
    if (stop <= start || ts >= end) return Status::ok();
    int64_t begin = std::max(ts, start);
    if (p->duration > 0) p->duration = std::min(stop, end) - begin;
    p->pts = begin - start;
    p->dts = p->pts;
  }
  av_packet_rescale_ts(p, m.in_tbs[p->stream_index], m.oc->streams[out]->time_base);
  p->stream_index = out;
  p->pos = -1;
  m.keep_increasing(p, out);
  ++m.cpackets;
  return m.write(p);
}

// A frame of another layout than the encoder's (same size): NV12/P010 from NVDEC for an encoder
// that takes yuv420p(10), through swscale, without resampling (point chroma at equal subsampling).
Result<FramePtr> VideoWriter::Impl::convert(const Frame& f) {
  const FrameFormat& in = f.format();
  if (in.width != format.width || in.height != format.height)
    return HISTEQ_ERROR(Code::invalid_argument, "frame size differs from the encoder's");
  if (!convert_pool) {
    auto p = FramePool::create(format, MemoryKind::host);
    if (!p) return p.status();
    convert_pool = std::move(p.value());
  }
  log.disown(sws);
  sws = sws_getCachedContext(sws, in.width, in.height, static_cast<AVPixelFormat>(in.av_pix_fmt()), format.width, format.height,
                             static_cast<AVPixelFormat>(format.av_pix_fmt()), SWS_POINT, nullptr, nullptr, nullptr);
  if (sws == nullptr) return fail("cannot convert " + in.describe() + " frames to " + format.describe());
  log.own(sws);
  auto out = convert_pool->get();
  if (!out) return out.status();
  const uint8_t* src[4] = {nullptr, nullptr, nullptr, nullptr};
  int src_ls[4] = {0, 0, 0, 0};
  uint8_t* dst[4] = {nullptr, nullptr, nullptr, nullptr};
  int dst_ls[4] = {0, 0, 0, 0};
  for (int i = 0; i < f.plane_count(); ++i) {
    src[i] = static_cast<const uint8_t*>(f.plane(i).data);
    src_ls[i] = static_cast<int>(f.plane(i).pitch);
  }
  for (int i = 0; i < (*out)->plane_count(); ++i) {
    dst[i] = static_cast<uint8_t*>(const_cast<void*>((*out)->plane(i).data));
    dst_ls[i] = static_cast<int>((*out)->plane(i).pitch);
  }
  if (sws_scale(sws, src, src_ls, 0, in.height, dst, dst_ls) <= 0) return fail("pixel format conversion failed");
  (*out)->copy_props_from(f);
  return out;
}

Status VideoWriter::encode(const Frame& frame) {
  Impl& m = *impl_;
  if (frame.on_device()) return HISTEQ_ERROR(Code::invalid_argument, "the encoder takes host frames, not device frames");
  const LogScope::Active active(m.log);
  FramePtr converted;
  if (frame.format() != m.format) {
    auto c = m.convert(frame);
    if (!c) return c.status();
    converted = std::move(c.value());
  }
  const Frame& f = converted ? *converted : frame;
  AVFrame* av = av_frame_of(f);
  if (av == nullptr) {
    // A wrapped frame: describe its planes to FFmpeg (not reference-counted, so the encoder copies
    // what it keeps).
    av = m.wrapper.get();
    av_frame_unref(av);
    av->format = m.format.av_pix_fmt();
    av->width = m.format.width;
    av->height = m.format.height;
    for (int i = 0; i < f.plane_count(); ++i) {
      const PlaneRef r = f.plane(i);
      av->data[i] = static_cast<uint8_t*>(const_cast<void*>(r.data));
      av->linesize[i] = static_cast<int>(r.pitch);
    }
  }
  int64_t pts = av_rescale_q(f.pts - m.video_offset, m.in_tb, m.enc->time_base);
  if (m.last_pts != AV_NOPTS_VALUE && pts <= m.last_pts) pts = m.last_pts + 1;  // rounding into a coarser time base
  m.last_pts = pts;
  av->pts = pts;
  av->pict_type = AV_PICTURE_TYPE_NONE;
  av->sample_aspect_ratio = to_av(f.sample_aspect);
  av->color_range = static_cast<AVColorRange>(f.color.range);
  av->color_primaries = static_cast<AVColorPrimaries>(f.color.primaries);
  av->color_trc = static_cast<AVColorTransferCharacteristic>(f.color.transfer);
  av->colorspace = static_cast<AVColorSpace>(f.color.space);
  av->chroma_location = static_cast<AVChromaLocation>(f.color.chroma_location);
  const int e = avcodec_send_frame(m.enc.get(), av);
  if (av == m.wrapper.get()) {
    for (auto& d : av->data) d = nullptr;
  }
  if (e < 0) return m.fail("encoder error: " + m.log.describe_failure(e));
  ++m.frames;
  return m.drain();
}

Status VideoWriter::finish() {
  Impl& m = *impl_;
  if (m.finished) return Status::ok();
  const LogScope::Active active(m.log);
  const int e = avcodec_send_frame(m.enc.get(), nullptr);
  if (e < 0 && e != AVERROR_EOF) return m.fail("encoder error: " + m.log.describe_failure(e));
  HISTEQ_TRY(m.drain());
  for (auto& cut : m.cuts)
    if (cut) HISTEQ_TRY(cut->finish([&m](AVPacket* q) { return m.write(q); }));
  {
    std::lock_guard<std::mutex> l(m.mux_mu);
    if (int r = av_write_trailer(m.oc); r < 0) return m.write_failed("cannot finish the file: ", r);
  }
  if (!(m.oc->oformat->flags & AVFMT_NOFILE)) {
    if (int r = avio_closep(&m.oc->pb); r < 0) return m.write_failed("cannot close the file: ", r);
  }
  m.finished = true;
  return Status::ok();
}

int64_t VideoWriter::frames_sent() const noexcept { return impl_->frames.load(); }
int64_t VideoWriter::video_packets() const noexcept { return impl_->vpackets.load(); }
int64_t VideoWriter::copied_packets() const noexcept { return impl_->cpackets.load(); }
int VideoWriter::copied_streams() const noexcept { return impl_->ncopied; }
std::string VideoWriter::description() const { return impl_->describe; }

}  // namespace histeq::video
