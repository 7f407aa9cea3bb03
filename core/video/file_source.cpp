#include "core/video/file_source.h"
#include "core/video/ts_continuity.h"

#include <sys/stat.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <cctype>
#include <thread>
#include <vector>

#include "core/video/av_util.h"
#include "core/cuda/numbers.h"

extern "C" {
#include <libavdevice/avdevice.h>
#include <libavutil/hwcontext.h>
#include <libavutil/imgutils.h>
#include <libavutil/opt.h>
#include <libswscale/swscale.h>
}

namespace histeq::video {

using namespace detail;

namespace {

int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// A run of this many unreadable packets with nothing readable in between ends the input: the rest of
// the file is not video data (or a truncated index points past its end).
constexpr int kMaxConsecutiveReadErrors = 1000;

std::string stream_summary(const AVFormatContext* fmt) {
  int counts[AVMEDIA_TYPE_NB] = {0};
  for (unsigned i = 0; i < fmt->nb_streams; ++i) {
    const int t = fmt->streams[i]->codecpar->codec_type;
    if (t >= 0 && t < AVMEDIA_TYPE_NB) ++counts[t];
  }
  std::string s;
  for (int t = 0; t < AVMEDIA_TYPE_NB; ++t) {
    if (counts[t] == 0) continue;
    const char* name = av_get_media_type_string(static_cast<AVMediaType>(t));
    s += (s.empty() ? "" : ", ") + std::to_string(counts[t]) + " " + (name ? name : "other");
  }
  return s.empty() ? "no streams" : s;
}

std::string seconds(double s) {
  return format_number(s, 3) + " s";
}

}  // namespace

bool is_stream_url(const std::string& path) {
  const size_t colon = path.find("://");
  if (colon == std::string::npos || colon == 0) return false;
  for (size_t i = 0; i < colon; ++i)
    if (!std::isalnum(static_cast<unsigned char>(path[i])) && path[i] != '+' && path[i] != '-' && path[i] != '.') return false;
  return path.compare(0, colon, "file") != 0;
}

struct FileSource::Impl {
  std::string path;
  FileSourceOptions opts;
  SourceInfo info;
  NativeVideo native;
  LogScope log;                  // FFmpeg's error lines of this source's contexts
  AVFormatContext* fmt = nullptr;
  AVIOContext* stdin_pb = nullptr;  // "-": standard input, read through a context of ours (see open_container)
  const AVInputFormat* stdin_format = nullptr;  // what its data was probed as
  AvCodecPtr dec;
  AvPacketPtr pkt;
  AvFramePtr frame;
  SwsContext* sws = nullptr;
  const AVCodec* codec = nullptr;
  std::unique_ptr<HwDecoder> hw;  // NVDEC, when attached
  bool have_pending = false;      // `frame` holds a decoded frame not handed out yet (open()'s probe)
  int vindex = -1;
  bool full_range = false;       // the decoder's format is a yuvj* one
  bool draining = false, started = false, ended = false;
  std::function<Status(AVPacket*)> packet_handler;
  std::atomic<bool> interrupted{false};

  // counters (read by other threads)
  std::atomic<int64_t> frames{0}, corrupt{0}, damaged{0}, repaired{0};
  int64_t video_packets = 0;
  int consecutive_read_errors = 0;
  int64_t read_errors_since_video = 0;  // read errors or cut-off packets after the last good video packet
  std::string last_decode_error;
  std::string truncation;  // why the data stops short of what the container holds ("" when it does not)
  // Damage among the last: after the demuxer's end (the frames the decoder held), or the latest
  // before it (an intra codec's last packet, rejected): a damaged frame, or packets that could not
  // be read or decoded.
  enum class EndDamage { none, frame, packets } damaged_at_end = EndDamage::none;
  double time_reached_s = 0;  // the end of the last frame handed out (its time_s plus its duration)
  std::atomic<int64_t> first_pts{AV_NOPTS_VALUE};  // read by time_origin_s() on other threads
  int64_t last_pts = AV_NOPTS_VALUE;
  int64_t skip_before_pts = AV_NOPTS_VALUE;  // after a seek: frames before this are decoded and dropped
  std::unique_ptr<TimestampContinuity> continuity;  // made at the open, for formats with discontinuities

  ~Impl() {
    log.disown(sws);
    sws_freeContext(sws);
    log.disown(dec.get());
    frame.reset();
    dec.reset();  // before the hardware device it decodes on
    hw.reset();
    log.disown(fmt);
    avformat_close_input(&fmt);
    avio_closep(&stdin_pb);  // the reader; the pipe protocol leaves standard input itself open
  }

  Status fail(const std::string& cause, Code code = Code::io_error) const { return HISTEQ_ERROR(code, path + ": " + cause); }

  // Live inputs: when data last came (steady ns), so that a stopped stream is noticed.
  std::atomic<int64_t> last_data_ns{0};
  bool timed_out = false;
  std::string end_note;              // live: why the input ended
  int64_t first_arrival_ns = 0;      // live: steady time the first frame arrived
  int64_t first_pts_ns = 0;          // live: its media time
  int wallclock_pts = -1;            // live: 1 when the stream's timestamps are wall-clock times, 0 not, -1 undecided

  static int interrupt_cb(void* opaque) {
    auto* m = static_cast<Impl*>(opaque);
    if (m->interrupted.load()) return 1;
    if (m->info.live && m->last_data_ns.load() > 0 && now_ns() - m->last_data_ns.load() > m->opts.live_timeout_s * 1e9) {
      m->timed_out = true;
      return 1;
    }
    return 0;
  }
  bool is_stream() const { return opts.webcam || opts.live || is_stream_url(path); }
  void stamp_capture(Frame& f) ;

  // open(): probe -> open_decoder -> describe.
  Status check_path(const AVInputFormat** ifmt) const;
  Status probe();
  Status unopenable(int err) const;
  Status unopenable_input(int err) const;
  Status unopenable_mp4(int err) const;
  std::string cause(int err) const;
  Status find_video_stream();
  bool parameters_known() const;
  Status open_container(const AVInputFormat* ifmt, bool wait_for_key_frame);
  Status check_index_before_samples() const;
  Status check_index_fits() const;
  Status open_decoder();
  void describe();
  Status probe_hardware_output();

