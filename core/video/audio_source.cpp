#include "core/video/audio_source.h"

#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>

#include "core/video/audio_decode.h"
#include "core/video/ts_continuity.h"

namespace histeq::video {

using namespace detail;

namespace {
// Where a seek starts decoding before its target, so that the first kept samples are whole.
constexpr double kSeekPreroll = 0.2;
// Timestamps within this of the running timeline are taken as following it (rounding in
// containers); further off is a gap (filled with silence) or an overlap (dropped).
constexpr double kJitter = 0.03;

// The file's audio streams, in its order: the player's track numbers (1..).
std::vector<int> audio_streams(const AVFormatContext* fmt) {
  std::vector<int> audio;
  for (unsigned i = 0; i < fmt->nb_streams; ++i)
    if (fmt->streams[i]->codecpar->codec_type == AVMEDIA_TYPE_AUDIO) audio.push_back(static_cast<int>(i));
  return audio;
}

// The stream of audio track `track` (1..), or with 0 FFmpeg's choice of the default one (the one
// related to the default video stream, its disposition, then the first); AVERROR_* when none.
int pick_audio_stream(AVFormatContext* fmt, int track) {
  if (track > 0) {
    const std::vector<int> audio = audio_streams(fmt);
    return track <= static_cast<int>(audio.size()) ? audio[static_cast<size_t>(track - 1)] : AVERROR_STREAM_NOT_FOUND;
  }
  const int video = av_find_best_stream(fmt, AVMEDIA_TYPE_VIDEO, -1, -1, nullptr, 0);
  return av_find_best_stream(fmt, AVMEDIA_TYPE_AUDIO, -1, video >= 0 ? video : -1, nullptr, 0);
}
}  // namespace

struct AudioSource::Impl {
  std::string path;
  AudioFormat out;
  AudioInfo info;
  LogScope log;
  AVFormatContext* fmt = nullptr;
  std::unique_ptr<AudioDecoder> dec;
  AvPacketPtr pkt;
  int index = -1;
  std::atomic<bool> interrupted{false};
  std::unique_ptr<TimestampContinuity> continuity;  // the video side's repair of joined parts, on the audio

  double origin_s = 0;     // the time of the last seek
  int64_t produced = 0;    // frames read() gave since
  bool aligned = false;    // the first chunk after the seek was placed (to the sample)
  std::vector<float> chunk;  // decoded, not yet given: interleaved
  size_t chunk_pos = 0;      // frames of `chunk` given
  double chunk_time = 0;     // stream time of chunk[0]
  int64_t silence = 0;       // frames of silence to give before the chunk
  bool demux_ended = false, ended = false;

  ~Impl() {
    dec.reset();
    log.disown(fmt);
    avformat_close_input(&fmt);
  }
  Status fail(const std::string& cause, Code code = Code::io_error) const { return HISTEQ_ERROR(code, path + ": " + cause); }
  static int interrupt_cb(void* opaque) { return static_cast<Impl*>(opaque)->interrupted.load() ? 1 : 0; }
  double position() const { return origin_s + static_cast<double>(produced) / out.rate; }
  size_t frames_left() const { return chunk.size() / static_cast<size_t>(out.channels) - chunk_pos; }

