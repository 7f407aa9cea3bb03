#include "core/video/frame_count.h"

#include "core/video/av_util.h"

extern "C" {
#include <libavformat/avformat.h>
}

namespace histeq::video {

Result<int64_t> count_video_packets(const std::string& path) {
  AVFormatContext* fmt = nullptr;
  if (int e = avformat_open_input(&fmt, path.c_str(), nullptr, nullptr); e < 0)
    return HISTEQ_ERROR(Code::io_error, path + ": cannot open: " + detail::av_error(e));
  struct Close {
    AVFormatContext** f;
    ~Close() { avformat_close_input(f); }
  } close{&fmt};
  // No avformat_find_stream_info: the container's header names the streams of what histeq wrote,
  // and reading the packets once is all the count needs.
  int vindex = -1;
  for (unsigned i = 0; i < fmt->nb_streams; ++i) {
    if (fmt->streams[i]->codecpar->codec_type == AVMEDIA_TYPE_VIDEO && vindex < 0) vindex = static_cast<int>(i);
    else fmt->streams[i]->discard = AVDISCARD_ALL;
  }
  if (vindex < 0) return HISTEQ_ERROR(Code::invalid_argument, path + ": no video stream");
  AVPacket* pkt = av_packet_alloc();
  if (pkt == nullptr) return HISTEQ_ERROR(Code::out_of_memory, "out of memory");
  int64_t n = 0;
  int e = 0;
  while ((e = av_read_frame(fmt, pkt)) >= 0) {
    if (pkt->stream_index == vindex) ++n;
    av_packet_unref(pkt);
  }
  av_packet_free(&pkt);
  if (e != AVERROR_EOF) return HISTEQ_ERROR(Code::io_error, path + ": cannot read: " + detail::av_error(e));
  return n;
}

}  // namespace histeq::video
