// VideoWriter: the export's output. Encodes the pipeline's frames with an FFmpeg encoder and muxes
// them, together with the input's audio and subtitle packets copied untouched, into a container
// chosen from the output name's extension. Which streams are written, and which audio is encoded
// again instead (a codec the container cannot hold, --audio-codec), is WriterOptions::streams'
// (stream_plan.h); the encoder's settings beyond crf/preset are WriterOptions::control.
//
// Kept from the input: timestamps (the video encoder works in the input stream's time base when it
// can), frame rate, sample aspect ratio, colour tags, stream and container metadata, dispositions
// and the video stream's side data (display matrix = rotation, HDR metadata, ...).
//
// The bytes go to `temp_path`; renaming it to the final name is the caller's job (export.h). A
// pipe (temp_path "pipe:1", standard output) takes a container that streams (check_pipe_container).
// Containers without timestamps (yuv4mpegpipe, rawvideo) get the video in frame-rate ticks, and a
// raw container (raw_container_codec) the video alone: the other streams are left out with a note.
// Thread-safety: write_copied() may run on one thread (the decode thread) while encode() runs on
// another (the sink); the muxer is guarded by a mutex.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "core/cuda/status.h"
#include "core/video/encode_options.h"
#include "core/video/file_source.h"
#include "core/video/frame.h"
#include "core/video/media_time.h"

struct AVPacket;

namespace histeq::video {

struct WriterOptions {
  std::string path;       // the final name: picks the container
  std::string temp_path;  // where the bytes are written: a file, or an FFmpeg URL ("pipe:1": standard output)
  std::string format;     // the container (an FFmpeg muxer name, -f; container_named()); "": from `path`'s extension
  std::string codec = "libx264";
  int crf = -1;           // -1: the encoder's default
  std::string preset;     // "": the encoder's default
  int threads = 0;        // encoder threads, 0: the encoder's choice
  // A trimmed export: the part of the input that is written, in media seconds (Frame::time_s).
  // Output timestamps then start at range.start_s (0 there, video and the other streams alike);
  // audio is cut to [start_s, end_s) to the sample by decoding and encoding it again (a copied
  // packet cannot be cut); subtitles are cut at their cues (one that began before start_s is
  // kept from 0 for what is left of it). Untrimmed: everything is copied and timestamps kept.
  TimeRange range;
  EncoderControl control;  // --bitrate, --encoder-opt, --gop, --tag (pix_fmt: see format_for_pix_fmt)
  StreamChoice streams;    // -map, -an, -sn, --audio-codec (stream_plan.h)
};

// The video encoder when none is named (-c left out): the input's own codec where this FFmpeg has
// an encoder for it and the container `path` names holds it (h264 -> libx264, hevc -> libx265,
// vp9 -> libvpx-vp9, vp8 -> libvpx); else libx264 where the container holds H.264; else the
// container's usual video encoder (webm: libvpx-vp9). A fallback from the input's codec is a note.
// `format`: the container by its muxer name where the name does not say it (-f); "": from `path`.
Result<std::string> default_encoder(const std::string& path, const std::string& input_codec, std::vector<std::string>& notes,
                                    const std::string& format = "");
// --encoder-opt against the options of `codec` (its context's and its own, as av_opt_find sees
// them): an unknown key or a value the option refuses is an error (invalid_argument) naming it.
Status check_encoder_options(const std::string& codec, const std::vector<std::pair<std::string, std::string>>& options);
// --pix-fmt: the layout `name` stands for, when `codec` takes it and histeq produces it (planar
// YUV 4:2:0, 4:2:2 or 4:4:4 of 8 or 10 bits, the input's size). Errors name the option and why.
Result<FrameFormat> format_for_pix_fmt(const std::string& codec, const std::string& name, const NativeVideo& native);

// The frame layout to feed `codec` for this input: the input's own layout when the encoder takes
// it; otherwise the nearest one it takes (10-bit -> 8-bit, 4:2:2 -> 4:2:0, ...). Odd sizes with
// subsampled chroma become 4:4:4 for encoders other than ffv1/rawvideo (H.264 cannot code half a
// chroma sample). Each change adds a line to `notes`.
Result<FrameFormat> choose_format(const std::string& codec, const NativeVideo& native, std::vector<std::string>& notes);
// Whether the encoder named `codec` takes frames of `format` as they are (odd sizes included).
bool encoder_takes(const std::string& codec, const FrameFormat& format);

// The container -f names: an FFmpeg muxer ("nut", "matroska", "mpegts", "yuv4mpegpipe", ...) or a
// file extension ("mkv"), as the muxer's name. Error (invalid_argument): "-f NAME: no such
// container in this FFmpeg (...)".
Result<std::string> container_named(const std::string& format);
// Whether the container `name` (container_named's) can be written to a pipe. Errors (unsupported,
// "<output>: ..."): one that goes back to write its index (mp4, mov, ...) or writes files of its own
// (image2, hls, ...); the message names containers that stream.
Status check_pipe_container(const std::string& name, const std::string& output);
// The encoder of a raw container, whose one video stream is uncompressed frames: "wrapped_avframe"
// for yuv4mpegpipe, "rawvideo" for rawvideo; "" for any other container.
std::string raw_container_codec(const std::string& name);

// What the written video takes from its input.
struct VideoInput {
  Rational time_base;                  // of Frame::pts
  Rational frame_rate;                 // nominal; invalid when unknown
  Rational sample_aspect{0, 1};        // 0/1: unknown (square)
  ColorTags color;
  const FileSource* copy_from = nullptr;  // the streams to copy and the metadata to keep; null: video only
  double origin_s = 0;                 // stream time of media time 0 (FileSource::time_origin_s())
};
VideoInput video_input_of(const FileSource& src);

class VideoWriter {
 public:
  // Sets up the encoder and the output streams and writes the container header.
  // Streams that are neither the video, audio nor subtitles, and streams the container cannot
  // hold, are left out with a line in `notes`.
  static Result<std::unique_ptr<VideoWriter>> open(const WriterOptions& opts, const VideoInput& input,
                                                   const FrameFormat& format, std::vector<std::string>& notes);
  ~VideoWriter();

  // Copies a packet of the input (FileSource's packet handler), or cuts it into the output
  // (a trimmed export's audio and subtitles); ignores streams not written.
  Status write_copied(AVPacket* pkt);
  // Encodes a host frame (its pts in the input's time base) and writes the packets that come out.
  // A frame of another layout of the same size (NV12/P010 from NVDEC) is converted first.
  Status encode(const Frame& frame);
  // Drains the encoders (video, and the audio of a trimmed export), writes the trailer and closes
  // the file.
  Status finish();

  int64_t frames_sent() const noexcept;
  int64_t video_packets() const noexcept;
  int64_t copied_packets() const noexcept;
  int copied_streams() const noexcept;  // copied or cut
  std::string description() const;  // "libx264 (crf 23, preset medium) yuv420p mp4, 2 streams copied"

 private:
  VideoWriter();
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace histeq::video
