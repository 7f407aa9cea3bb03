// Which of the input's streams an export writes besides the equalized video, and how (core/video
// internals; includes FFmpeg): the user's StreamChoice (encode_options.h) against what the output
// container can hold and what this FFmpeg can encode.
//
//   audio     copied where the container holds its codec (or --audio-codec copy); else encoded
//             again: with --audio-codec's encoder, or the container's usual audio codec (a note);
//             a trimmed export always encodes it again (a copied packet cannot be cut).
//   subtitle  copied where the container holds it.
//   other     (data, attachments, a second video) left out with a note.
// A stream the user selected by name (-map 0:a, 0:2, ..., or --audio-codec) that can be neither
// copied nor encoded is an error, as is a map that matches nothing; one only selected by default
// is left out with a note saying why. Nothing is left out without a note.
#pragma once

#include <string>
#include <vector>

#include "core/video/av_util.h"
#include "core/video/encode_options.h"

namespace histeq::video::detail {

enum class StreamAction { leave_out, copy, encode };

struct StreamDecision {
  StreamAction action = StreamAction::leave_out;
  const AVCodec* encoder = nullptr;  // encode: the encoder; null: AudioCut's choice (a trimmed export)
  std::string reason;                // encode: why ("the webm container cannot hold aac"); "" when cut
};

// One decision per stream of `ic`; the equalized stream `video` is left_out here (the writer
// encodes it). `output` names the output in messages; `trimmed`: audio is cut (so encoded).
// Errors (invalid_argument / unsupported), one line each, before anything is written.
Result<std::vector<StreamDecision>> plan_streams(const AVFormatContext* ic, int video, const AVOutputFormat* of,
                                                 const StreamChoice& choice, bool trimmed, const std::string& output,
                                                 std::vector<std::string>& notes);

// Whether the container holds `id`: its muxer says so, or it does not know and its usual codec of
// that kind (video, audio, subtitles) is not none (mpegts holds audio, yuv4mpegpipe none).
bool container_holds(const AVOutputFormat* of, AVCodecID id);
// The first encoder of `id` that is not experimental and that the container holds (null: none).
const AVCodec* usable_encoder(AVCodecID id, const AVOutputFormat* of);

}  // namespace histeq::video::detail