  // Decodes until a chunk is ready (true), or the track ends (false).
  Result<bool> next_chunk();
  // Places the new chunk on the timeline: silence before it, or its start dropped.
  void place();
};

Result<bool> AudioSource::Impl::next_chunk() {
  for (;;) {
    if (interrupted) return fail("interrupted", Code::cancelled);
    auto c = dec->receive();
    if (!c) return c.status();
    if (c->frames > 0) {
      const float* p = reinterpret_cast<const float*>(c->data[0]);
      chunk.assign(p, p + static_cast<size_t>(c->frames) * static_cast<size_t>(out.channels));
      chunk_pos = 0;
      chunk_time = c->time_s;
      return true;
    }
    if (demux_ended) return false;
    const int e = av_read_frame(fmt, pkt.get());
    if (e == AVERROR_EOF || (e < 0 && fmt->pb != nullptr && avio_feof(fmt->pb))) {
      demux_ended = true;
      HISTEQ_TRY(dec->send(nullptr));
      continue;
    }
    if (e == AVERROR_EXIT) return fail("interrupted", Code::cancelled);
    if (e == AVERROR(EAGAIN)) continue;
    if (e < 0) {
      if (e != AVERROR_INVALIDDATA) return fail("read error: " + log.describe_failure(e));
      continue;  // damaged data: skipped, as the video side does
    }
    if (pkt->stream_index == index) {
      continuity->fix(pkt.get());
      const Status s = dec->send(pkt.get());
      av_packet_unref(pkt.get());
      HISTEQ_TRY(s);
    } else {
      av_packet_unref(pkt.get());
    }
  }
}

void AudioSource::Impl::place() {
  const double tolerance = aligned ? kJitter : 0.5 / out.rate;
  const double diff = chunk_time - (position() + static_cast<double>(silence) / out.rate);
  if (diff > tolerance) {
    silence += std::llround(diff * out.rate);
  } else if (diff < -tolerance) {
    const int64_t drop = std::llround(-diff * out.rate);
    chunk_pos = static_cast<size_t>(std::min<int64_t>(drop, static_cast<int64_t>(frames_left())));
  }
  // Placed once a sample lands on the timeline: chunks wholly before it (the seek's preroll) are
  // measured against the exact position too.
  if (frames_left() > 0 || silence > 0) aligned = true;
}

AudioSource::AudioSource() : impl_(std::make_unique<Impl>()) {}
AudioSource::~AudioSource() = default;

Result<std::unique_ptr<AudioSource>> AudioSource::open(const std::string& path, const AudioFormat& out, int track) {
  std::unique_ptr<AudioSource> a(new AudioSource());
  Impl& m = *a->impl_;
  m.path = path;
  m.out = out;
  if (out.rate <= 0 || out.channels <= 0) return HISTEQ_ERROR(Code::invalid_argument, "AudioSource: bad output format");
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0 && errno == ENOENT) return m.fail("no such file", Code::not_found);
  m.fmt = avformat_alloc_context();
  if (m.fmt == nullptr) return m.fail("out of memory", Code::out_of_memory);
  m.fmt->interrupt_callback = {&Impl::interrupt_cb, &m};
  m.log.own(m.fmt);
  const LogScope::Active active(m.log);
  if (int e = avformat_open_input(&m.fmt, path.c_str(), nullptr, nullptr); e < 0) return m.fail("cannot open: " + m.log.describe_failure(e));
  if (int e = avformat_find_stream_info(m.fmt, nullptr); e < 0) return m.fail("cannot read the stream layout: " + m.log.describe_failure(e));
  m.index = pick_audio_stream(m.fmt, track);
  if (m.index == AVERROR_STREAM_NOT_FOUND || m.index < 0) {
    if (m.index == AVERROR_DECODER_NOT_FOUND) return m.fail("no decoder for its audio", Code::unsupported);
    return m.fail("no audio stream", Code::not_found);
  }
  for (unsigned i = 0; i < m.fmt->nb_streams; ++i)
    if (static_cast<int>(i) != m.index) m.fmt->streams[i]->discard = AVDISCARD_ALL;
  m.continuity = std::make_unique<TimestampContinuity>(m.fmt);
  const AVStream* as = m.fmt->streams[m.index];
  const std::string name = path + ": audio stream #" + std::to_string(m.index);
  auto dec = AudioDecoder::open(as, m.log, name);
  if (!dec) return dec.status();
  m.dec = std::move(dec.value());
  AudioTarget t;
  t.format = AV_SAMPLE_FMT_FLT;
  t.rate = out.rate;
  av_channel_layout_default(&t.layout, out.channels);
  m.dec->set_target(t);
  m.pkt.reset(av_packet_alloc());
  if (!m.pkt) return m.fail("out of memory", Code::out_of_memory);
  m.info.stream_index = m.index;
  const std::vector<int> audio = audio_streams(m.fmt);
  m.info.tracks = static_cast<int>(audio.size());
  m.info.track = static_cast<int>(std::find(audio.begin(), audio.end(), m.index) - audio.begin()) + 1;
  m.info.description = describe_audio(as->codecpar) + " (stream #" + std::to_string(m.index) + ")";
  m.info.start_s = as->start_time != AV_NOPTS_VALUE ? static_cast<double>(as->start_time) * av_q2d(as->time_base) : 0;
  if (as->duration > 0) m.info.duration_s = static_cast<double>(as->duration) * av_q2d(as->time_base);
  else if (m.fmt->duration > 0) m.info.duration_s = static_cast<double>(m.fmt->duration) / AV_TIME_BASE;
  m.origin_s = m.info.start_s;
  return a;
}

