#include "app/player/audio_tempo.h"

extern "C" {
#include <libavfilter/avfilter.h>
#include <libavfilter/buffersink.h>
#include <libavfilter/buffersrc.h>
#include <libavutil/channel_layout.h>
#include <libavutil/frame.h>
#include <libavutil/opt.h>
}

#include <cmath>
#include <cstdio>
#include <cstring>
#include <string>

namespace histeq::app::player {
namespace {

std::string av_error(int e) {
  char b[AV_ERROR_MAX_STRING_SIZE] = {0};
  av_strerror(e, b, sizeof(b));
  return b;
}

// atempo's factors for `speed`: one where it takes it, else the fewest equal ones within 0.5..100.
std::string tempo_chain(double speed) {
  int n = 1;
  while (std::pow(speed, 1.0 / n) < 0.5) ++n;
  const double f = std::pow(speed, 1.0 / n);
  std::string chain;
  char b[48];
  for (int i = 0; i < n; ++i) {
    std::snprintf(b, sizeof(b), "%satempo=%.9g", i == 0 ? "" : ",", f);
    chain += b;
  }
  return chain;
}

}  // namespace

struct AudioTempo::Impl {
  AVFilterGraph* graph = nullptr;
  AVFilterContext* src = nullptr;
  AVFilterContext* sink = nullptr;
  AVFrame* frame = nullptr;
  int rate = 48000, channels = 2;
  int64_t pts = 0;
  ~Impl() {
    av_frame_free(&frame);
    avfilter_graph_free(&graph);
  }
};

AudioTempo::AudioTempo() : impl_(std::make_unique<Impl>()) {}
AudioTempo::~AudioTempo() = default;

bool AudioTempo::available() {
  return avfilter_get_by_name("atempo") != nullptr && avfilter_get_by_name("abuffer") != nullptr &&
         avfilter_get_by_name("abuffersink") != nullptr && avfilter_get_by_name("aformat") != nullptr;
}

Result<std::unique_ptr<AudioTempo>> AudioTempo::create(int rate, int channels, double speed) {
  if (!available()) return HISTEQ_ERROR(Code::unsupported, "this FFmpeg has no atempo filter");
  if (!(speed > 0) || rate <= 0 || channels <= 0) return HISTEQ_ERROR(Code::invalid_argument, "audio tempo: bad arguments");
  std::unique_ptr<AudioTempo> t(new AudioTempo());
  Impl& m = *t->impl_;
  m.rate = rate;
  m.channels = channels;
  m.graph = avfilter_graph_alloc();
  m.frame = av_frame_alloc();
  if (m.graph == nullptr || m.frame == nullptr) return HISTEQ_ERROR(Code::out_of_memory, "audio tempo: no memory");
  AVChannelLayout layout;
  av_channel_layout_default(&layout, channels);
  char layout_name[64] = {0};
  av_channel_layout_describe(&layout, layout_name, sizeof(layout_name));
  av_channel_layout_uninit(&layout);
  char args[256];
  std::snprintf(args, sizeof(args), "sample_rate=%d:sample_fmt=flt:channel_layout=%s:time_base=1/%d", rate, layout_name, rate);
  auto fail = [](const char* what, int e) { return HISTEQ_ERROR(Code::io_error, std::string("audio tempo: ") + what + ": " + av_error(e)); };
  if (int e = avfilter_graph_create_filter(&m.src, avfilter_get_by_name("abuffer"), "in", args, nullptr, m.graph); e < 0)
    return fail("abuffer", e);
  if (int e = avfilter_graph_create_filter(&m.sink, avfilter_get_by_name("abuffersink"), "out", nullptr, nullptr, m.graph); e < 0)
    return fail("abuffersink", e);
  // The chain between them: "[in] atempo=... , aformat=flt [out]".
  AVFilterInOut* outputs = avfilter_inout_alloc();
  AVFilterInOut* inputs = avfilter_inout_alloc();
  outputs->name = av_strdup("in");
  outputs->filter_ctx = m.src;
  inputs->name = av_strdup("out");
  inputs->filter_ctx = m.sink;
  const std::string chain = tempo_chain(speed) + ",aformat=sample_fmts=flt:channel_layouts=" + layout_name;
  int e = avfilter_graph_parse_ptr(m.graph, chain.c_str(), &inputs, &outputs, nullptr);
  avfilter_inout_free(&inputs);
  avfilter_inout_free(&outputs);
  if (e < 0) return fail("the filter chain", e);
  if (e = avfilter_graph_config(m.graph, nullptr); e < 0) return fail("the filter graph", e);
  return t;
}

Status AudioTempo::push(const float* in, int64_t frames, std::vector<float>& out) {
  Impl& m = *impl_;
  if (frames <= 0) return Status::ok();
  AVFrame* f = av_frame_alloc();
  if (f == nullptr) return HISTEQ_ERROR(Code::out_of_memory, "audio tempo: no memory");
  f->format = AV_SAMPLE_FMT_FLT;
  f->sample_rate = m.rate;
  av_channel_layout_default(&f->ch_layout, m.channels);
  f->nb_samples = static_cast<int>(frames);
  f->pts = m.pts;
  m.pts += frames;
  int e = av_frame_get_buffer(f, 0);
  if (e >= 0) {
    std::memcpy(f->data[0], in, static_cast<size_t>(frames) * static_cast<size_t>(m.channels) * sizeof(float));
    e = av_buffersrc_add_frame_flags(m.src, f, AV_BUFFERSRC_FLAG_KEEP_REF);
  }
  av_frame_free(&f);
  if (e < 0) return HISTEQ_ERROR(Code::io_error, "audio tempo: " + av_error(e));
  return drain(out);
}

Status AudioTempo::finish(std::vector<float>& out) {
  if (int e = av_buffersrc_add_frame_flags(impl_->src, nullptr, 0); e < 0 && e != AVERROR_EOF)
    return HISTEQ_ERROR(Code::io_error, "audio tempo: " + av_error(e));
  return drain(out);
}

Status AudioTempo::drain(std::vector<float>& out) {
  Impl& m = *impl_;
  for (;;) {
    const int e = av_buffersink_get_frame(m.sink, m.frame);
    if (e == AVERROR(EAGAIN) || e == AVERROR_EOF) return Status::ok();
    if (e < 0) return HISTEQ_ERROR(Code::io_error, "audio tempo: " + av_error(e));
    const auto* p = reinterpret_cast<const float*>(m.frame->data[0]);
    out.insert(out.end(), p, p + static_cast<size_t>(m.frame->nb_samples) * static_cast<size_t>(m.channels));
    av_frame_unref(m.frame);
  }
}

}  // namespace histeq::app::player
