#include "core/video/writer.h"

#include <atomic>
#include <cstring>
#include <mutex>

#include "core/video/av_util.h"

extern "C" {
#include <libavutil/opt.h>
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

}  // namespace

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

struct VideoWriter::Impl {
  WriterOptions opts;
  FrameFormat format;
  AVFormatContext* oc = nullptr;
  AvCodecPtr enc;
  AvPacketPtr pkt;
  AVRational in_tb{1, 1};      // the decoded stream's time base (Frame::pts)
  int video_out = -1;
  std::vector<int> map;         // input stream -> output stream, -1: not copied
  std::vector<AVRational> in_tbs;
  std::mutex mux_mu;
  bool header_written = false, finished = false;
  int64_t last_pts = AV_NOPTS_VALUE;
  std::atomic<int64_t> frames{0}, vpackets{0}, cpackets{0};
  int ncopied = 0;
  std::string describe;

  ~Impl() {
    if (oc != nullptr) {
      if (!(oc->oformat->flags & AVFMT_NOFILE)) avio_closep(&oc->pb);
      avformat_free_context(oc);
    }
  }

  Status fail(const std::string& cause, Code code = Code::io_error) const {
    return HISTEQ_ERROR(code, opts.path + ": " + cause);
  }

  Status write(AVPacket* p) {  // takes p's reference
    std::lock_guard<std::mutex> l(mux_mu);
    const int e = av_interleaved_write_frame(oc, p);
    if (e < 0) return fail("cannot write: " + describe_failure(e));
    return Status::ok();
  }