const AudioInfo& AudioSource::info() const { return impl_->info; }
const AudioFormat& AudioSource::format() const { return impl_->out; }
double AudioSource::position_s() const { return impl_->position(); }
bool AudioSource::ended() const { return impl_->ended; }
int64_t AudioSource::damaged_packets() const { return impl_->dec ? impl_->dec->rejected_packets() : 0; }
void AudioSource::interrupt() { impl_->interrupted = true; }

Status AudioSource::seek(double time_s) {
  Impl& m = *impl_;
  m.interrupted = false;
  const LogScope::Active active(m.log);
  const AVStream* as = m.fmt->streams[m.index];
  const double from = std::max(m.info.start_s, time_s - kSeekPreroll);
  const int64_t ts = static_cast<int64_t>(std::floor(from / av_q2d(as->time_base)));
  if (int e = av_seek_frame(m.fmt, m.index, ts, AVSEEK_FLAG_BACKWARD); e < 0) {
    // Some inputs cannot seek backwards past their start with the flag: try from the beginning.
    if (av_seek_frame(m.fmt, m.index, as->start_time != AV_NOPTS_VALUE ? as->start_time : 0, AVSEEK_FLAG_BACKWARD | AVSEEK_FLAG_ANY) < 0)
      return m.fail("cannot seek its audio: " + m.log.describe_failure(e));
  }
  m.dec->flush();
  m.continuity->reset();
  m.origin_s = time_s;
  m.produced = 0;
  m.aligned = false;
  m.chunk.clear();
  m.chunk_pos = 0;
  m.silence = 0;
  m.demux_ended = m.ended = false;
  return Status::ok();
}

Result<int64_t> AudioSource::read(std::vector<float>& out, int64_t max_frames) {
  Impl& m = *impl_;
  const LogScope::Active active(m.log);
  const size_t ch = static_cast<size_t>(m.out.channels);
  int64_t given = 0;
  while (given < max_frames && !m.ended) {
    if (m.silence > 0) {
      const int64_t n = std::min(m.silence, max_frames - given);
      out.insert(out.end(), static_cast<size_t>(n) * ch, 0.f);
      m.silence -= n;
      m.produced += n;
      given += n;
      continue;
    }
    if (m.frames_left() == 0) {
      auto more = m.next_chunk();
      if (!more) return more.status();
      if (!*more) {
        m.ended = true;
        break;
      }
      m.place();
      continue;
    }
    const int64_t n = std::min<int64_t>(static_cast<int64_t>(m.frames_left()), max_frames - given);
    const float* p = m.chunk.data() + m.chunk_pos * ch;
    out.insert(out.end(), p, p + static_cast<size_t>(n) * ch);
    m.chunk_pos += static_cast<size_t>(n);
    m.produced += n;
    given += n;
  }
  return given;
}

}  // namespace histeq::video
