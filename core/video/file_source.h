// FileSource: a video file, a V4L2 webcam, a network stream or standard input through FFmpeg. Demuxes and decodes (FFmpeg's own
// decoder threads), then converts each frame into the pipeline's planar YUV layout: 8-bit 4:2:0 and
// other supported layouts are copied as they are; anything else goes through swscale.
//
// Live inputs (webcam, network, and standard input or a file with FileSourceOptions::live) cannot
// seek and run at their own pace: the pipeline drops frames rather than fall behind. Standard input
// ("-") is otherwise a file read to its end: every frame, at the reader's pace. Their frames carry a capture time (FrameTiming::capture_ns) for
// the glass-to-glass latency: the stream's own timestamps when they are wall-clock times (cameras,
// producers that stamp capture times; MPEG-TS's 33-bit wrap is undone), else the arrival of the
// first frame plus the stream's time since it.
//
// With hardware decoding the decoder's first frame is decoded by open() (so that info().format says
// what comes out: NV12/P010 on the device, or the software layout when NVDEC refused the stream)
// and handed out by the first next().
//
// Damaged input is decoded past: packets the demuxer flags or cannot read and packets the decoder
// rejects are skipped and counted; frames decoded with concealed errors are kept and counted.
// Errors are Status values whose message starts with the path: "clip.mp4: no video stream".
#pragma once

#include <functional>
#include <memory>
#include <string>

#include "core/video/hw_decode.h"
#include "core/video/source.h"

struct AVFormatContext;
struct AVPacket;

namespace histeq::video {

struct FileSourceOptions {
  bool webcam = false;      // `path` is a V4L2 device opened through libavdevice
  int decoder_threads = 0;  // 0: FFmpeg's choice (as many as cores)
  // NVDEC (hw_decode.h): frames come out on the GPU (NV12/P010 device frames) when the codec, the
  // stream and the machine allow it; otherwise software decoding, said in SourceInfo::decode_note.
  HwDecode hwdec = HwDecode::none;
  // NVDEC: the CUDA device that decodes, the pipeline's (-1: the opening thread's current device).
  int cuda_device = -1;
  int frames_held = 12;     // NVDEC: frames the pipeline may hold at once (the decoder's pool grows by this; <= 12)
  // Read `path` as a live stream (--live): standard input ("-") or a file (a FIFO) that a producer
  // fills in real time. Webcams and network URLs are live whatever this says.
  bool live = false;
  // Live inputs: a stream that sends nothing for this long has stopped; the input then ends (next() gives nullptr) and end_note() says why.
  double live_timeout_s = 5.0;
  // A seek positions the demuxer at the video key frame this many seconds before its target (the
  // frames up to the target are still decoded and skipped), so that packets of the other streams
  // that belong at the target but lie before its key frame in the file are read too: a trimmed
  // export cuts its audio from them.
  double seek_preroll_s = 0;
};

// Whether `path` names a network stream (any FFmpeg URL: udp://, rtp://, rtsp://, srt://, tcp://,
// http(s)://, ...), rather than a file or standard input ("-").
bool is_stream_url(const std::string& path);

// The video stream as the decoder gives it.
struct NativeVideo {
  int width = 0, height = 0;
  int av_pix_fmt = -1;
  std::string pix_fmt_name;  // "yuv420p"
  std::string codec_name;    // "h264"
  ColorTags color;
};

class FileSource final : public Source {
 public:
  static Result<std::unique_ptr<FileSource>> open(const std::string& path, const FileSourceOptions& opts = {});
  ~FileSource() override;

  const SourceInfo& info() const override;
  Result<FramePtr> next(FramePool& pool) override;
  SourceCounters counters() const override;  // any thread
  void interrupt() override;
  std::string end_note() const override;
  bool can_seek() const override;  // a file on seekable storage (not a webcam, not a pipe)
  // av_seek_frame to the key frame at or before the time (less the preroll), a decoder flush, then
  // the frames before the time are decoded and skipped: the next frame is the first one whose
  // timestamp is at or after the time, to the tick (what ffmpeg's -ss gives when it re-encodes).
  Status seek(double time_s) override;
  // The stream time (seconds, the container's clock) of media time 0 (Frame::time_s = 0): the first
  // frame's timestamp once one was decoded or a seek fixed it, else the video stream's start. Other
  // streams of the file (AudioSource) use it to share the video's time axis. Any thread.
  double time_origin_s() const;
  // After the video stopped early (a trimmed export's end): reads on, handing the other streams'
  // packets to the packet handler and skipping video packets, until every audio stream that the
  // handler takes has given a packet at or after media time `until_s`, the packets get 10 s past
  // it (no file interleaves further apart) or the input ends. The audio that belongs before the
  // end but lies behind the last video frame in the file is then not lost. On the next() thread.
  Status read_other_streams(double until_s);

  // Once the input ended (next() gave nullptr): why its data stops short of what the container
  // holds, when the demuxer met the end inside a packet or element ("the data ends inside a
  // packet", "the Matroska data ends inside an element", "the data ends inside a transport stream
  // packet": a file cut short, or a producer that died); "" otherwise. Live inputs: "". On the
  // next() thread, or after it joined.
  std::string truncation() const;
  // The media time (seconds, as Frame::time_s) at which the last frame handed out ends: its time
  // plus its duration. 0 before the first. On the next() thread, or after it joined.
  double time_reached_s() const;

  const NativeVideo& native() const;
  // The layout frames are converted to; default natural_format(native). Only before the first next().
  Status set_output_format(const FrameFormat& format);
  // Packets of the other streams go to `handler` on the thread that calls next(), in file order;
  // it may take the packet's data (av_packet_move_ref). Without a handler they are not even read.
  // An error from the handler ends next() with that error.
  void set_packet_handler(std::function<Status(AVPacket*)> handler);
  // For the exporter: the demuxer (streams, metadata) and the index of the decoded stream.
  AVFormatContext* format_context() const;
  int video_stream_index() const;

 private:
  FileSource();
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace histeq::video