  Status drain() {
    for (;;) {
      const int e = avcodec_receive_packet(enc.get(), pkt.get());
      if (e == AVERROR(EAGAIN) || e == AVERROR_EOF) return Status::ok();
      if (e < 0) return fail("encoder error: " + describe_failure(e));
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
  return in;
}

Result<std::unique_ptr<VideoWriter>> VideoWriter::open(const WriterOptions& opts, const VideoInput& input,
                                                        const FrameFormat& format, std::vector<std::string>& notes) {
  install_log_capture();
  clear_last_log_error();
  HISTEQ_TRY(validate(format));
  if (!input.time_base.valid()) return HISTEQ_ERROR(Code::invalid_argument, "VideoWriter: the input has no time base");
  std::unique_ptr<VideoWriter> w(new VideoWriter());
  Impl& m = *w->impl_;
  m.opts = opts;
  m.format = format;
  const AVFormatContext* ic = input.copy_from ? input.copy_from->format_context() : nullptr;
  const AVStream* ivs = ic ? ic->streams[input.copy_from->video_stream_index()] : nullptr;
  m.in_tb = to_av(input.time_base);

  if (avformat_alloc_output_context2(&m.oc, nullptr, nullptr, opts.path.c_str()) < 0 || m.oc == nullptr)
    return m.fail("cannot tell the container from the name (use an extension such as .mp4, .mkv, .mov)", Code::invalid_argument);
  const AVOutputFormat* of = m.oc->oformat;

  const AVCodec* codec = avcodec_find_encoder_by_name(opts.codec.c_str());
  if (codec == nullptr) return HISTEQ_ERROR(Code::not_found, "no encoder named '" + opts.codec + "' in this FFmpeg");
  if (avformat_query_codec(of, codec->id, FF_COMPLIANCE_NORMAL) == 0)
    return m.fail(std::string("the ") + of->name + " container cannot hold " + codec->name + " video", Code::unsupported);

  // Encoder: the input's timing, aspect and colour description.
  const AVRational rate = to_av(input.frame_rate);
  auto open_encoder = [&](AVRational tb) -> int {
    m.enc.reset(avcodec_alloc_context3(codec));
    if (!m.enc) return AVERROR(ENOMEM);
    AVCodecContext* e = m.enc.get();
    e->width = format.width;
    e->height = format.height;
    e->pix_fmt = static_cast<AVPixelFormat>(format.av_pix_fmt());
    e->time_base = tb;
    if (rate.num > 0 && rate.den > 0) e->framerate = rate;
    e->sample_aspect_ratio = to_av(input.sample_aspect);
    const ColorTags& ct = input.color;
    e->color_range = static_cast<AVColorRange>(ct.range);
    e->color_primaries = static_cast<AVColorPrimaries>(ct.primaries);
    e->color_trc = static_cast<AVColorTransferCharacteristic>(ct.transfer);
    e->colorspace = static_cast<AVColorSpace>(ct.space);
    e->chroma_sample_location = static_cast<AVChromaLocation>(ct.chroma_location);
    e->thread_count = opts.threads;
    if (of->flags & AVFMT_GLOBALHEADER) e->flags |= AV_CODEC_FLAG_GLOBAL_HEADER;
    AVDictionary* o = nullptr;
    if (opts.crf >= 0) av_dict_set_int(&o, "crf", opts.crf, 0);
    if (!opts.preset.empty()) av_dict_set(&o, "preset", opts.preset.c_str(), 0);
    const int r = avcodec_open2(e, codec, &o);
    av_dict_free(&o);
    return r;
  };
  auto has_option = [&](const char* name) {
    // AV_OPT_SEARCH_FAKE_OBJ: look the option up in the class without an instance.
    return codec->priv_class != nullptr &&
           av_opt_find(const_cast<AVClass**>(&codec->priv_class), name, nullptr, 0, AV_OPT_SEARCH_FAKE_OBJ) != nullptr;
  };
  if (opts.crf >= 0 && !has_option("crf"))
    return HISTEQ_ERROR(Code::invalid_argument, std::string("--crf: the ") + codec->name + " encoder has no crf setting");
  if (!opts.preset.empty() && !has_option("preset"))
    return HISTEQ_ERROR(Code::invalid_argument, std::string("--preset: the ") + codec->name + " encoder has no presets");
  int e = open_encoder(m.in_tb);
  if (e < 0 && rate.num > 0 && rate.den > 0) {
    // Some encoders (mpeg4: denominators <= 65535) refuse fine time bases such as 1/90000: code in
    // frame-rate ticks instead; timestamps are rescaled (and kept strictly increasing).
    clear_last_log_error();
    e = open_encoder(av_inv_q(rate));
  }
  if (e < 0) {
    if (!opts.preset.empty() && e == AVERROR(EINVAL) && last_log_error().find("preset") != std::string::npos)
      return HISTEQ_ERROR(Code::invalid_argument, "--preset '" + opts.preset + "': " + last_log_error());
    return m.fail(std::string("cannot open the ") + codec->name + " encoder: " + describe_failure(e), Code::unsupported);
  }

  // Output streams: the video first, then the copied ones in input order.
  AVStream* ovs = avformat_new_stream(m.oc, nullptr);
  if (ovs == nullptr) return m.fail("out of memory", Code::out_of_memory);
  m.video_out = ovs->index;
  if (int r = avcodec_parameters_from_context(ovs->codecpar, m.enc.get()); r < 0) return m.fail("encoder parameters: " + av_error(r));
  ovs->time_base = m.enc->time_base;
  ovs->sample_aspect_ratio = m.enc->sample_aspect_ratio;
  if (rate.num > 0 && rate.den > 0) ovs->avg_frame_rate = ovs->r_frame_rate = rate;
  if (ivs != nullptr) {
    ovs->avg_frame_rate = ivs->avg_frame_rate;
    ovs->r_frame_rate = ivs->r_frame_rate;
    ovs->disposition = ivs->disposition;
    av_dict_copy(&ovs->metadata, ivs->metadata, 0);
    av_dict_set(&ovs->metadata, "encoder", nullptr, 0);
    for (int i = 0; i < ivs->nb_side_data; ++i) {
      const AVPacketSideData& sd = ivs->side_data[i];
      if (sd.type == AV_PKT_DATA_CPB_PROPERTIES) continue;  // the old encoder's buffer model
      uint8_t* dst = av_stream_new_side_data(ovs, sd.type, sd.size);
      if (dst == nullptr) return m.fail("out of memory", Code::out_of_memory);
      std::memcpy(dst, sd.data, sd.size);
    }
  }

  const unsigned nin = ic ? ic->nb_streams : 0;
  m.map.assign(nin, -1);
  m.in_tbs.resize(nin);
  for (unsigned i = 0; i < nin; ++i) {
    const AVStream* is = ic->streams[i];
    m.in_tbs[i] = is->time_base;
    if (static_cast<int>(i) == input.copy_from->video_stream_index()) continue;
    const AVMediaType type = is->codecpar->codec_type;
    const char* tname = av_get_media_type_string(type);
    const std::string what = "stream #" + std::to_string(i) + " (" + (tname ? tname : "unknown") + ", " +
                             avcodec_get_name(is->codecpar->codec_id) + ")";
    if (type != AVMEDIA_TYPE_AUDIO && type != AVMEDIA_TYPE_SUBTITLE) {
      notes.push_back(what + " is not copied: only the video, audio and subtitles are");
      continue;
    }
    if (avformat_query_codec(of, is->codecpar->codec_id, FF_COMPLIANCE_NORMAL) == 0) {
      notes.push_back(what + " is not copied: the " + of->name + " container cannot hold it");
      continue;
    }
    AVStream* os = avformat_new_stream(m.oc, nullptr);
    if (os == nullptr) return m.fail("out of memory", Code::out_of_memory);
    if (int r = avcodec_parameters_copy(os->codecpar, is->codecpar); r < 0) return m.fail("stream copy: " + av_error(r));
    os->codecpar->codec_tag = 0;  // let the muxer pick its own tag for the codec
    os->time_base = is->time_base;
    os->disposition = is->disposition;
    av_dict_copy(&os->metadata, is->metadata, 0);
    for (int k = 0; k < is->nb_side_data; ++k) {
      const AVPacketSideData& sd = is->side_data[k];
      uint8_t* dst = av_stream_new_side_data(os, sd.type, sd.size);
      if (dst == nullptr) return m.fail("out of memory", Code::out_of_memory);
      std::memcpy(dst, sd.data, sd.size);
    }
    m.map[i] = os->index;
    ++m.ncopied;
  }
  if (ic != nullptr) {
    av_dict_copy(&m.oc->metadata, ic->metadata, 0);
    av_dict_set(&m.oc->metadata, "encoder", nullptr, 0);  // the muxer writes its own
  }

  if (!(of->flags & AVFMT_NOFILE)) {
    if (int r = avio_open(&m.oc->pb, opts.temp_path.c_str(), AVIO_FLAG_WRITE); r < 0)
      return m.fail("cannot create " + opts.temp_path + ": " + av_error(r));
  }
  if (int r = avformat_write_header(m.oc, nullptr); r < 0) return m.fail("cannot write the container header: " + describe_failure(r));
  m.header_written = true;
  m.pkt.reset(av_packet_alloc());
  if (!m.pkt) return m.fail("out of memory", Code::out_of_memory);

  std::string d = codec->name;
  std::string settings;
  if (opts.crf >= 0) settings += "crf " + std::to_string(opts.crf);
  if (!opts.preset.empty()) settings += (settings.empty() ? "" : ", ") + ("preset " + opts.preset);
  if (!settings.empty()) d += " (" + settings + ")";
  d += " " + pix_name(format.av_pix_fmt()) + " " + of->name;
  if (m.ncopied > 0) d += ", " + std::to_string(m.ncopied) + (m.ncopied == 1 ? " stream" : " streams") + " copied";
  m.describe = d;
  return w;
}

Status VideoWriter::write_copied(AVPacket* p) {
  Impl& m = *impl_;
  if (p->stream_index < 0 || p->stream_index >= static_cast<int>(m.map.size())) return Status::ok();
  const int out = m.map[p->stream_index];
  if (out < 0) return Status::ok();
  av_packet_rescale_ts(p, m.in_tbs[p->stream_index], m.oc->streams[out]->time_base);
  p->stream_index = out;
  p->pos = -1;
  ++m.cpackets;
  return m.write(p);
}

Status VideoWriter::encode(const Frame& f) {
  Impl& m = *impl_;
  if (f.format() != m.format) return HISTEQ_ERROR(Code::invalid_argument, "frame format differs from the encoder's");
  AVFrame* av = f.av();
  int64_t pts = av_rescale_q(f.pts, m.in_tb, m.enc->time_base);
  if (m.last_pts != AV_NOPTS_VALUE && pts <= m.last_pts) pts = m.last_pts + 1;  // rounding into a coarser time base
  m.last_pts = pts;
  av->pts = pts;
  av->pict_type = AV_PICTURE_TYPE_NONE;
  av->color_range = static_cast<AVColorRange>(f.color.range);
  av->color_primaries = static_cast<AVColorPrimaries>(f.color.primaries);
  av->color_trc = static_cast<AVColorTransferCharacteristic>(f.color.transfer);
  av->colorspace = static_cast<AVColorSpace>(f.color.space);
  av->chroma_location = static_cast<AVChromaLocation>(f.color.chroma_location);
  const int e = avcodec_send_frame(m.enc.get(), av);
  if (e < 0) return m.fail("encoder error: " + describe_failure(e));
  ++m.frames;
  return m.drain();
}

Status VideoWriter::finish() {
  Impl& m = *impl_;
  if (m.finished) return Status::ok();
  const int e = avcodec_send_frame(m.enc.get(), nullptr);
  if (e < 0 && e != AVERROR_EOF) return m.fail("encoder error: " + describe_failure(e));
  HISTEQ_TRY(m.drain());
  {
    std::lock_guard<std::mutex> l(m.mux_mu);
    if (int r = av_write_trailer(m.oc); r < 0) return m.fail("cannot finish the file: " + describe_failure(r));
  }
  if (!(m.oc->oformat->flags & AVFMT_NOFILE)) {
    if (int r = avio_closep(&m.oc->pb); r < 0) return m.fail("cannot close the file: " + av_error(r));
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
