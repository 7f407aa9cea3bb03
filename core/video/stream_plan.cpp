#include "core/video/stream_plan.h"

namespace histeq::video::detail {

bool container_holds(const AVOutputFormat* of, AVCodecID id) {
  const int q = avformat_query_codec(of, id, FF_COMPLIANCE_NORMAL);
  if (q >= 0) return q == 1;
  // Not known (a muxer without a codec table: mpegts, nut, yuv4mpegpipe): one whose usual codec of
  // this kind is none holds none of it; otherwise the muxer decides when the header is written.
  const AVMediaType type = avcodec_get_type(id);
  const AVCodecID usual = type == AVMEDIA_TYPE_VIDEO ? of->video_codec : type == AVMEDIA_TYPE_AUDIO ? of->audio_codec
                        : type == AVMEDIA_TYPE_SUBTITLE ? of->subtitle_codec : AV_CODEC_ID_NONE;
  return usual != AV_CODEC_ID_NONE;
}

const AVCodec* usable_encoder(AVCodecID id, const AVOutputFormat* of) {
  if (id == AV_CODEC_ID_NONE || !container_holds(of, id)) return nullptr;
  void* it = nullptr;
  while (const AVCodec* c = av_codec_iterate(&it))
    if (av_codec_is_encoder(c) && c->id == id && !(c->capabilities & AV_CODEC_CAP_EXPERIMENTAL)) return c;
  return nullptr;
}

namespace {

char type_letter(AVMediaType t) {
  switch (t) {
    case AVMEDIA_TYPE_VIDEO: return 'v';
    case AVMEDIA_TYPE_AUDIO: return 'a';
    case AVMEDIA_TYPE_SUBTITLE: return 's';
    default: return 0;
  }
}

// "stream #1 (audio, aac)"
std::string stream_name(const AVStream* s) {
  const char* t = av_get_media_type_string(s->codecpar->codec_type);
  return "stream #" + std::to_string(s->index) + " (" + (t ? t : "unknown") + ", " + avcodec_get_name(s->codecpar->codec_id) + ")";
}

bool holds(const AVOutputFormat* of, AVCodecID id) { return container_holds(of, id); }

struct Selection {
  std::vector<bool> selected, named;  // named: selected by a map that names it by type or number
};

// The streams one map matches, in input order.
std::vector<unsigned> matches(const AVFormatContext* ic, const StreamMap& m) {
  std::vector<unsigned> out;
  int nth = 0;  // the stream's number among those of m.type (all streams when 0)
  for (unsigned i = 0; i < ic->nb_streams; ++i) {
    if (m.type != 0 && type_letter(ic->streams[i]->codecpar->codec_type) != m.type) continue;
    if (m.index < 0 || m.index == nth) out.push_back(i);
    ++nth;
  }
  return out;
}

// The maps in order over the input's streams (the equalized video is always written, so a map may
// not take it out, nor add another video stream by name).
Result<Selection> select(const AVFormatContext* ic, int video, const StreamChoice& choice) {
  const unsigned n = ic->nb_streams;
  Selection s{std::vector<bool>(n, choice.maps.empty()), std::vector<bool>(n, false)};
  for (const StreamMap& m : choice.maps) {
    const std::vector<unsigned> hit = matches(ic, m);
    if (hit.empty() && !m.optional)
      return HISTEQ_ERROR(Code::invalid_argument, "-map " + m.text + ": the input has no such stream (add '?' to allow none)");
    const bool by_name = m.type != 0 || m.index >= 0;
    for (unsigned i : hit) {
      if (static_cast<int>(i) == video) {
        if (m.negative) return HISTEQ_ERROR(Code::invalid_argument, "-map " + m.text + ": the equalized video stream is always written");
        continue;
      }
      if (type_letter(ic->streams[i]->codecpar->codec_type) == 'v' && by_name && !m.negative)
        return HISTEQ_ERROR(Code::invalid_argument, "-map " + m.text + ": histeq writes one video stream, #" + std::to_string(video) +
                                                        " (the one it equalizes)");
      s.selected[i] = !m.negative;
      s.named[i] = !m.negative && by_name;
    }
  }
  for (unsigned i = 0; i < n; ++i) {
    const char t = type_letter(ic->streams[i]->codecpar->codec_type);
    if ((t == 'a' && choice.no_audio) || (t == 's' && choice.no_subtitles)) s.selected[i] = false;
  }
  return s;
}

// --audio-codec NAME: an audio encoder of this FFmpeg that the container holds.
Result<const AVCodec*> named_audio_encoder(const std::string& name, const AVOutputFormat* of) {
  const AVCodec* c = avcodec_find_encoder_by_name(name.c_str());
  if (c == nullptr) return HISTEQ_ERROR(Code::not_found, "--audio-codec " + name + ": no encoder of that name in this FFmpeg");
  if (c->type != AVMEDIA_TYPE_AUDIO) return HISTEQ_ERROR(Code::invalid_argument, "--audio-codec " + name + ": not an audio encoder");
  if (!holds(of, c->id))
    return HISTEQ_ERROR(Code::unsupported, std::string("--audio-codec ") + name + ": the " + of->name + " container cannot hold " +
                                               avcodec_get_name(c->id));
  return c;
}

Result<StreamDecision> decide_audio(const AVStream* s, const AVOutputFormat* of, const StreamChoice& choice, const AVCodec* named_enc,
                                    bool trimmed, bool named, std::vector<std::string>& notes) {
  const std::string what = stream_name(s);
  const AVCodecID id = s->codecpar->codec_id;
  const std::string container = std::string("the ") + of->name + " container";
  StreamDecision d;
  if (choice.audio_codec == "copy") {
    if (trimmed)
      return HISTEQ_ERROR(Code::invalid_argument, "--audio-codec copy: a trimmed export cuts the audio to the sample, "
                                                  "which needs it encoded again; leave --audio-codec out or name an encoder");
    if (!holds(of, id)) return HISTEQ_ERROR(Code::unsupported, what + ": --audio-codec copy, but " + container + " cannot hold " + avcodec_get_name(id));
    d.action = StreamAction::copy;
    return d;
  }
  if (named_enc != nullptr) {
    d.action = StreamAction::encode;
    d.encoder = named_enc;
    d.reason = trimmed ? "" : "--audio-codec " + std::string(named_enc->name);
    return d;
  }
  if (trimmed || holds(of, id)) {
    d.action = trimmed ? StreamAction::encode : StreamAction::copy;  // a cut: AudioCut picks the encoder
    return d;
  }
  d.encoder = usable_encoder(of->audio_codec, of);
  if (d.encoder != nullptr) {
    d.action = StreamAction::encode;
    d.reason = container + " cannot hold " + avcodec_get_name(id);
    return d;
  }
  if (of->audio_codec == AV_CODEC_ID_NONE && !named) {
    notes.push_back(what + " is left out: " + container + " holds no audio");
    return d;
  }
  return HISTEQ_ERROR(Code::unsupported, what + ": " + container + " cannot hold " + avcodec_get_name(id) +
                                             (of->audio_codec == AV_CODEC_ID_NONE ? std::string(" nor any audio")
                                                                                  : std::string(" and this FFmpeg cannot encode ") + avcodec_get_name(of->audio_codec)) +
                                             "; leave it out with -an");
}

}  // namespace

Result<std::vector<StreamDecision>> plan_streams(const AVFormatContext* ic, int video, const AVOutputFormat* of,
                                                 const StreamChoice& choice, bool trimmed, const std::string& output,
                                                 std::vector<std::string>& notes) {
  auto with_output = [&](const Status& s) { return Status(s.code(), output + ": " + s.message()); };
  const AVCodec* named_enc = nullptr;
  if (!choice.audio_codec.empty() && choice.audio_codec != "copy") {
    auto e = named_audio_encoder(choice.audio_codec, of);
    if (!e) return with_output(e.status());
    named_enc = *e;
  }
  auto sel = select(ic, video, choice);
  if (!sel) return with_output(sel.status());
  std::vector<StreamDecision> plan(ic->nb_streams);
  for (unsigned i = 0; i < ic->nb_streams; ++i) {
    const AVStream* s = ic->streams[i];
    if (static_cast<int>(i) == video || !sel->selected[i]) continue;
    const bool named = sel->named[i] || (!choice.audio_codec.empty() && s->codecpar->codec_type == AVMEDIA_TYPE_AUDIO);
    const AVMediaType type = s->codecpar->codec_type;
    if (type == AVMEDIA_TYPE_AUDIO) {
      auto d = decide_audio(s, of, choice, named_enc, trimmed, named, notes);
      if (!d) return with_output(d.status());
      plan[i] = *d;
      continue;
    }
    const std::string what = stream_name(s);
    if (type == AVMEDIA_TYPE_SUBTITLE && holds(of, s->codecpar->codec_id)) {
      plan[i].action = StreamAction::copy;
      continue;
    }
    const std::string why = type == AVMEDIA_TYPE_SUBTITLE ? std::string("the ") + of->name + " container cannot hold it"
                                                          : std::string("only the video, audio and subtitles are");
    if (named) return HISTEQ_ERROR(Code::unsupported, output + ": " + what + " cannot be written: " + why);
    notes.push_back(what + " is not copied: " + why);
  }
  return plan;
}

}  // namespace histeq::video::detail