  // next(): decode_one (receive, else read and send a packet) -> stamp -> convert (or wrap a GPU frame).
  enum class Step { frame, retry, need_input, end };
  Result<Step> decode_one();
  Result<Step> receive();
  Status read_and_send();
  bool live_stream_stopped(int e) const;
  bool data_ended(int e) const;
  void end_of_data(int e);
  void drain();
  Status dispatch_packet();
  // read_other_streams(): the packets after the video's, up to a time.
  enum class Read { packet, retry, end };
  Read read_other_packet(int& bad);
  std::vector<bool> audio_streams_in_use() const;
  double packet_time_s(double origin) const;
  // av_read_frame into `pkt`, its timestamps made continuous (ts_continuity.h).
  int read_packet() {
    const int e = av_read_frame(fmt, pkt.get());
    if (e >= 0) continuity->fix(pkt.get());
    return e;
  }
  Status send_video_packet();
  Status unreadable_packet(int e);
  Status stamp(Frame& f, int64_t t0, int64_t t1);
  Status end_of_input();
  std::string tail_truncation() const;
  bool ts_tail_aligned(int64_t packet) const;
  Status convert(const AVFrame* in, Frame& out);
  int64_t frame_duration_tb() const;
};

// Our own wording for the plain file-system cases (FFmpeg's would be "Invalid data found ..."), and
// the V4L2 demuxer for a webcam.
Status FileSource::Impl::check_path(const AVInputFormat** ifmt) const {
  struct stat st {};
  if (opts.webcam) {
    avdevice_register_all();
    *ifmt = av_find_input_format("v4l2");
    if (*ifmt == nullptr) return fail("this FFmpeg has no V4L2 (webcam) support", Code::unsupported);
    if (::stat(path.c_str(), &st) != 0)
      return fail(errno == ENOENT ? "no webcam here (no such device)" : std::strerror(errno), Code::not_found);
    if (!S_ISCHR(st.st_mode)) return fail("not a webcam (not a character device)", Code::invalid_argument);
    return Status::ok();
  }
  if (path == "-" || is_stream_url(path)) return Status::ok();  // FFmpeg's protocols say what is wrong with a URL
  if (::stat(path.c_str(), &st) != 0) {
    if (errno == ENOENT) return fail("no such file", Code::not_found);
    return fail(std::strerror(errno));
  }
  if (S_ISDIR(st.st_mode)) return fail("is a directory, not a video file", Code::invalid_argument);
  if (S_ISREG(st.st_mode) && st.st_size == 0) return fail("empty file (0 bytes)", Code::invalid_argument);
  return Status::ok();
}

// The container: opened, its streams read, the video stream chosen.
Status FileSource::Impl::probe() {
  const AVInputFormat* ifmt = nullptr;
  HISTEQ_TRY(check_path(&ifmt));
  info.live = is_stream();
  HISTEQ_TRY(open_container(ifmt, false));
  if (info.live && !parameters_known() && is_stream_url(path)) {
    // Joined mid-GOP: the short probe saw no parameter sets (they come with the next key frame,
    // seconds away with a long GOP). A second probe waits for them up to --live-timeout; what the
    // first read is not needed, as decoding starts at that key frame anyway. (A second
    // avformat_find_stream_info on the same context is not safe, hence the new one.)
    log.disown(fmt);
    avformat_close_input(&fmt);
    HISTEQ_TRY(open_container(ifmt, true));
    if (!parameters_known())
      return fail("no key frame with the video's parameters in " + seconds(opts.live_timeout_s) +
                  " (joined mid-GOP; a longer --live-timeout waits longer)");
  }
  HISTEQ_TRY(check_index_fits());
  for (unsigned i = 0; i < fmt->nb_streams; ++i)
    if (static_cast<int>(i) != vindex) fmt->streams[i]->discard = AVDISCARD_ALL;  // until a packet handler wants them
  continuity = std::make_unique<TimestampContinuity>(fmt);
  // Matroska's demuxer meets the end of a file cut inside an element as it meets a clean end; only
  // its log says which (ebml_parse: "File ended prematurely").
  if (std::strncmp(fmt->iformat->name, "matroska", 8) == 0) log.watch("File ended prematurely");
  return Status::ok();
}

bool FileSource::Impl::parameters_known() const {
  const AVCodecParameters* par = fmt->streams[vindex]->codecpar;
  return par->width > 0 && par->height > 0 && par->format >= 0;
}

Status FileSource::Impl::open_container(const AVInputFormat* ifmt, bool wait_for_key_frame) {
  fmt = avformat_alloc_context();
  if (fmt == nullptr) return fail("out of memory", Code::out_of_memory);
  fmt->interrupt_callback = {&Impl::interrupt_cb, this};
  log.own(fmt);
  const LogScope::Active active(log);  // the demuxer's probe logs through contexts made inside the call
  AVDictionary* o = nullptr;
  if (info.live) {
    // Live: start fast (a short probe); network reads time out. The packets of the probe are kept
    // (fflags nobuffer would drop them, and with them the first key frame of a long GOP): frames
    // that come out late are dropped by the player's pacer, so the backlog does not last.
    last_data_ns = now_ns();
    const auto wait_us = static_cast<int64_t>(opts.live_timeout_s * 1e6);
    av_dict_set_int(&o, "probesize", wait_for_key_frame ? 64 << 20 : 500000, 0);
    av_dict_set_int(&o, "analyzeduration", wait_for_key_frame ? wait_us : 500000, 0);
    av_dict_set_int(&o, "timeout", wait_us, 0);  // µs (udp, tcp, http)
    av_dict_set(&o, "rtsp_transport", "tcp", 0);
  }
  const std::string url = path == "-" ? "pipe:0" : path;
  if (path == "-" && stdin_pb == nullptr) {
    // Standard input through a reader of ours (FFmpeg leaves a caller's reader open when the open
    // fails), so that its byte count can tell an empty input from an unreadable one.
    if (int e = avio_open2(&stdin_pb, url.c_str(), AVIO_FLAG_READ, &fmt->interrupt_callback, nullptr); e < 0) {
      avformat_free_context(fmt);
      fmt = nullptr;
      return fail("cannot read standard input: " + av_error(e));
    }
  }
  if (stdin_pb != nullptr) {
    fmt->pb = stdin_pb;
    // The container probed here, as avformat_open_input would (the data read stays in the reader),
    // so that a failure can name it.
    if (ifmt == nullptr && av_probe_input_buffer2(stdin_pb, &ifmt, url.c_str(), fmt, 0, fmt->format_probesize) >= 0)
      stdin_format = ifmt;
  }
  const int opened = avformat_open_input(&fmt, url.c_str(), ifmt, &o);
  av_dict_free(&o);
  if (opened < 0) return unopenable(opened);
  HISTEQ_TRY(check_index_before_samples());
  if (int e = avformat_find_stream_info(fmt, nullptr); e < 0)
    return fail("cannot read the stream layout: " + cause(e), e == AVERROR_PATCHWELCOME ? Code::unsupported : Code::io_error);
  return find_video_stream();
}

// An MP4/MOV whose index (moov atom) follows its samples, read from a pipe: the demuxer read past
// the samples to reach the index and cannot go back to them, so no frame would come (FFmpeg then
// fails with "no pixel format"). A streaming MP4 (index first, or fragments) is read as it comes.
Status FileSource::Impl::check_index_before_samples() const {
  if (fmt->pb == nullptr || (fmt->pb->seekable & AVIO_SEEKABLE_NORMAL) != 0) return Status::ok();
  if (std::strncmp(fmt->iformat->name, "mov,", 4) != 0) return Status::ok();
  const int64_t read_to = avio_tell(fmt->pb);
  for (unsigned i = 0; i < fmt->nb_streams; ++i) {
    AVStream* st = fmt->streams[i];
    const AVIndexEntry* first = avformat_index_get_entries_count(st) > 0 ? avformat_index_get_entry(st, 0) : nullptr;
    if (first != nullptr && first->pos < read_to)
      return fail("an MP4/MOV whose index (moov atom) is at the end cannot be read from a pipe; have the producer "
                  "write a streaming container (ffmpeg -f mpegts, -f nut or -f matroska), or give the file's name",
                  Code::unsupported);
  }
  return Status::ok();
}

// FFmpeg's codes in the user's terms, with the log's line beside when it says more: its raw "Not
// yet implemented in FFmpeg, patches welcome" and a bare "End of file" are no cause a user can act on.
std::string FileSource::Impl::cause(int e) const {
  const std::string detail = log.last_error();
  std::string c;
  if (e == AVERROR_PATCHWELCOME) c = "it uses a feature this FFmpeg does not implement";
  else if (e == AVERROR_EOF) c = "the data ends early (cut short)";
  else return log.describe_failure(e);
  const bool says_more = !detail.empty() && detail.find("patches welcome") == std::string::npos && detail != av_error(e);
  return says_more ? c + " (" + detail + ")" : c;
}

namespace {

// What the top-level boxes of an MP4/MOV file say of its index: -1 not an MP4/MOV ("ftyp" box
// first), 0 no moov box, 1 a moov box within the file, 2 a moov box that runs past the file's end
// (a file cut inside its index).
int mp4_index_state(const std::string& path) {
  FILE* f = path == "-" ? nullptr : std::fopen(path.c_str(), "rb");
  if (f == nullptr) return -1;
  int state = -1;
  int64_t at = 0;
  unsigned char h[16];
  (void)std::fseek(f, 0, SEEK_END);
  const int64_t size = std::ftell(f);
  for (int box = 0; box < 64 && at + 8 <= size && std::fseek(f, static_cast<long>(at), SEEK_SET) == 0 &&
                    std::fread(h, 1, 16, f) >= 8; ++box) {
    int64_t len = (int64_t{h[0]} << 24) | (h[1] << 16) | (h[2] << 8) | h[3];
    if (len == 1) len = static_cast<int64_t>((uint64_t{h[8]} << 56) | (uint64_t{h[9]} << 48) | (uint64_t{h[10]} << 40) |
                                             (uint64_t{h[11]} << 32) | (uint64_t{h[12]} << 24) | (h[13] << 16) | (h[14] << 8) | h[15]);
    if (box == 0 && std::memcmp(h + 4, "ftyp", 4) != 0) break;
    if (box == 0) state = 0;
    if (std::memcmp(h + 4, "moov", 4) == 0) {
      state = len == 0 || at + len <= size ? 1 : 2;
      break;
    }
    if (len < 8) break;
    at += len;
  }
  std::fclose(f);
  return state;
}

}  // namespace

// An MP4/MOV that the demuxer could not open, or that shows no video: its index (the moov atom)
// never came (cut off before the end, or never finished: the muxer writes it last), or the file
// ends inside it, or it is damaged (the demuxer's "error reading header"). OK when the file is not one.
Status FileSource::Impl::unopenable_mp4(int e) const {
  const int index = mp4_index_state(path);
  if (index < 0) return Status::ok();
  const std::string said = log.last_error();
  if (index == 0 || said.find("moov atom not found") != std::string::npos)
    return fail("truncated or unfinished MP4/MOV file: its index (moov atom) is missing");
  if (index == 2) return fail("truncated MP4/MOV file: it ends inside its index (moov atom)");
  if (e == AVERROR_EOF || e == AVERROR_INVALIDDATA)
    return fail("damaged MP4/MOV file: its index (moov atom) cannot be read" + (said.empty() ? "" : " (" + said + ")"));
  return Status::ok();
}

// avformat_open_input failed (and freed the context): say why in the user's terms.
Status FileSource::Impl::unopenable(int e) const {
  HISTEQ_TRY(unopenable_input(e));
  if (e == AVERROR_INVALIDDATA) {
    if (is_stream() || path == "-") return fail("not a video stream this FFmpeg can read (unrecognised or invalid data)");
    return fail("not a video file this FFmpeg can read (unrecognised or invalid data)");
  }
  if (e == AVERROR_EXIT) return fail(timed_out ? "no stream: nothing came for " + seconds(opts.live_timeout_s) : "interrupted",
                                      timed_out ? Code::io_error : Code::cancelled);
  if (opts.webcam) return fail("cannot open the webcam: " + log.describe_failure(e));
  if (is_stream_url(path)) return fail("cannot open the stream: " + cause(e));
  // A demuxer that rejects the header's picture size returns whatever code its check gave (y4m:
  // EBUSY's "Device or resource busy"); the log line says what is wrong.
  int w = 0, h = 0;
  if (std::sscanf(log.last_error().c_str(), "Picture size %dx%d is invalid", &w, &h) == 2)
    return fail("invalid frame size " + std::to_string(w) + "x" + std::to_string(h) + " in its header", Code::unsupported);
  if (e == AVERROR_EOF) return fail("truncated: the data ends inside its header");
  if (e == AVERROR_PATCHWELCOME) return fail("its container " + cause(e), Code::unsupported);
  return fail(log.describe_failure(e));
}

// unopenable(): what the input itself shows (OK when nothing): standard input that was empty or
// that needs seeking, an MP4/MOV without its index.
Status FileSource::Impl::unopenable_input(int e) const {
  if (path == "-" && stdin_pb != nullptr && stdin_pb->bytes_read == 0 && e != AVERROR_EXIT)
    return fail("standard input is empty: no data came (did the command before the | fail?)", Code::invalid_argument);
  if (e == AVERROR_INVALIDDATA || e == AVERROR_EOF) HISTEQ_TRY(unopenable_mp4(e));
  if (e == AVERROR_EOF && stdin_format != nullptr) {
    // A demuxer that met damage in the header skips forward to get past it and then goes back to
    // a point it can resync at: a file can, a pipe has no way back, so the skip ends at the end of
    // the data (a Matroska/WebM whose Segment ID is damaged: exports by name, "End of file" here).
    const char* what = stdin_format->long_name != nullptr ? stdin_format->long_name : stdin_format->name;
    return fail(std::string("cannot read this ") + what + " from a pipe: the data ended inside its header (a damaged header, "
                "which the demuxer gets past only by seeking back, or a stream cut short); give the file's name instead",
                Code::unsupported);
  }
  return Status::ok();
}

Status FileSource::Impl::find_video_stream() {
  vindex = av_find_best_stream(fmt, AVMEDIA_TYPE_VIDEO, -1, -1, &codec, 0);
  if (vindex == AVERROR_STREAM_NOT_FOUND) {
    HISTEQ_TRY(unopenable_mp4(0));  // an MP4 cut inside its index, before the video's track
    return fail("no video stream (it has " + stream_summary(fmt) + ")", Code::unsupported);
  }
  if (vindex < 0 || codec == nullptr) {
    // av_find_best_stream reports a video stream without a decoder as AVERROR_DECODER_NOT_FOUND.
    int idx = -1;
    for (unsigned i = 0; i < fmt->nb_streams; ++i)
      if (fmt->streams[i]->codecpar->codec_type == AVMEDIA_TYPE_VIDEO) { idx = static_cast<int>(i); break; }
    if (idx < 0) return fail("no video stream (it has " + stream_summary(fmt) + ")", Code::unsupported);
    const AVCodecParameters* par = fmt->streams[idx]->codecpar;
    std::string what = par->codec_id != AV_CODEC_ID_NONE ? std::string("'") + avcodec_get_name(par->codec_id) + "'" : "";
    if (par->codec_tag != 0) {
      char tag[AV_FOURCC_MAX_STRING_SIZE] = {0};
      av_fourcc_make_string(tag, par->codec_tag);
      what += (what.empty() ? "" : ", ") + std::string("fourcc ") + tag;
    }
    return fail("unsupported video codec (" + (what.empty() ? std::string("unknown") : what) +
                    "): this FFmpeg has no decoder for it",
                Code::unsupported);
  }
  if (fmt->streams[vindex]->disposition & AV_DISPOSITION_ATTACHED_PIC)
    return fail("no video stream (only a cover picture; it has " + stream_summary(fmt) + ")", Code::unsupported);
  return Status::ok();
}

// Containers with a sample index (MP4/MOV, AVI) say where every packet is. A file cut short is
// caught here, before any work: its index points past its end.
Status FileSource::Impl::check_index_fits() const {
  if (fmt->pb == nullptr || (fmt->pb->seekable & AVIO_SEEKABLE_NORMAL) == 0) return Status::ok();
  const int64_t size = avio_size(fmt->pb);
  if (size <= 0) return Status::ok();
  const AVStream* vs = fmt->streams[vindex];
  const int n = avformat_index_get_entries_count(vs);
  if (n <= 0) return Status::ok();
  int inside = 0;
  bool cut = false;
  for (int i = 0; i < n; ++i) {
    const AVIndexEntry* e = avformat_index_get_entry(const_cast<AVStream*>(vs), i);
    if (e == nullptr || e->size <= 0) continue;
    if (e->pos + e->size <= size) ++inside;
    else cut = true;
  }
  if (!cut) return Status::ok();
  return fail("truncated: the file ends after " + std::to_string(inside) + " of the " + std::to_string(n) +
              " video frames its index lists (" + std::to_string(size) + " bytes)");
}

Status FileSource::Impl::open_decoder() {
  const AVStream* vs = fmt->streams[vindex];
  dec.reset(avcodec_alloc_context3(codec));
  if (!dec) return fail("out of memory", Code::out_of_memory);
  if (int e = avcodec_parameters_to_context(dec.get(), vs->codecpar); e < 0) return fail("bad codec parameters: " + av_error(e));
  dec->thread_count = opts.decoder_threads;
  dec->pkt_timebase = vs->time_base;
  if (info.live) {
    // Frame threads hold a frame per thread before the first comes out (250 ms at 60 fps with 16
    // threads): a live input decodes with slice threads and low delay instead.
    dec->thread_type = FF_THREAD_SLICE;
    dec->flags |= AV_CODEC_FLAG_LOW_DELAY;
  }
  dec->opaque = &log;  // frame-threaded decoders log through copies of this context (LogScope)
  log.own(dec.get());
  if (opts.hwdec != HwDecode::none) {
    std::string why;
    hw = HwDecoder::attach(dec.get(), codec, opts.hwdec, opts.frames_held, opts.cuda_device, why);
    if (!hw) info.decode_note = why;
  }
  if (int e = avcodec_open2(dec.get(), codec, nullptr); e < 0)
    return fail(std::string("cannot open the ") + codec->name + " decoder: " + cause(e), Code::unsupported);
  if (dec->width <= 0 || dec->height <= 0) return fail("the video stream has no frame size");
  if (dec->pix_fmt == AV_PIX_FMT_NONE) return fail("the video stream has no pixel format");
  pkt.reset(av_packet_alloc());
  frame.reset(av_frame_alloc());
  if (!pkt || !frame) return fail("out of memory", Code::out_of_memory);
  return Status::ok();
}

// What the decoder gives (native) and what next() produces by default (info: the layout, timing,
// colour, expected length, the one-line description).
void FileSource::Impl::describe() {
  const AVStream* vs = fmt->streams[vindex];
  const AVPixelFormat base = strip_jpeg_range(dec->pix_fmt, &full_range);
  native.width = dec->width;
  native.height = dec->height;
  native.av_pix_fmt = dec->pix_fmt;
  native.pix_fmt_name = av_get_pix_fmt_name(dec->pix_fmt) ? av_get_pix_fmt_name(dec->pix_fmt) : "?";
  native.codec_name = codec->name;
  native.color.range = full_range ? AVCOL_RANGE_JPEG : dec->color_range;
  native.color.primaries = dec->color_primaries;
  native.color.transfer = dec->color_trc;
  native.color.space = dec->colorspace;
  native.color.chroma_location = dec->chroma_sample_location;

  info.name = path;
  info.format = natural_format(base, dec->width, dec->height);
  info.decoder = "software";
  info.time_base = to_rational(vs->time_base);
  info.frame_rate = to_rational(av_guess_frame_rate(fmt, const_cast<AVStream*>(vs), nullptr));
  info.live = is_stream();
  info.color = native.color;
  const AVPixFmtDescriptor* d = av_pix_fmt_desc_get(base);
  if (d != nullptr && (d->flags & AV_PIX_FMT_FLAG_RGB || d->nb_components < 3)) {
    // Converted to YUV by swscale's defaults: BT.601 matrix, limited range.
    info.color.range = AVCOL_RANGE_MPEG;
    info.color.space = AVCOL_SPC_SMPTE170M;
  }
  if (vs->duration > 0 && vs->duration != AV_NOPTS_VALUE) info.duration_s = vs->duration * av_q2d(vs->time_base);
  else if (fmt->duration > 0) info.duration_s = static_cast<double>(fmt->duration) / AV_TIME_BASE;
  if (vs->nb_frames > 0) {
    info.frames_hint = vs->nb_frames;
    info.frames_exact = true;
  } else if (info.duration_s > 0 && info.frame_rate.valid()) {
    info.frames_hint = static_cast<int64_t>(std::llround(info.duration_s * info.frame_rate.value()));
  }
  char desc[256];
  const char* profile = avcodec_profile_name(codec->id, dec->profile);
  std::snprintf(desc, sizeof(desc), "%s%s%s%s %dx%d %s", opts.webcam ? "webcam " : "", codec->name, profile ? " " : "",
                profile ? (std::string("(") + profile + ")").c_str() : "", dec->width, dec->height, native.pix_fmt_name.c_str());
  info.description = desc;
  if (info.frame_rate.valid()) info.description += ", " + format_number(info.frame_rate.value(), 4) + " fps";
  if (info.duration_s > 0) info.description += ", " + format_fixed(info.duration_s, 1) + " s";
}

// With NVDEC attached, whether frames really come out on the GPU is known only once the decoder
// has chosen its output (a profile or size NVDEC refuses makes FFmpeg decode in software): decode
// the first frame now, keep it for the first next(), and describe what comes out.
Status FileSource::Impl::probe_hardware_output() {
  if (!hw) return Status::ok();
  const LogScope::Active active(log);
  auto step = decode_one();
  if (!step) return step.status();
  if (*step != Step::frame) return Status::ok();  // nothing decodable: next() reports it
  have_pending = true;
  if (HwDecoder::is_hw_frame(frame.get())) {
    auto f = HwDecoder::format_of(frame.get());
    if (f) {
      info.format = *f;
      info.decoder = "NVDEC (" + hw->device_name() + ")";
      info.decode_note.clear();
      return Status::ok();
    }
    info.decode_note = "software decode: " + f.status().message();
  } else {
    const std::string why = log.last_error();
    info.decode_note = std::string("software decode: NVDEC refused this ") + codec->name + " stream (" + native.pix_fmt_name +
                       ", " + std::to_string(native.width) + "x" + std::to_string(native.height) +
                       (why.empty() ? "" : "; " + why) + ")";
  }
  hw.reset();  // frames are software frames from here on (a hardware frame already decoded is converted)
  return Status::ok();
}

// The next decoded frame into `frame`, reading packets as the decoder needs them.
Result<FileSource::Impl::Step> FileSource::Impl::decode_one() {
  for (;;) {
    if (interrupted) return fail("interrupted", Code::cancelled);
    auto step = receive();
    if (!step) return step.status();
    if (*step == Step::frame || *step == Step::end) return *step;
    if (*step == Step::retry) continue;
    HISTEQ_TRY(read_and_send());
  }
}

int64_t FileSource::Impl::frame_duration_tb() const {
  const AVRational tb = to_av(info.time_base);
  if (info.frame_rate.valid() && tb.num > 0) {
    const int64_t d = av_rescale_q(1, av_inv_q(to_av(info.frame_rate)), tb);
    if (d > 0) return d;
  }
  return 1;
}

Status FileSource::Impl::end_of_input() {
  ended = true;
  const AVStream* vs = fmt->streams[vindex];
  // The index promises more packets than the file holds, and reading stopped on errors: the file
  // was cut short (an AVI). (Index entries an edit list skips are not read errors.) With frames
  // read it is a short input (the caller says so), else there is nothing to export.
  if (read_errors_since_video > 0 && vs->nb_frames > 0 && video_packets < vs->nb_frames) {
    truncation = "the data ends before the packets its index lists do";
    if (frames.load() == 0)
      return fail("truncated: the data ends after " + std::to_string(video_packets) + " of " + std::to_string(vs->nb_frames) +
                  " video packets");
  }
  if (truncation.empty() && !info.live) truncation = tail_truncation();
  if (frames.load() == 0) {
    std::string cause = "no decodable video frame";
    if (corrupt.load() > 0) cause += " (" + std::to_string(corrupt.load()) + " corrupt packets";
    if (!last_decode_error.empty()) cause += (corrupt.load() > 0 ? "; " : " (") + last_decode_error;
    if (corrupt.load() > 0 || !last_decode_error.empty()) cause += ")";
    return fail(cause);
  }
  return Status::ok();
}

// What the demuxer does not report as an error, but the data shows: a frame decoded from the
// stream's last packets that is damaged, a Matroska file that ends inside an element, a transport
// stream that ends inside one of its fixed-size packets (the demuxer drops the partial packet in
// silence). "" when none.
std::string FileSource::Impl::tail_truncation() const {
  const char* name = fmt->iformat->name;
  if (std::strncmp(name, "matroska", 8) == 0 && log.watched() > 0) return "the Matroska data ends inside an element";
  int64_t packet = 0;
  if (std::strcmp(name, "mpegts") == 0 && fmt->pb != nullptr &&
      av_opt_get_int(fmt, "ts_packetsize", AV_OPT_SEARCH_CHILDREN, &packet) >= 0 && packet > 0) {
    // A pipe: the bytes read (a stream that starts with stray bytes is rare enough on a pipe).
    const bool file = (fmt->pb->seekable & AVIO_SEEKABLE_NORMAL) != 0;
    const int64_t read = file ? 0 : avio_tell(fmt->pb);
    if (file ? !ts_tail_aligned(packet) : read > 0 && read % packet != 0) return "the data ends inside a transport stream packet";
  }
  // Whatever the container: the stream ends inside its last frame (the decoder concealed what was
  // missing, or rejected the packet), as when a transport stream is cut on a packet boundary.
  if (damaged_at_end == EndDamage::frame) return "the last frame is incomplete (the data ends inside it)";
  if (damaged_at_end == EndDamage::packets) return "its last packets cannot be read or decoded";
  return "";
}

// Whether the file's last two packets of `packet` bytes start with the sync byte where they
// would if the file ended on a packet's end (M2TS: after a 4-byte time code).
bool FileSource::Impl::ts_tail_aligned(int64_t packet) const {
  FILE* f = std::fopen(path.c_str(), "rb");
  if (f == nullptr) return true;  // nothing to say
  bool aligned = std::fseek(f, 0, SEEK_END) == 0;
  const long size = aligned ? std::ftell(f) : -1;
  const long sync_at = packet == 192 ? 4 : 0;
  for (long k = 1; aligned && k <= 2 && size >= k * packet; ++k)
    aligned = std::fseek(f, size - k * packet + sync_at, SEEK_SET) == 0 && std::fgetc(f) == 0x47;
  std::fclose(f);
  return aligned;
}

// One attempt to take a decoded frame: Step::frame (in `frame`), retry (a frame was skipped or an
// error counted: receive again), need_input (the decoder wants a packet), end (the input is over).
Result<FileSource::Impl::Step> FileSource::Impl::receive() {
  const int e = avcodec_receive_frame(dec.get(), frame.get());
  if (e == 0) {
    if (skip_before_pts != AV_NOPTS_VALUE) {
      // After a seek the decoder restarts at a key frame before the target: skip up to the target.
      const int64_t p = frame->best_effort_timestamp;
      if (p != AV_NOPTS_VALUE && p < skip_before_pts) {
        av_frame_unref(frame.get());
        return Step::retry;
      }
      skip_before_pts = AV_NOPTS_VALUE;
    }
    return Step::frame;
  }
  if (e == AVERROR_EOF) return Step::end;
  if (e == AVERROR(EAGAIN)) return draining ? Step::end : Step::need_input;  // a decoder that never signals EOF after the flush
  if (e == AVERROR(ENOMEM)) return fail("out of memory while decoding", Code::out_of_memory);
  ++corrupt;  // a frame-threaded decoder reports a bad packet here, one call late
  last_decode_error = cause(e);
  damaged_at_end = EndDamage::packets;
  return Step::retry;
}

// Reads the next packet: video goes to the decoder, other streams to the packet handler; damaged
// data is counted and skipped; the end of the file starts the decoder's drain.
Status FileSource::Impl::read_and_send() {
  const int e = read_packet();
  if (live_stream_stopped(e)) {
    // A live stream that went silent: the input ends here (what was decoded is kept), said once.
    end_note = "the stream stopped: nothing came for " + seconds(opts.live_timeout_s);
    drain();
    return Status::ok();
  }
  if (data_ended(e)) {
    end_of_data(e);
    return Status::ok();
  }
  if (e == AVERROR(EAGAIN)) {  // live devices: no frame yet
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
    return Status::ok();
  }
  if (e == AVERROR_EXIT) return fail("interrupted", Code::cancelled);
  if (e < 0) return unreadable_packet(e);
  return dispatch_packet();
}

// Whether read error `e` means that a live stream stopped sending: the interrupt callback's
// timeout, the network's, or any error once nothing came for nearly --live-timeout (a demuxer may
// report a dead connection as something else).
bool FileSource::Impl::live_stream_stopped(int e) const {
  if (e == AVERROR_EXIT && timed_out) return true;
  if (!info.live || e >= 0) return false;
  const bool silent = now_ns() - last_data_ns.load() > opts.live_timeout_s * 0.9e9;
  return e == AVERROR(ETIMEDOUT) || e == AVERROR(EIO) || silent;
}

// Whether the data is over: the demuxer's end, or an error at the end of the file (the last packet
// cut off). A device's "try again" is never the end.
bool FileSource::Impl::data_ended(int e) const {
  if (e == AVERROR_EOF) return true;
  return e < 0 && e != AVERROR(EAGAIN) && fmt->pb != nullptr && avio_feof(fmt->pb);
}

// The end of the data: noted for a live stream, counted as a truncation when the last packet was
// cut off, and the decoder drained of the frames it holds.
void FileSource::Impl::end_of_data(int e) {
  if (info.live && end_note.empty()) end_note = "the stream ended";
  if (e != AVERROR_EOF) {  // the last packet was cut off
    truncation = "the data ends inside a packet";
    ++consecutive_read_errors;
    ++read_errors_since_video;
    ++corrupt;
  }
  drain();
}

// No packet will come: the decoder hands out the frames it holds, then says it is done.
void FileSource::Impl::drain() {
  draining = true;
  (void)avcodec_send_packet(dec.get(), nullptr);
}

// A packet read: the video's to the decoder, another stream's to the packet handler.
Status FileSource::Impl::dispatch_packet() {
  consecutive_read_errors = 0;
  last_data_ns = now_ns();
  if (pkt->stream_index == vindex) return send_video_packet();
  Status hs = packet_handler ? packet_handler(pkt.get()) : Status::ok();
  av_packet_unref(pkt.get());
  return hs;
}

// A packet that could not be read (e < 0, not the end): counted and skipped when the data is
// invalid, the end of the input after a run of them; any other error ends the read.
Status FileSource::Impl::unreadable_packet(int e) {
  if (e == AVERROR(ENOMEM)) return fail("out of memory while reading", Code::out_of_memory);
  if (e != AVERROR_INVALIDDATA) return fail("read error: " + cause(e));
  ++corrupt;
  ++read_errors_since_video;
  damaged_at_end = EndDamage::packets;
  if (++consecutive_read_errors < kMaxConsecutiveReadErrors) return Status::ok();
  const AVStream* vs = fmt->streams[vindex];
  if (vs->nb_frames > 0 && video_packets < vs->nb_frames)
    return fail("truncated: the data ends after " + std::to_string(video_packets) + " of " + std::to_string(vs->nb_frames) +
                " video packets");
  return fail("unreadable data: " + std::to_string(kMaxConsecutiveReadErrors) + " bad packets in a row (" +
              log.describe_failure(e) + ")");
}

Status FileSource::Impl::send_video_packet() {
  ++video_packets;
  const bool flagged = (pkt->flags & AV_PKT_FLAG_CORRUPT) != 0;
  // A demuxer that finds fewer bytes than its index promised flags the packet corrupt (mov).
  read_errors_since_video = flagged ? read_errors_since_video + 1 : 0;
  const int e = avcodec_send_packet(dec.get(), pkt.get());
  av_packet_unref(pkt.get());
  if (e == AVERROR(ENOMEM)) return fail("out of memory while decoding", Code::out_of_memory);
  if (e < 0 && e != AVERROR(EAGAIN)) last_decode_error = cause(e);
  if (flagged || (e < 0 && e != AVERROR(EAGAIN))) {
    ++corrupt;
    damaged_at_end = EndDamage::packets;
  }
  return Status::ok();
}

// Timestamps (repaired to strictly increasing), index, flags, aspect, colour and stage timings of
// the decoded frame in `frame`, onto `f`.
Status FileSource::Impl::stamp(Frame& f, int64_t t0, int64_t t1) {
  const AVFrame* in = frame.get();
  int64_t pts = in->best_effort_timestamp;
  if (pts == AV_NOPTS_VALUE || (last_pts != AV_NOPTS_VALUE && pts <= last_pts)) {
    // Encoders need strictly increasing timestamps; keep the frame, give it the next slot.
    if (last_pts != AV_NOPTS_VALUE || pts != AV_NOPTS_VALUE) ++repaired;
    pts = last_pts == AV_NOPTS_VALUE ? 0 : last_pts + std::max<int64_t>(1, in->pkt_duration > 0 ? in->pkt_duration : frame_duration_tb());
  }
  if (first_pts == AV_NOPTS_VALUE) first_pts = pts;
  last_pts = pts;
  f.color = info.color;
  if (in->color_range != AVCOL_RANGE_UNSPECIFIED && !full_range) f.color.range = in->color_range;
  f.sample_aspect = to_rational(in->sample_aspect_ratio);
  f.pts = pts;
  f.time_base = info.time_base;
  f.time_s = static_cast<double>(pts - first_pts) * av_q2d(to_av(info.time_base));
  time_reached_s = f.time_s + static_cast<double>(in->pkt_duration > 0 ? in->pkt_duration : frame_duration_tb()) *
                                  av_q2d(to_av(info.time_base));
  f.index = frames++;
  f.damaged = in->decode_error_flags != 0 || (in->flags & AV_FRAME_FLAG_CORRUPT);
  if (f.damaged) ++damaged;
  if (f.damaged) damaged_at_end = EndDamage::frame;
  else if (!draining) damaged_at_end = EndDamage::none;
  // A live frame starts when its data arrived, not when the decode thread began to wait for it.
  const int64_t start = info.live ? std::max(t0, std::min(t1, last_data_ns.load())) : t0;
  f.timing.start_ns = start;
  f.timing.set(stage::decode, (t1 - start) / 1e6);
  if (info.live) stamp_capture(f);
  return Status::ok();
}

// The capture time of a live frame, on the steady clock. Wall-clock timestamps (a camera's, or a
// producer's that stamps capture times) are used as they are; MPEG-TS keeps 33 bits of 90 kHz
// ticks, so times there are compared modulo 2^33 ticks (26.5 hours). Other streams count from the
// first frame's arrival: then the figure is the delay added since that frame.
void FileSource::Impl::stamp_capture(Frame& f) {
  const int64_t now = now_ns();
  const double tb = av_q2d(to_av(info.time_base));
  const double media_s = static_cast<double>(f.pts) * tb;
  const double wall_s = std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
  const double wrap_s = 8589934592.0 / 90000.0;
  double behind = wall_s - media_s;
  const bool ts = fmt->iformat != nullptr && std::strcmp(fmt->iformat->name, "mpegts") == 0;
  if (ts) behind = std::fmod(std::fmod(behind, wrap_s) + wrap_s, wrap_s);
  if (wallclock_pts < 0) wallclock_pts = behind >= -0.5 && behind < 30.0 ? 1 : 0;  // decided on the first frame
  if (wallclock_pts == 1 && behind >= -0.5 && behind < 30.0) {
    f.timing.capture_ns = now - static_cast<int64_t>(std::max(0.0, behind) * 1e9);
    return;
  }
  // The anchor is the frame that arrived earliest against its timestamp: a stream that runs ahead
  // of real time (a pipe read faster than it plays) moves it, so a capture is never after its
  // frame's arrival and the latency never negative.
  const int64_t media_ns = static_cast<int64_t>(media_s * 1e9);
  if (first_arrival_ns == 0 || f.timing.start_ns - media_ns < first_arrival_ns - first_pts_ns) {
    first_arrival_ns = f.timing.start_ns;
    first_pts_ns = media_ns;
  }
  f.timing.capture_ns = first_arrival_ns + (media_ns - first_pts_ns);
}

Status FileSource::Impl::convert(const AVFrame* in, Frame& out) {
  const FrameFormat& of = out.format();
  if (out.on_device()) return fail("cannot convert into a device frame", Code::invalid_argument);
  bool src_full = false;
  const AVPixelFormat src = strip_jpeg_range(static_cast<AVPixelFormat>(in->format), &src_full);
  uint8_t* dst[4] = {nullptr, nullptr, nullptr, nullptr};
  int dst_linesize[4] = {0, 0, 0, 0};
  for (int i = 0; i < of.plane_count(); ++i) {
    const PlaneRef r = out.plane(i);
    dst[i] = static_cast<uint8_t*>(const_cast<void*>(r.data));
    dst_linesize[i] = static_cast<int>(r.pitch);
  }
  if (src == of.av_pix_fmt() && in->width == of.width && in->height == of.height) {
    // The common case (8-bit 4:2:0 in and out): a plain copy, as it is.
    for (int i = 0; i < of.plane_count(); ++i)
      av_image_copy_plane(dst[i], dst_linesize[i], in->data[i], in->linesize[i], of.plane_width(i) * of.bytes_per_sample(),
                          of.plane_height(i));
    return Status::ok();
  }
  const AVPixFmtDescriptor* d = av_pix_fmt_desc_get(src);
  const bool src_yuv = d != nullptr && !(d->flags & (AV_PIX_FMT_FLAG_RGB | AV_PIX_FMT_FLAG_PAL)) && d->nb_components >= 3;
  // Same size, YUV to YUV: only chroma resampling and depth change. Point sampling duplicates chroma
  // exactly when upsampling (4:2:0 -> 4:4:4 for odd sizes); other cases get bicubic.
  const bool same_size = in->width == of.width && in->height == of.height;
  const int flags = (same_size && src_yuv && d->log2_chroma_w >= of.chroma_shift_x && d->log2_chroma_h >= of.chroma_shift_y)
                        ? SWS_POINT
                        : SWS_BICUBIC;
  log.disown(sws);
  sws = sws_getCachedContext(sws, in->width, in->height, src, of.width, of.height, static_cast<AVPixelFormat>(of.av_pix_fmt()),
                             flags, nullptr, nullptr, nullptr);
  if (sws == nullptr)
    return fail(std::string("cannot convert ") + (av_get_pix_fmt_name(src) ? av_get_pix_fmt_name(src) : "?") + " to " +
                av_get_pix_fmt_name(static_cast<AVPixelFormat>(of.av_pix_fmt())), Code::unsupported);
  log.own(sws);
  if (src_yuv) {
    // YUV to YUV keeps the range as it is (swscale would otherwise squeeze full range into limited).
    const int range = src_full || in->color_range == AVCOL_RANGE_JPEG ? 1 : 0;
    const int* coeffs = sws_getCoefficients(SWS_CS_DEFAULT);
    sws_setColorspaceDetails(sws, coeffs, range, coeffs, range, 0, 1 << 16, 1 << 16);
  }
  if (sws_scale(sws, in->data, in->linesize, 0, in->height, dst, dst_linesize) <= 0) return fail("pixel format conversion failed");
  return Status::ok();
}

FileSource::FileSource() : impl_(std::make_unique<Impl>()) {}
FileSource::~FileSource() = default;

Result<std::unique_ptr<FileSource>> FileSource::open(const std::string& path, const FileSourceOptions& opts) {
  std::unique_ptr<FileSource> s(new FileSource());
  Impl& m = *s->impl_;
  m.path = path;
  m.opts = opts;
  Status st = m.probe();
  if (st) st = m.open_decoder();
  if (st) m.describe();
  if (st) st = m.probe_hardware_output();
  // Whatever part of the index a cut MP4/MOV kept, the cause is the cut (not "no pixel format").
  if (!st && st.code() != Code::cancelled && mp4_index_state(path) == 2)
    return m.fail("truncated MP4/MOV file: it ends inside its index (moov atom)");
  HISTEQ_TRY(st);
  return s;
}

const SourceInfo& FileSource::info() const { return impl_->info; }
const NativeVideo& FileSource::native() const { return impl_->native; }
AVFormatContext* FileSource::format_context() const { return impl_->fmt; }
int FileSource::video_stream_index() const { return impl_->vindex; }
void FileSource::interrupt() { impl_->interrupted = true; }
std::string FileSource::end_note() const { return impl_->ended ? impl_->end_note : ""; }
std::string FileSource::truncation() const { return impl_->ended ? impl_->truncation : ""; }
double FileSource::time_reached_s() const { return impl_->time_reached_s; }

bool FileSource::can_seek() const {
  const Impl& s = *impl_;
  return !s.opts.webcam && s.fmt != nullptr && s.fmt->pb != nullptr && (s.fmt->pb->seekable & AVIO_SEEKABLE_NORMAL) != 0;
}

Status FileSource::seek(double time_s) {
  Impl& s = *impl_;
  if (!can_seek()) return HISTEQ_ERROR(Code::unsupported, s.path + ": this input cannot seek");
  if (!(time_s >= 0)) time_s = 0;
  if (s.info.duration_s > 0) time_s = std::min(time_s, s.info.duration_s);
  const AVStream* vs = s.fmt->streams[s.vindex];
  const double tb = av_q2d(vs->time_base);
  const int64_t origin = s.first_pts.load() != AV_NOPTS_VALUE ? s.first_pts.load() : (vs->start_time != AV_NOPTS_VALUE ? vs->start_time : 0);
  // The first tick at or after the time (less a hair of floating-point error): the first frame
  // whose timestamp, as the file stores it, is not before the time.
  const int64_t target = origin + static_cast<int64_t>(std::ceil(time_s / tb - 1e-6));
  s.interrupted = false;
  s.first_pts = origin;  // unchanged once a frame was read; else times count from the stream's start
  const int64_t seek_to = target - static_cast<int64_t>(std::llround(std::max(0.0, s.opts.seek_preroll_s) / tb));
  if (int e = av_seek_frame(s.fmt, s.vindex, seek_to, AVSEEK_FLAG_BACKWARD); e < 0) return s.fail("cannot seek: " + s.log.describe_failure(e));
  avcodec_flush_buffers(s.dec.get());
  if (s.have_pending) av_frame_unref(s.frame.get());
  s.have_pending = false;
  s.skip_before_pts = target;
  s.draining = s.ended = false;
  s.last_pts = AV_NOPTS_VALUE;  // timestamps may go back now; that is not a repair
  s.continuity->reset();
  s.consecutive_read_errors = 0;
  s.read_errors_since_video = 0;
  s.truncation.clear();
  s.damaged_at_end = Impl::EndDamage::none;
  return Status::ok();
}

double FileSource::time_origin_s() const {
  const Impl& s = *impl_;
  const AVStream* vs = s.fmt->streams[s.vindex];
  const int64_t first = s.first_pts.load();
  const int64_t origin = first != AV_NOPTS_VALUE ? first : (vs->start_time != AV_NOPTS_VALUE ? vs->start_time : 0);
  return static_cast<double>(origin) * av_q2d(vs->time_base);
}

// The audio streams that a packet handler takes: those read_other_streams() waits for.
std::vector<bool> FileSource::Impl::audio_streams_in_use() const {
  std::vector<bool> in_use(fmt->nb_streams, false);
  for (unsigned i = 0; i < fmt->nb_streams; ++i) {
    const AVStream* st = fmt->streams[i];
    in_use[i] = static_cast<int>(i) != vindex && st->discard != AVDISCARD_ALL && st->codecpar->codec_type == AVMEDIA_TYPE_AUDIO;
  }
  return in_use;
}

// One packet for read_other_streams(), into `pkt`: `end` at the end of the data or on a read error
// (what was read is kept), `retry` when a device has none yet or a packet was bad (a run of `bad`
// ones in a row ends the read).
FileSource::Impl::Read FileSource::Impl::read_other_packet(int& bad) {
  const int e = read_packet();
  if (e == AVERROR_EOF || (e < 0 && fmt->pb != nullptr && avio_feof(fmt->pb))) return Read::end;
  if (e == AVERROR(EAGAIN)) return Read::retry;
  if (e < 0) return e != AVERROR_INVALIDDATA || ++bad >= kMaxConsecutiveReadErrors ? Read::end : Read::retry;
  bad = 0;
  return Read::packet;
}

// The time of the packet in `pkt` from `origin` (s); one without a timestamp is before any time.
double FileSource::Impl::packet_time_s(double origin) const {
  const AVStream* st = fmt->streams[pkt->stream_index];
  const int64_t ts = pkt->pts != AV_NOPTS_VALUE ? pkt->pts : pkt->dts;
  return ts != AV_NOPTS_VALUE ? static_cast<double>(ts) * av_q2d(st->time_base) - origin : -1e300;
}

// Reads on until each audio stream has a packet at `until_s` or later, so that the audio keeps up
// with the video; the video's packets read meanwhile are dropped. A container interleaves its
// streams within a few seconds: a packet 10 s past the time ends the read whatever is missing.
Status FileSource::read_other_streams(double until_s) {
  Impl& s = *impl_;
  if (!s.packet_handler) return Status::ok();
  const LogScope::Active active(s.log);
  const double origin = time_origin_s();
  constexpr double kFarthestInterleave = 10.0;
  std::vector<bool> waiting = s.audio_streams_in_use();
  auto left = std::count(waiting.begin(), waiting.end(), true);
  int bad = 0;
  while (left > 0) {
    if (s.interrupted) return s.fail("interrupted", Code::cancelled);
    const Impl::Read r = s.read_other_packet(bad);
    if (r == Impl::Read::end) break;
    if (r == Impl::Read::retry) continue;
    const int index = s.pkt->stream_index;
    const double t = s.packet_time_s(origin);
    if (t >= until_s + kFarthestInterleave) {
      av_packet_unref(s.pkt.get());
      break;
    }
    if (index == s.vindex) {
      av_packet_unref(s.pkt.get());
      continue;
    }
    Status hs = s.packet_handler(s.pkt.get());
    av_packet_unref(s.pkt.get());
    HISTEQ_TRY(hs);
    if (waiting[static_cast<size_t>(index)] && t >= until_s) {
      waiting[static_cast<size_t>(index)] = false;
      --left;
    }
  }
  return Status::ok();
}

SourceCounters FileSource::counters() const {
  SourceCounters c;
  c.frames = impl_->frames.load();
  c.corrupt_packets = impl_->corrupt.load();
  c.damaged_frames = impl_->damaged.load();
  c.repaired_timestamps = impl_->repaired.load();
  return c;
}

Status FileSource::set_output_format(const FrameFormat& format) {
  if (impl_->started) return HISTEQ_ERROR(Code::invalid_argument, "set_output_format after the first frame");
  if (Status v = validate(format); !v) return impl_->fail(v.message(), v.code());
  impl_->info.format = format;
  return Status::ok();
}

void FileSource::set_packet_handler(std::function<Status(AVPacket*)> handler) {
  impl_->packet_handler = std::move(handler);
  for (unsigned i = 0; i < impl_->fmt->nb_streams; ++i)
    if (static_cast<int>(i) != impl_->vindex) impl_->fmt->streams[i]->discard = impl_->packet_handler ? AVDISCARD_DEFAULT : AVDISCARD_ALL;
}

Result<FramePtr> FileSource::next(FramePool& pool) {
  Impl& s = *impl_;
  if (pool.format() != s.info.format) return HISTEQ_ERROR(Code::invalid_argument, "frame pool format differs from the source's");
  if (s.ended) return FramePtr();
  s.started = true;
  const LogScope::Active active(s.log);
  const int64_t t0 = now_ns();
  if (s.have_pending) {
    s.have_pending = false;  // open() decoded it
  } else {
    auto step = s.decode_one();
    if (!step) return step.status();
    if (*step == Impl::Step::end) {
      HISTEQ_TRY(s.end_of_input());
      return FramePtr();
    }
  }
  const int64_t t1 = now_ns();
  AVFrame* in = s.frame.get();
  if (s.hw && HwDecoder::is_hw_frame(in)) {
    // NVDEC: the frame stays on the GPU, as it is (no convert stage).
    auto fmt = HwDecoder::format_of(in);
    Result<FramePtr> out = fmt ? (*fmt == s.info.format ? s.hw->wrap(in, *fmt)
                                                        : Result<FramePtr>(s.fail("the stream changed to " + fmt->describe() +
                                                                                  " during playback", Code::unsupported)))
                               : Result<FramePtr>(fmt.status());
    if (out) HISTEQ_TRY(s.stamp(**out, t0, t1));
    av_frame_unref(in);
    return out;
  }
  if (HwDecoder::is_hw_frame(in)) {
    // NVDEC was given up after open()'s probe decoded this one on the GPU: bring it to the host.
    AvFramePtr sw(av_frame_alloc());
    if (!sw || av_hwframe_transfer_data(sw.get(), in, 0) < 0) {
      av_frame_unref(in);
      return s.fail("cannot copy a GPU frame to the host");
    }
    (void)av_frame_copy_props(sw.get(), in);
    av_frame_unref(in);
    av_frame_move_ref(in, sw.get());
  }
  auto out = pool.get();
  if (!out) {
    av_frame_unref(in);
    return out.status();
  }
  Frame& f = **out;
  HISTEQ_TRY(s.stamp(f, t0, t1));
  const Status cs = s.convert(in, f);
  av_frame_unref(in);
  HISTEQ_TRY(cs);
  f.timing.set(stage::convert, (now_ns() - t1) / 1e6);
  return std::move(out.value());
}

}  // namespace histeq::video
