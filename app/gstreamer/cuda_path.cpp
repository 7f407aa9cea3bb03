#include "cuda_path.h"

#if HISTEQ_GST_CUDA
#define GST_USE_UNSTABLE_API
#include <gst/cuda/gstcudacontext.h>
#include <gst/cuda/gstcudaloader.h>
#include <gst/cuda/gstcudamemory.h>
#include <gst/cuda/gstcudautils.h>
#endif

namespace histeq_gst {

#if HISTEQ_GST_CUDA

namespace {
const char* cu_error(CUresult r) {
  const char* text = nullptr;
  if (CuGetErrorString(r, &text) != CUDA_SUCCESS || !text) text = "unknown CUDA error";
  return text;
}

#if GST_CHECK_VERSION(1, 24, 0)
// GStreamer 1.24 gives CUDA memory a stream of its own (nvh264dec's, cudaupload's): work queued
// there follows the producer's without a wait, and the memory's flag tells the consumers that it
// is still in flight. (Written for 1.24's API; Debian 12 has 1.22, so this part is not built or
// tested here.)
void* buffer_stream(GstBuffer* buffer) {
  GstCudaStream* s = gst_cuda_memory_get_stream(GST_CUDA_MEMORY_CAST(gst_buffer_peek_memory(buffer, 0)));
  return s ? static_cast<void*>(gst_cuda_stream_get_handle(s)) : nullptr;
}
void mark_need_sync(GstBuffer* buffer) {
  for (guint i = 0; i < gst_buffer_n_memory(buffer); ++i) {
    GstMemory* m = gst_buffer_peek_memory(buffer, i);
    if (gst_is_cuda_memory(m)) GST_MINI_OBJECT_FLAG_SET(m, GST_CUDA_MEMORY_TRANSFER_NEED_SYNC);
  }
}
#else
// GStreamer 1.22: CUDA memory has no stream and no sync flag; the work goes on a stream of ours
// and finish() waits for it.
void* buffer_stream(GstBuffer*) { return nullptr; }
void mark_need_sync(GstBuffer*) {}
#endif

// The device ordinal of a GstCudaContext (its "cuda-device-id" property).
int device_of(GstObject* context) {
  guint id = 0;
  g_object_get(context, "cuda-device-id", &id, nullptr);
  return static_cast<int>(id);
}
}  // namespace

const char* cuda_caps() {
  return "video/x-raw(" GST_CAPS_FEATURE_MEMORY_CUDA_MEMORY "), "
         "format = (string) { GRAY8, I420, NV12, NV21, Y42B, Y444, I420_10LE, I422_10LE, Y444_10LE, P010_10LE }, "
         "width = (int) [ 1, max ], height = (int) [ 1, max ], framerate = (fraction) [ 0, max ]";
}

int cuda_map_flag() { return GST_MAP_CUDA; }

bool caps_are_cuda(const GstCaps* caps) {
  if (!caps || gst_caps_is_empty(caps) || gst_caps_is_any(caps)) return false;
  GstCapsFeatures* f = gst_caps_get_features(caps, 0);
  return f && gst_caps_features_contains(f, GST_CAPS_FEATURE_MEMORY_CUDA_MEMORY);
}

bool cuda_set_context(GstElement* element, GstContext* context, CudaContextSlot& slot) {
  auto** ctx = reinterpret_cast<GstCudaContext**>(&slot.context);
  return gst_cuda_handle_set_context(element, context, -1, ctx);
}

bool cuda_handle_query(GstElement* element, GstQuery* query, CudaContextSlot& slot) {
  if (GST_QUERY_TYPE(query) != GST_QUERY_CONTEXT || !slot.context) return false;
  return gst_cuda_handle_context_query(element, query, GST_CUDA_CONTEXT(slot.context));
}

bool cuda_ensure_context(GstElement* element, CudaContextSlot& slot, std::string& error) {
  if (!gst_cuda_load_library()) {
    error = "CUDA memory needs the CUDA driver (libcuda.so.1), which could not be loaded";
    return false;
  }
  auto** ctx = reinterpret_cast<GstCudaContext**>(&slot.context);
  if (gst_cuda_ensure_element_context(element, -1, ctx)) return true;
  error = "no CUDA context for the CUDA memory (no CUDA device?)";
  return false;
}

void cuda_context_clear(CudaContextSlot& slot) { gst_clear_object(&slot.context); }

bool CudaWork::holds_cuda(GstBuffer* buffer) {
  return gst_buffer_n_memory(buffer) > 0 && gst_is_cuda_memory(gst_buffer_peek_memory(buffer, 0));
}

bool CudaWork::same_context(GstBuffer* buffer) const {
  return !context_ || GST_OBJECT(GST_CUDA_MEMORY_CAST(gst_buffer_peek_memory(buffer, 0))->context) == context_;
}

bool CudaWork::push() {
  return context_ && gst_cuda_context_push(GST_CUDA_CONTEXT(context_));
}

void CudaWork::pop() { gst_cuda_context_pop(nullptr); }

bool CudaWork::enter(GstBuffer* buffer, std::string& error) {
  // The buffer's own context: its memory is only valid there (GStreamer 1.22's contexts are not
  // the device's primary context).
  GstObject* ctx = GST_OBJECT(GST_CUDA_MEMORY_CAST(gst_buffer_peek_memory(buffer, 0))->context);
  if (context_ != ctx) release();
  if (!context_) {
    context_ = GST_OBJECT(gst_object_ref(ctx));
    device_ = device_of(ctx);
  }
  if (!gst_cuda_context_push(GST_CUDA_CONTEXT(context_))) {
    error = "the buffer's CUDA context could not be made current";
    return false;
  }
  pushed_ = true;
  memory_stream_ = buffer_stream(buffer);
  if (!memory_stream_ && !stream_) {
    CUstream s = nullptr;
    const CUresult r = CuStreamCreate(&s, CU_STREAM_DEFAULT);
    if (r != CUDA_SUCCESS) {
      error = std::string("cannot create a CUDA stream: ") + cu_error(r);
      return false;
    }
    stream_ = s;
  }
  return true;
}

void CudaWork::leave() {
  if (pushed_) pop();
  pushed_ = false;
  memory_stream_ = nullptr;
}

bool CudaWork::finish(GstBuffer* buffer, std::string& error) {
  if (memory_stream_) {
    mark_need_sync(buffer);
    return true;
  }
  const CUresult r = CuStreamSynchronize(static_cast<CUstream>(stream_));
  if (r == CUDA_SUCCESS) return true;
  error = std::string("the CUDA work on the frame failed: ") + cu_error(r);
  return false;
}

void CudaWork::release() {
  if (stream_ && push()) {
    CuStreamDestroy(static_cast<CUstream>(stream_));
    pop();
  }
  stream_ = nullptr;
  gst_clear_object(&context_);
}

#else  // no GStreamer CUDA library: system memory only

const char* cuda_caps() { return ""; }
int cuda_map_flag() { return 0; }
bool caps_are_cuda(const GstCaps*) { return false; }
bool cuda_set_context(GstElement*, GstContext*, CudaContextSlot&) { return false; }
bool cuda_handle_query(GstElement*, GstQuery*, CudaContextSlot&) { return false; }
bool cuda_ensure_context(GstElement*, CudaContextSlot&, std::string& error) {
  error = "this histeq element was built without GStreamer's CUDA library";
  return false;
}
void cuda_context_clear(CudaContextSlot&) {}
bool CudaWork::holds_cuda(GstBuffer*) { return false; }
bool CudaWork::same_context(GstBuffer*) const { return true; }
bool CudaWork::push() { return false; }
void CudaWork::pop() {}
bool CudaWork::enter(GstBuffer*, std::string& error) {
  error = "this histeq element was built without GStreamer's CUDA library";
  return false;
}
void CudaWork::leave() {}
bool CudaWork::finish(GstBuffer*, std::string&) { return true; }
void CudaWork::release() {}

#endif

}  // namespace histeq_gst
