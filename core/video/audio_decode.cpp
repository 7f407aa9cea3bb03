#include "core/video/audio_decode.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

extern "C" {
#include <libavutil/samplefmt.h>
}

namespace histeq::video::detail {

Result<std::unique_ptr<AudioDecoder>> AudioDecoder::open(const AVStream* st, LogScope& log, const std::string& name) {
  std::unique_ptr<AudioDecoder> d(new AudioDecoder());
  d->name_ = name;
  d->log_ = &log;
  const AVCodec* codec = avcodec_find_decoder(st->codecpar->codec_id);
  if (codec == nullptr)
    return HISTEQ_ERROR(Code::unsupported, name + ": this FFmpeg has no decoder for '" + avcodec_get_name(st->codecpar->codec_id) + "'");
  d->dec_.reset(avcodec_alloc_context3(codec));
  if (!d->dec_) return HISTEQ_ERROR(Code::out_of_memory, name + ": out of memory");
  log.own(d->dec_.get());
  if (int e = avcodec_parameters_to_context(d->dec_.get(), st->codecpar); e < 0)
    return HISTEQ_ERROR(Code::io_error, name + ": bad codec parameters: " + av_error(e));
  d->dec_->pkt_timebase = st->time_base;
  d->dec_->opaque = &log;
  if (int e = avcodec_open2(d->dec_.get(), codec, nullptr); e < 0)
    return HISTEQ_ERROR(Code::unsupported, name + ": cannot open the " + codec->name + " decoder: " + log.describe_failure(e));
  d->tb_ = st->time_base;
  d->frame_.reset(av_frame_alloc());
  if (!d->frame_) return HISTEQ_ERROR(Code::out_of_memory, name + ": out of memory");
  return d;
}

AudioDecoder::~AudioDecoder() {
  if (log_ != nullptr) {
    log_->disown(swr_);
    log_->disown(dec_.get());
  }
  swr_free(&swr_);
  if (!planes_.empty()) av_freep(&planes_[0]);
  av_channel_layout_uninit(&swr_layout_);
  av_channel_layout_uninit(&target_.layout);
}

void AudioDecoder::set_target(const AudioTarget& t) {
  target_.format = t.format;
  target_.rate = t.rate;
  av_channel_layout_uninit(&target_.layout);
  (void)av_channel_layout_copy(&target_.layout, &t.layout);
  log_->disown(swr_);
  swr_free(&swr_);  // made again for the new target at the next frame
}

Status AudioDecoder::send(const AVPacket* pkt) {
  if (pkt == nullptr) {
    if (!draining_) (void)avcodec_send_packet(dec_.get(), nullptr);
    draining_ = true;
    return Status::ok();
  }
  if (draining_) return Status::ok();
  const LogScope::Active active(*log_);
  const int e = avcodec_send_packet(dec_.get(), pkt);
  if (e == AVERROR(ENOMEM)) return HISTEQ_ERROR(Code::out_of_memory, name_ + ": out of memory while decoding");
  if (e < 0 && e != AVERROR(EAGAIN)) ++rejected_;  // damaged audio is skipped, as damaged video is
  return Status::ok();
}

Status AudioDecoder::reserve(int frames) {
  if (frames <= capacity_) return Status::ok();
  if (!planes_.empty()) av_freep(&planes_[0]);
  const int planar = av_sample_fmt_is_planar(target_.format);
  planes_.assign(planar ? static_cast<size_t>(target_.layout.nb_channels) : 1, nullptr);
  if (av_samples_alloc(planes_.data(), nullptr, target_.layout.nb_channels, frames, target_.format, 0) < 0) {
    planes_.clear();
    capacity_ = 0;
    return HISTEQ_ERROR(Code::out_of_memory, name_ + ": out of memory");
  }
  capacity_ = frames;
  return Status::ok();
}

// Resamples `in` (nullptr: what the resampler still holds). The chunk's time is the input's less
// what the resampler held back from earlier input (its filter delay).
Status AudioDecoder::convert(const AVFrame* in, Chunk& out) {
  if (in != nullptr) {
    const bool changed = swr_ == nullptr || in->format != swr_format_ || in->sample_rate != swr_rate_ ||
                         av_channel_layout_compare(&in->ch_layout, &swr_layout_) != 0;
    if (changed) {
      log_->disown(swr_);
      swr_free(&swr_);
      AVChannelLayout in_layout{};
      if (in->ch_layout.order == AV_CHANNEL_ORDER_UNSPEC || in->ch_layout.nb_channels <= 0)
        av_channel_layout_default(&in_layout, std::max(1, in->ch_layout.nb_channels));
      else
        (void)av_channel_layout_copy(&in_layout, &in->ch_layout);
      const int e = swr_alloc_set_opts2(&swr_, &target_.layout, target_.format, target_.rate, &in_layout,
                                        static_cast<AVSampleFormat>(in->format), in->sample_rate, 0, nullptr);
      av_channel_layout_uninit(&in_layout);
      if (e < 0 || swr_ == nullptr || swr_init(swr_) < 0)
        return HISTEQ_ERROR(Code::unsupported, name_ + ": cannot convert its samples (" +
                                                   (av_get_sample_fmt_name(static_cast<AVSampleFormat>(in->format))
                                                        ? av_get_sample_fmt_name(static_cast<AVSampleFormat>(in->format))
                                                        : "?") +
                                                   ", " + std::to_string(in->sample_rate) + " Hz)");
      log_->own(swr_);
      swr_format_ = in->format;
      swr_rate_ = in->sample_rate;
      av_channel_layout_uninit(&swr_layout_);
      (void)av_channel_layout_copy(&swr_layout_, &in->ch_layout);
    }
    double t = next_time_s_;
    const int64_t ts = in->best_effort_timestamp;
    if (ts != AV_NOPTS_VALUE) t = static_cast<double>(ts) * av_q2d(tb_);
    if (!std::isfinite(t)) t = 0;  // no timestamp yet: count from 0
    const int64_t held = swr_get_delay(swr_, in->sample_rate);
    out.time_s = t - static_cast<double>(held) / in->sample_rate;
    next_time_s_ = t + static_cast<double>(in->nb_samples) / in->sample_rate;
  } else {
    if (swr_ == nullptr) return Status::ok();
    out.time_s = next_time_s_ - static_cast<double>(swr_get_delay(swr_, swr_rate_)) / swr_rate_;
  }
  const int want = swr_get_out_samples(swr_, in != nullptr ? in->nb_samples : 0);
  if (want <= 0) return Status::ok();
  HISTEQ_TRY(reserve(want));
  const int n = swr_convert(swr_, planes_.data(), want, in != nullptr ? const_cast<const uint8_t**>(in->extended_data) : nullptr,
                            in != nullptr ? in->nb_samples : 0);
  if (n < 0) return HISTEQ_ERROR(Code::io_error, name_ + ": resampling failed: " + av_error(n));
  out.frames = n;
  out.data = planes_.data();
  return Status::ok();
}

Result<AudioDecoder::Chunk> AudioDecoder::receive() {
  const LogScope::Active active(*log_);
  Chunk c;
  for (;;) {
    const int e = avcodec_receive_frame(dec_.get(), frame_.get());
    if (e == 0) {
      const Status s = convert(frame_.get(), c);
      av_frame_unref(frame_.get());
      HISTEQ_TRY(s);
      if (c.frames > 0) return c;
      continue;  // the resampler kept all of it (the start of its filter)
    }
    if (e == AVERROR(EAGAIN)) return c;
    if (e == AVERROR_EOF) {
      if (!flushed_swr_) {
        flushed_swr_ = true;
        HISTEQ_TRY(convert(nullptr, c));
      }
      return c;
    }
    if (e == AVERROR(ENOMEM)) return HISTEQ_ERROR(Code::out_of_memory, name_ + ": out of memory while decoding");
    ++rejected_;  // a damaged frame: skipped
  }
}

void AudioDecoder::flush() {
  avcodec_flush_buffers(dec_.get());
  log_->disown(swr_);
  swr_free(&swr_);  // drops the samples it held
  draining_ = flushed_swr_ = false;
  next_time_s_ = NAN;
}

std::string describe_audio(const AVCodecParameters* par) {
  char layout[64] = "";
  AVChannelLayout l{};
  if (par->ch_layout.order == AV_CHANNEL_ORDER_UNSPEC) av_channel_layout_default(&l, par->ch_layout.nb_channels);
  else (void)av_channel_layout_copy(&l, &par->ch_layout);
  if (av_channel_layout_describe(&l, layout, sizeof(layout)) < 0) std::snprintf(layout, sizeof(layout), "%d ch", par->ch_layout.nb_channels);
  av_channel_layout_uninit(&l);
  char b[160];
  const double khz = par->sample_rate / 1000.0;
  std::snprintf(b, sizeof(b), "%s %.*f kHz %s", avcodec_get_name(par->codec_id), khz == static_cast<int>(khz) ? 0 : 1, khz, layout);
  return b;
}

}  // namespace histeq::video::detail
