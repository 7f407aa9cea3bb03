#include "core/video/hw_decode.h"

#include <algorithm>
#include <map>
#include <mutex>

#include "core/cuda/check.h"
#include "core/cuda/device.h"
#include "core/video/av_util.h"

extern "C" {
#include <libavutil/hwcontext.h>
#include <libavutil/hwcontext_cuda.h>
}

#if HISTEQ_HAVE_FFNVCODEC
// The video codec SDK's loader (FFmpeg's nv-codec-headers: libnvcuvid opened at run time, so
// nothing is linked). A library that cannot be loaded is "unknown", never a message.
#define FFNV_LOG_FUNC(logctx, msg, ...) ((void)(logctx))
#define FFNV_DEBUG_LOG_FUNC(logctx, msg, ...) ((void)(logctx))
#include <ffnvcodec/dynlink_loader.h>
#endif

namespace histeq::video {
namespace {

constexpr int kMaxHeldFrames = 12;

// 4:2:0 of 8 or 10 bits: what comes out of NVDEC as NV12/P010, the layouts the pipeline takes.
bool nvdec_layout(AVPixelFormat sw) {
  switch (sw) {
    case AV_PIX_FMT_YUV420P:
    case AV_PIX_FMT_YUVJ420P:
    case AV_PIX_FMT_YUV420P10:
    case AV_PIX_FMT_NV12:
    case AV_PIX_FMT_P010:
      return true;
    default:
      return false;
  }
}

// FFmpeg asks which output format to use (at the start and at every stream change). CUDA frames
// where NVDEC decodes into a layout we take; else the decoder's own software format, which makes
// FFmpeg decode in software (the source converts those frames; see FileSource).
AVPixelFormat pick_format(AVCodecContext* ctx, const AVPixelFormat* fmts) {
  const AVPixelFormat* first_sw = nullptr;
  bool cuda = false;
  for (const AVPixelFormat* p = fmts; *p != AV_PIX_FMT_NONE; ++p) {
    if (*p == AV_PIX_FMT_CUDA) cuda = true;
    const AVPixFmtDescriptor* d = av_pix_fmt_desc_get(*p);
    if (first_sw == nullptr && d != nullptr && !(d->flags & AV_PIX_FMT_FLAG_HWACCEL)) first_sw = p;
  }
  if (cuda && nvdec_layout(ctx->sw_pix_fmt)) return AV_PIX_FMT_CUDA;
  return first_sw != nullptr ? *first_sw : fmts[0];
}

int query_nvdec_engines(int device) {
#if HISTEQ_HAVE_FFNVCODEC
  CuvidFunctions* cv = nullptr;
  if (cuvid_load_functions(&cv, nullptr) < 0) return 0;
  int engines = 0;
  {
    // The caps are asked of the current context: the device's primary one, made current by the
    // runtime (cudaFree(0)) inside the scope.
    const cuda::DeviceScope scope(device);
    CUVIDDECODECAPS caps{};
    caps.eCodecType = cudaVideoCodec_H264;
    caps.eChromaFormat = cudaVideoChromaFormat_420;
    caps.nBitDepthMinus8 = 0;
    if (cudaFree(nullptr) == cudaSuccess && cv->cuvidGetDecoderCaps != nullptr &&
        cv->cuvidGetDecoderCaps(&caps) == CUDA_SUCCESS && caps.bIsSupported)
      engines = caps.nNumNVDECs;
    (void)cudaGetLastError();
  }
  cuvid_free_functions(&cv);
  return engines;
#else
  (void)device;
  return 0;
#endif
}

}  // namespace

int nvdec_engines(int device) noexcept {
  if (device < 0 || device >= cuda::device_count()) return 0;
  static std::mutex mu;
  static std::map<int, int> cache;
  std::lock_guard<std::mutex> lock(mu);
  if (auto it = cache.find(device); it != cache.end()) return it->second;
  return cache[device] = query_nvdec_engines(device);
}

const char* hwdec_name(HwDecode h) noexcept {
  switch (h) {
    case HwDecode::none: return "none";
    case HwDecode::nvdec: return "nvdec";
    default: return "auto";
  }
}

Result<HwDecode> parse_hwdec(const std::string& s) {
  if (s == "none" || s == "no") return HwDecode::none;
  if (s == "nvdec" || s == "cuda") return HwDecode::nvdec;
  if (s == "auto" || s == "yes") return HwDecode::auto_;
  return HISTEQ_ERROR(Code::invalid_argument, "--hwdec must be auto, nvdec or none, not '" + s + "'");
}

HwDecoder::~HwDecoder() {
  av_buffer_unref(&device_ctx_);
  if (stream_ != nullptr) (void)cudaStreamDestroy(stream_);
}

std::unique_ptr<HwDecoder> HwDecoder::attach(AVCodecContext* dec, const AVCodec* codec, HwDecode mode, int frames_held,
                                             int device, std::string& note) {
  if (mode == HwDecode::none) return nullptr;
  bool has_hwaccel = false;
  for (int i = 0;; ++i) {
    const AVCodecHWConfig* cfg = avcodec_get_hw_config(codec, i);
    if (cfg == nullptr) break;
    if (cfg->device_type == AV_HWDEVICE_TYPE_CUDA && (cfg->methods & AV_CODEC_HW_CONFIG_METHOD_HW_DEVICE_CTX)) has_hwaccel = true;
  }
  if (!has_hwaccel) {
    note = std::string("software decode: this FFmpeg has no NVDEC decoder for ") + codec->name;
    return nullptr;
  }
  if (!cuda::have_device()) {
    note = "software decode: no CUDA device for NVDEC";
    return nullptr;
  }
  if (!nvdec_layout(dec->pix_fmt) && dec->pix_fmt != AV_PIX_FMT_NONE) {
    const char* n = av_get_pix_fmt_name(dec->pix_fmt);
    note = std::string("software decode: NVDEC output is 4:2:0 8/10-bit, the stream is ") + (n ? n : "?");
    return nullptr;
  }
  if (device < 0) device = cuda::current_device();
  if (device < 0 || device >= cuda::device_count()) {
    note = "software decode: no CUDA device " + std::to_string(device) + " for NVDEC";
    return nullptr;
  }
  // The stream below, and anything the runtime makes for the decoder, on the pipeline's device.
  const cuda::DeviceScope scope(device);
  std::unique_ptr<HwDecoder> h(new HwDecoder());
  h->ordinal_ = device;
  const std::string ordinal = std::to_string(device);
  const int e = av_hwdevice_ctx_create(&h->device_ctx_, AV_HWDEVICE_TYPE_CUDA, ordinal.c_str(), nullptr, AV_CUDA_USE_PRIMARY_CONTEXT);
  if (e < 0) {
    note = "software decode: cannot open the CUDA device for NVDEC (" + detail::av_error(e) + ")";
    return nullptr;
  }
  if (cudaStreamCreateWithFlags(&h->stream_, cudaStreamNonBlocking) != cudaSuccess) {
    (void)cudaGetLastError();
    h->stream_ = nullptr;
    note = "software decode: cannot create a CUDA stream for NVDEC";
    return nullptr;
  }
  // The decoder's copies out of its surfaces run on our stream, so wrap() can wait for exactly them.
  auto* cuda_ctx = reinterpret_cast<AVHWDeviceContext*>(h->device_ctx_->data);
  static_cast<AVCUDADeviceContext*>(cuda_ctx->hwctx)->stream = static_cast<CUstream>(h->stream_);
  dec->hw_device_ctx = av_buffer_ref(h->device_ctx_);
  if (dec->hw_device_ctx == nullptr) {
    note = "software decode: out of memory";
    return nullptr;
  }
  dec->get_format = pick_format;
  // NVDEC decodes one picture at a time: frame threads would only add decode surfaces (one per
  // thread, on top of the stream's reference frames), and past 32 the decoder cannot be created.
  dec->thread_count = 1;
  // The pool must hold the frames the pipeline keeps while the decoder goes on (queues, frames in
  // flight); H.264/HEVC's 17 references + 2 leave 13 of NVDEC's 32 surfaces.
  dec->extra_hw_frames = std::min(frames_held, kMaxHeldFrames);
  h->device_ = cuda::device_label(device);  // with several GPUs, which one decodes
  return h;
}

bool HwDecoder::is_hw_frame(const AVFrame* f) noexcept { return f->format == AV_PIX_FMT_CUDA && f->hw_frames_ctx != nullptr; }

Result<FrameFormat> HwDecoder::format_of(const AVFrame* f) {
  if (!is_hw_frame(f)) return HISTEQ_ERROR(Code::invalid_argument, "not a GPU frame");
  const auto* frames = reinterpret_cast<const AVHWFramesContext*>(f->hw_frames_ctx->data);
  FrameFormat fmt;
  fmt.width = f->width;
  fmt.height = f->height;
  fmt.layout = PlaneLayout::semi_planar;
  if (frames->sw_format == AV_PIX_FMT_NV12) fmt.bit_depth = 8;
  else if (frames->sw_format == AV_PIX_FMT_P010) fmt.bit_depth = 10;
  else {
    const char* n = av_get_pix_fmt_name(frames->sw_format);
    return HISTEQ_ERROR(Code::unsupported, std::string("NVDEC gave ") + (n ? n : "?") + " frames (NV12 or P010 expected)");
  }
  return fmt;
}

Result<FramePtr> HwDecoder::wrap(const AVFrame* f, const FrameFormat& format) {
  HISTEQ_CUDA_TRY(cudaStreamSynchronize(stream_));
  AVFrame* ref = av_frame_clone(f);
  if (ref == nullptr) return HISTEQ_ERROR(Code::out_of_memory, "cannot reference a decoded frame");
  std::shared_ptr<AVFrame> owner(ref, [](AVFrame* p) { av_frame_free(&p); });
  PlaneRef planes[2];
  for (int i = 0; i < 2; ++i) {
    planes[i].data = ref->data[i];
    planes[i].width = format.plane_width(i);
    planes[i].height = format.plane_height(i);
    planes[i].pitch = static_cast<size_t>(ref->linesize[i]);
    planes[i].bytes_per_sample = format.bytes_per_sample();
    planes[i].bit_depth = format.storage_depth();
    planes[i].memory = MemoryKind::device;
  }
  return Frame::wrap(format, MemoryKind::device, planes, 2, std::shared_ptr<const void>(owner, ref));
}

}  // namespace histeq::video
