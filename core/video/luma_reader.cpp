#include "core/video/luma_reader.h"

extern "C" {
#include <libavcodec/avcodec.h>
#include <libavformat/avformat.h>
#include <libavutil/imgutils.h>
#include <libswscale/swscale.h>
}

#include <cstring>

#include "core/video/av_util.h"

namespace histeq::video {

using detail::av_error;

struct LumaReader::Impl {
  std::string path;
  detail::LogScope log;  // FFmpeg's messages are recorded for this reader, not printed
  AVFormatContext* fmt = nullptr;
  AVCodecContext* dec = nullptr;
  SwsContext* sws = nullptr;
  AVPacket* pkt = nullptr;
  AVFrame* frame = nullptr;
  int stream = -1;
  bool draining = false;
  int sws_w = 0, sws_h = 0, sws_fmt = -1;

  ~Impl() {
    log.disown(fmt);
    log.disown(dec);
    sws_freeContext(sws);
    av_frame_free(&frame);
    av_packet_free(&pkt);
    avcodec_free_context(&dec);
    avformat_close_input(&fmt);
  }

  Status fail(const std::string& what) const { return HISTEQ_ERROR(Code::io_error, path + ": " + what); }
};

LumaReader::LumaReader() : impl_(std::make_unique<Impl>()) {}
LumaReader::~LumaReader() = default;

Result<std::unique_ptr<LumaReader>> LumaReader::open(const std::string& path) {
  std::unique_ptr<LumaReader> r(new LumaReader());
  Impl& s = *r->impl_;
  s.path = path;
  const detail::LogScope::Active active(s.log);
  if (int e = avformat_open_input(&s.fmt, path.c_str(), nullptr, nullptr); e < 0) return s.fail(s.log.describe_failure(e));
  s.log.own(s.fmt);
  if (int e = avformat_find_stream_info(s.fmt, nullptr); e < 0) return s.fail("cannot read stream info: " + av_error(e));
  const AVCodec* codec = nullptr;
  s.stream = av_find_best_stream(s.fmt, AVMEDIA_TYPE_VIDEO, -1, -1, &codec, 0);
  if (s.stream < 0) return s.fail("no video stream");
  if (codec == nullptr) return s.fail("unsupported video codec");
  s.dec = avcodec_alloc_context3(codec);
  if (s.dec == nullptr) return s.fail("out of memory");
  s.log.own(s.dec);
  s.dec->opaque = &s.log;
  avcodec_parameters_to_context(s.dec, s.fmt->streams[s.stream]->codecpar);
  s.dec->thread_count = 0;  // FFmpeg picks
  if (int e = avcodec_open2(s.dec, codec, nullptr); e < 0) return s.fail("cannot open decoder: " + av_error(e));
  s.pkt = av_packet_alloc();
  s.frame = av_frame_alloc();
  if (s.pkt == nullptr || s.frame == nullptr) return s.fail("out of memory");
  return r;
}

int LumaReader::width() const noexcept { return impl_->dec->width; }
int LumaReader::height() const noexcept { return impl_->dec->height; }
long LumaReader::frame_count_hint() const noexcept { return static_cast<long>(impl_->fmt->streams[impl_->stream]->nb_frames); }

Result<bool> LumaReader::next(Plane8& out) {
  Impl& s = *impl_;
  for (;;) {
    int e = avcodec_receive_frame(s.dec, s.frame);
    if (e == 0) break;
    if (e == AVERROR_EOF) return false;
    if (e != AVERROR(EAGAIN)) return s.fail("decode error: " + av_error(e));
    if (s.draining) return false;
    e = av_read_frame(s.fmt, s.pkt);
    if (e == AVERROR_EOF) {
      s.draining = true;
      avcodec_send_packet(s.dec, nullptr);
      continue;
    }
    if (e < 0) return s.fail("read error: " + av_error(e));
    if (s.pkt->stream_index == s.stream) {
      e = avcodec_send_packet(s.dec, s.pkt);
      // A corrupt packet is skipped rather than ending the read.
      if (e < 0 && e != AVERROR(EAGAIN) && e != AVERROR_INVALIDDATA) {
        av_packet_unref(s.pkt);
        return s.fail("decode error: " + av_error(e));
      }
    }
    av_packet_unref(s.pkt);
  }
  const int w = s.frame->width, h = s.frame->height;
  if (w <= 0 || h <= 0) return s.fail("frame without a size");
  if (out.width() != w || out.height() != h || out.memory() != MemoryKind::host) {
    auto p = Plane8::allocate(MemoryKind::host, w, h);
    if (!p) return p.status();
    out = std::move(p.value());
  }
  if (s.sws == nullptr || s.sws_w != w || s.sws_h != h || s.sws_fmt != s.frame->format) {
    sws_freeContext(s.sws);
    s.sws = sws_getContext(w, h, static_cast<AVPixelFormat>(s.frame->format), w, h, AV_PIX_FMT_GRAY8, SWS_POINT,
                           nullptr, nullptr, nullptr);
    if (s.sws == nullptr) return s.fail("cannot convert pixel format to luma");
    s.sws_w = w;
    s.sws_h = h;
    s.sws_fmt = s.frame->format;
  }
  uint8_t* dst[4] = {out.data(), nullptr, nullptr, nullptr};
  int dst_stride[4] = {static_cast<int>(out.pitch()), 0, 0, 0};
  sws_scale(s.sws, s.frame->data, s.frame->linesize, 0, h, dst, dst_stride);
  av_frame_unref(s.frame);
  return true;
}

Result<std::vector<Plane8>> read_luma_frames(const std::string& path, int count) {
  auto r = LumaReader::open(path);
  if (!r) return r.status();
  const long total = (*r)->frame_count_hint();
  std::vector<Plane8> frames;
  long index = 0;
  Plane8 cur;
  for (int k = 0; k < count; ++k) {
    // Frame indices first..last spread evenly when the length is known.
    const long want = (total > 1 && count > 1) ? (total - 1) * k / (count - 1) : k;
    bool got = false;
    while (index <= want) {
      auto ok = (*r)->next(cur);
      if (!ok) return ok.status();
      if (!ok.value()) break;
      ++index;
      got = true;
    }
    if (!got) break;
    auto copy = Plane8::allocate(MemoryKind::host, cur.width(), cur.height());
    if (!copy) return copy.status();
    HISTEQ_TRY(copy_plane(cur, copy->view()));
    frames.push_back(std::move(copy.value()));
  }
  if (frames.empty()) return HISTEQ_ERROR(Code::io_error, path + ": no decodable video frame");
  return frames;
}

}  // namespace histeq::video
