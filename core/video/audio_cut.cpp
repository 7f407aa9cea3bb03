#include "core/video/audio_cut.h"

#include "core/video/stream_plan.h"
#include "core/cuda/numbers.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <vector>

extern "C" {
#include <libavutil/samplefmt.h>
}

namespace histeq::video::detail {
namespace {

int nearest_rate(const AVCodec* c, int rate) {
  if (c->supported_samplerates == nullptr) return rate;
  int best = c->supported_samplerates[0];
  for (const int* r = c->supported_samplerates; *r != 0; ++r) {
    if (*r == rate) return rate;
    if (std::abs(*r - rate) < std::abs(best - rate)) best = *r;
  }
  return best;
}

AVSampleFormat pick_format(const AVCodec* c, AVSampleFormat preferred) {
  if (c->sample_fmts == nullptr) return preferred;
  for (const AVSampleFormat* f = c->sample_fmts; *f != AV_SAMPLE_FMT_NONE; ++f)
    if (*f == preferred) return preferred;
  return c->sample_fmts[0];
}

// The input's layout when the encoder takes it; else one of its layouts with as many channels;
// else its first.
void pick_layout(const AVCodec* c, const AVChannelLayout& in, AVChannelLayout* out) {
  AVChannelLayout want{};
  if (in.order == AV_CHANNEL_ORDER_UNSPEC || in.nb_channels <= 0) av_channel_layout_default(&want, std::max(1, in.nb_channels));
  else (void)av_channel_layout_copy(&want, &in);
  if (c->ch_layouts == nullptr) {
    *out = want;
    return;
  }
  const AVChannelLayout* same_count = nullptr;
  for (const AVChannelLayout* l = c->ch_layouts; l->nb_channels != 0; ++l) {
    if (av_channel_layout_compare(l, &want) == 0) {
      *out = want;
      return;
    }
    if (same_count == nullptr && l->nb_channels == want.nb_channels) same_count = l;
  }
  av_channel_layout_uninit(&want);
  (void)av_channel_layout_copy(out, same_count != nullptr ? same_count : &c->ch_layouts[0]);
}

// `asked` when given; else the input's codec where FFmpeg encodes it and the container holds it
// (`same`), else the container's usual audio codec; null when none is usable.
const AVCodec* pick_encoder(const AVCodec* asked, AVCodecID in_id, const AVOutputFormat* of, bool* same) {
  if (asked != nullptr) return asked;
  if (const AVCodec* c = usable_encoder(in_id, of)) return c;
  *same = false;
  return usable_encoder(of->audio_codec, of);
}

// "stream #1 (aac 44.1 kHz stereo) is cut to the sample and encoded again with aac at 128 kb/s, 48 kHz"
std::string describe_encoding(const std::string& name, const AVCodecParameters* in, const AVCodecContext* e, const AVOutputFormat* of,
                              bool same, bool cut) {
  const std::string rate = format_number(e->sample_rate / 1000.0, 4) + " kHz";
  std::string note = name + " (" + describe_audio(in) + ") is " + (cut ? "cut to the sample and " : "") + "encoded again with " + e->codec->name;
  if (!same) note += std::string(" (this FFmpeg cannot encode ") + avcodec_get_name(in->codec_id) + " into " + of->name + ")";
  if (e->bit_rate > 0) note += " at " + std::to_string(e->bit_rate / 1000) + " kb/s";
  return note + ", " + rate;
}

}  // namespace

Result<std::unique_ptr<AudioCut>> AudioCut::create(const AVStream* in, AVFormatContext* oc, double start_s, double end_s, LogScope& log,
                                                   const std::string& name, std::string& note, const AVCodec* codec, bool cut) {
  std::unique_ptr<AudioCut> a(new AudioCut());
  a->name_ = name;
  a->log_ = &log;
  a->oc_ = oc;
  a->start_s_ = start_s;
  a->end_s_ = end_s > start_s ? end_s : 0;
  auto dec = AudioDecoder::open(in, log, name);
  if (!dec) return dec.status();
  a->dec_ = std::move(dec.value());

  const AVCodecID in_id = in->codecpar->codec_id;
  bool same = true;  // the input's codec, or the one asked for
  codec = pick_encoder(codec, in_id, oc->oformat, &same);
  if (codec == nullptr)
    return HISTEQ_ERROR(Code::unsupported, name + ": cannot be cut: this FFmpeg cannot encode " + avcodec_get_name(in_id) +
                                               " and the " + oc->oformat->name + " container has no other audio codec to use");
  a->enc_.reset(avcodec_alloc_context3(codec));
  if (!a->enc_) return HISTEQ_ERROR(Code::out_of_memory, name + ": out of memory");
  log.own(a->enc_.get());
  AVCodecContext* e = a->enc_.get();
  e->opaque = &log;
  const AVCodecContext* d = a->dec_->codec();
  e->sample_rate = nearest_rate(codec, d->sample_rate > 0 ? d->sample_rate : 48000);
  pick_layout(codec, d->ch_layout, &e->ch_layout);
  e->sample_fmt = pick_format(codec, d->sample_fmt);
  if (in->codecpar->bit_rate > 0 && !(codec->capabilities & AV_CODEC_CAP_LOSSLESS)) e->bit_rate = in->codecpar->bit_rate;
  e->time_base = AVRational{1, e->sample_rate};
  if (oc->oformat->flags & AVFMT_GLOBALHEADER) e->flags |= AV_CODEC_FLAG_GLOBAL_HEADER;
  {
    const LogScope::Active active(log);
    if (int r = avcodec_open2(e, codec, nullptr); r < 0)
      return HISTEQ_ERROR(Code::unsupported, name + ": cannot open the " + codec->name + " encoder: " + log.describe_failure(r));
  }
  a->rate_ = e->sample_rate;
  AudioTarget t;
  t.format = e->sample_fmt;
  t.rate = e->sample_rate;
  t.layout = e->ch_layout;  // copied by set_target
  a->dec_->set_target(t);

  AVStream* os = avformat_new_stream(oc, nullptr);
  if (os == nullptr) return HISTEQ_ERROR(Code::out_of_memory, name + ": out of memory");
  if (int r = avcodec_parameters_from_context(os->codecpar, e); r < 0)
    return HISTEQ_ERROR(Code::io_error, name + ": encoder parameters: " + av_error(r));
  os->time_base = e->time_base;
  os->disposition = in->disposition;
  av_dict_copy(&os->metadata, in->metadata, 0);
  a->out_index_ = os->index;

  const int frame_size = e->frame_size > 0 && !(codec->capabilities & AV_CODEC_CAP_VARIABLE_FRAME_SIZE) ? e->frame_size : 1024;
  a->fifo_ = av_audio_fifo_alloc(e->sample_fmt, e->ch_layout.nb_channels, frame_size);
  a->frame_.reset(av_frame_alloc());
  a->pkt_.reset(av_packet_alloc());
  if (a->fifo_ == nullptr || !a->frame_ || !a->pkt_) return HISTEQ_ERROR(Code::out_of_memory, name + ": out of memory");
  note = describe_encoding(name, in->codecpar, e, oc->oformat, same, cut);
  return a;
}

AudioCut::~AudioCut() {
  if (fifo_ != nullptr) av_audio_fifo_free(fifo_);
  if (log_ != nullptr) log_->disown(enc_.get());
}

Status AudioCut::feed(const AVPacket* pkt, const Write& write) {
  if (done_) return Status::ok();
  HISTEQ_TRY(dec_->send(pkt));
  return take_chunks(write);
}

// The decoded chunks: what falls inside [start, end) goes into the FIFO, then out in frames of the
// encoder's size. The first kept sample fixes the output's clock (0 at start; later when the audio
// begins after start); from there samples follow one another.
Status AudioCut::take_chunks(const Write& write) {
  for (;;) {
    auto c = dec_->receive();
    if (!c) return c.status();
    if (c->frames == 0) break;
    if (done_) continue;
    int64_t first = 0, last = c->frames;
    const double rel = c->time_s - start_s_;  // seconds from the cut
    if (next_pts_ < 0) {
      if (rel < 0) first = std::min<int64_t>(last, std::llround(-rel * rate_));
      if (first >= last) continue;  // all of it before the cut
      next_pts_ = std::max<int64_t>(0, std::llround(rel * rate_) + first);
    }
    if (end_s_ > 0) {
      const int64_t room = std::llround((end_s_ - start_s_) * rate_) - (next_pts_ + samples_out_ + av_audio_fifo_size(fifo_));
      last = std::min<int64_t>(last, first + std::max<int64_t>(0, room));
      if (room <= c->frames - first) done_ = true;
    }
    if (last <= first) continue;
    const bool planar = av_sample_fmt_is_planar(enc_->sample_fmt);
    const int bps = av_get_bytes_per_sample(enc_->sample_fmt) * (planar ? 1 : enc_->ch_layout.nb_channels);
    std::vector<void*> from(planar ? static_cast<size_t>(enc_->ch_layout.nb_channels) : 1);
    for (size_t i = 0; i < from.size(); ++i) from[i] = c->data[i] + first * bps;
    if (av_audio_fifo_write(fifo_, from.data(), static_cast<int>(last - first)) < last - first)
      return HISTEQ_ERROR(Code::out_of_memory, name_ + ": out of memory");
    HISTEQ_TRY(encode_from_fifo(false, write));
  }
  return Status::ok();
}

Status AudioCut::encode_from_fifo(bool final, const Write& write) {
  const bool variable = (enc_->codec->capabilities & AV_CODEC_CAP_VARIABLE_FRAME_SIZE) || enc_->frame_size <= 0;
  const int size = variable ? 1024 : enc_->frame_size;
  while (av_audio_fifo_size(fifo_) >= size || (final && av_audio_fifo_size(fifo_) > 0)) {
    const int n = std::min(size, av_audio_fifo_size(fifo_));
    // A short last frame where the encoder takes one; else it is padded with silence.
    const bool pad = n < size && !variable && !(enc_->codec->capabilities & AV_CODEC_CAP_SMALL_LAST_FRAME);
    AVFrame* f = frame_.get();
    av_frame_unref(f);
    f->nb_samples = pad ? size : n;
    f->format = enc_->sample_fmt;
    f->sample_rate = enc_->sample_rate;
    if (av_channel_layout_copy(&f->ch_layout, &enc_->ch_layout) < 0 || av_frame_get_buffer(f, 0) < 0)
      return HISTEQ_ERROR(Code::out_of_memory, name_ + ": out of memory");
    if (pad) av_samples_set_silence(f->extended_data, 0, size, enc_->ch_layout.nb_channels, enc_->sample_fmt);
    if (av_audio_fifo_read(fifo_, reinterpret_cast<void**>(f->extended_data), n) < n)
      return HISTEQ_ERROR(Code::internal, name_ + ": audio FIFO read failed");
    f->pts = next_pts_ + samples_out_;
    samples_out_ += n;
    const LogScope::Active active(*log_);
    if (int r = avcodec_send_frame(enc_.get(), f); r < 0)
      return HISTEQ_ERROR(Code::io_error, name_ + ": audio encoder error: " + log_->describe_failure(r));
    HISTEQ_TRY(drain_encoder(write));
  }
  return Status::ok();
}

Status AudioCut::drain_encoder(const Write& write) {
  for (;;) {
    const int r = avcodec_receive_packet(enc_.get(), pkt_.get());
    if (r == AVERROR(EAGAIN) || r == AVERROR_EOF) return Status::ok();
    if (r < 0) return HISTEQ_ERROR(Code::io_error, name_ + ": audio encoder error: " + log_->describe_failure(r));
    av_packet_rescale_ts(pkt_.get(), enc_->time_base, oc_->streams[out_index_]->time_base);
    pkt_->stream_index = out_index_;
    HISTEQ_TRY(write(pkt_.get()));
  }
}

Status AudioCut::finish(const Write& write) {
  HISTEQ_TRY(dec_->send(nullptr));
  HISTEQ_TRY(take_chunks(write));
  if (next_pts_ < 0) next_pts_ = 0;
  HISTEQ_TRY(encode_from_fifo(true, write));
  const LogScope::Active active(*log_);
  if (int r = avcodec_send_frame(enc_.get(), nullptr); r < 0 && r != AVERROR_EOF)
    return HISTEQ_ERROR(Code::io_error, name_ + ": audio encoder error: " + log_->describe_failure(r));
  return drain_encoder(write);
}

}  // namespace histeq::video::detail
