// Hardware decoding with NVDEC through FFmpeg's CUDA hwaccel, for FileSource (beside it, not in
// it). Frames stay on the GPU: the decoder writes NV12 (8-bit 4:2:0) or P010 (10-bit 4:2:0, values
// in the high bits) into device memory of FFmpeg's hardware frame pool, and FileSource hands them
// out as device Frames (Frame::wrap) that the equalizer works on in place, with no upload.
//
// The CUDA device context is the primary context (AV_CUDA_USE_PRIMARY_CONTEXT) of the pipeline's
// device, the one the CUDA runtime uses there, so the equalizer and the display use the decoder's
// pointers as they are. The device is named, never implied: FFmpeg's CUDA device defaults to
// ordinal 0 whatever the calling thread's current device, and a pipeline on device 1 reading
// device 0's surfaces faults (cudaErrorIllegalAddress).
// The decoder's copies run on a stream of our own; a frame is handed out once they are complete.
//
// What NVDEC takes: H.264, HEVC, VP9, AV1, MPEG-2, MPEG-4 when the FFmpeg build has the hwaccel
// and the GPU has the engine, for 4:2:0 content of 8 or 10 bits (4:2:2/4:4:4 and other depths
// decode in software). Whatever NVDEC refuses (no device, no engine, a profile, a size) falls back
// to software decoding; the reason is said in one line (HwDecoder::note).
//
// Thread: the source's (one decode thread). FFmpeg's own threads call the get_format callback.
#pragma once

#include <cuda_runtime_api.h>

#include <memory>
#include <string>

#include "core/cuda/status.h"
#include "core/video/frame.h"

struct AVCodecContext;
struct AVCodec;
struct AVFrame;
struct AVBufferRef;

namespace histeq::video {

enum class HwDecode {
  none,   // software decoding
  nvdec,  // NVDEC; falls back to software with a note where it cannot decode this stream
  auto_,  // NVDEC when there is a CUDA device and the codec has an NVDEC hwaccel, else software
};

// "none", "nvdec", "auto".
const char* hwdec_name(HwDecode h) noexcept;
// Parses --hwdec. Errors: invalid_argument naming the choices.
Result<HwDecode> parse_hwdec(const std::string& s);

// How many NVDEC engines `device` has (nNumNVDECs of the video codec SDK's decoder caps, for
// 8-bit 4:2:0 H.264): one decode session keeps about one engine busy, so this is how many sessions
// a GPU's decoding scales to. 0 when unknown (no driver, no NVDEC library, an FFmpeg build without
// NVDEC). Asked once per device, then cached; any thread.
int nvdec_engines(int device) noexcept;

class HwDecoder {
 public:
  ~HwDecoder();

  // Prepares `dec` (not yet opened) for NVDEC on CUDA device `device` (-1: the calling thread's
  // current device): its primary context, a get_format callback that picks
  // CUDA frames for 4:2:0 8/10-bit content, one decode thread, spare pool frames for
  // `frames_held` frames held downstream (at most 12: NVDEC has 32 surfaces in all). Returns null (with `note` saying why) when NVDEC cannot be used for this codec or
  // machine; then the caller decodes in software.
  static std::unique_ptr<HwDecoder> attach(AVCodecContext* dec, const AVCodec* codec, HwDecode mode, int frames_held,
                                           int device, std::string& note);

  // Whether `f` (a decoded frame) is on the GPU.
  static bool is_hw_frame(const AVFrame* f) noexcept;
  // The layout of a decoded GPU frame: NV12 or P010, or an error for others.
  static Result<FrameFormat> format_of(const AVFrame* f);
  // A device Frame over a decoded GPU frame (it takes a reference; `f` may be unreferenced after).
  // Waits for the decoder's copies into the frame first.
  Result<FramePtr> wrap(const AVFrame* f, const FrameFormat& format);

  const std::string& device_name() const noexcept { return device_; }
  int device() const noexcept { return ordinal_; }

 private:
  HwDecoder() = default;
  AVBufferRef* device_ctx_ = nullptr;
  cudaStream_t stream_ = nullptr;
  std::string device_;
  int ordinal_ = -1;
};

}  // namespace histeq::video
