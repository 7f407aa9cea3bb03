// The histeq element's CUDA-memory path (memory:CUDAMemory of GStreamer's CUDA library, as
// nvh264dec outputs): the frames stay on the GPU. Without the library (HISTEQ_GST_CUDA 0) the
// functions report that no buffer is CUDA memory and nothing is advertised.
//
// Threads: a CudaWork belongs to the element's streaming thread; the context functions may be
// called from any thread under the element's object lock (they only touch `context`).
#pragma once

#include <gst/gst.h>
#include <gst/video/video.h>

#include <string>

namespace histeq_gst {

// The caps the element takes on CUDA memory ("" without GStreamer's CUDA library).
const char* cuda_caps();

// The map flag that gives device pointers (GST_MAP_CUDA; 0 without the library).
int cuda_map_flag();

// Whether the caps name memory:CUDAMemory.
bool caps_are_cuda(const GstCaps* caps);

// The element's shared GstCudaContext (a GstCudaContext*, as nvcodec elements share theirs).
// Owned by the element: release with cuda_context_clear.
struct CudaContextSlot {
  GstObject* context = nullptr;
};
bool cuda_set_context(GstElement* element, GstContext* context, CudaContextSlot& slot);
bool cuda_handle_query(GstElement* element, GstQuery* query, CudaContextSlot& slot);
// Makes sure `slot` holds a context (from a neighbour, the application, or a new one); false
// with `error` set when there is no CUDA device.
bool cuda_ensure_context(GstElement* element, CudaContextSlot& slot, std::string& error);
void cuda_context_clear(CudaContextSlot& slot);

// The streaming thread's CUDA state: the context the equalizer lives in and a stream of it.
class CudaWork {
 public:
  CudaWork() = default;
  CudaWork(const CudaWork&) = delete;
  CudaWork& operator=(const CudaWork&) = delete;
  ~CudaWork() { release(); }

  // Whether `buffer` is CUDA memory.
  static bool holds_cuda(GstBuffer* buffer);
  // The context of `buffer`'s memory is made current on this thread (until leave()), and its
  // stream created on first use. False with `error` set when it cannot be.
  bool enter(GstBuffer* buffer, std::string& error);
  void leave();
  // Whether `buffer` (CUDA memory) lives in the context of the last enter(), or none was entered
  // yet; if not, the equalizer, made in the old context, must be dropped and release() called
  // before enter().
  bool same_context(GstBuffer* buffer) const;
  int device() const { return device_; }
  // The CUstream (= cudaStream_t) the entered buffer's work goes on: its memory's own stream where
  // it has one (GStreamer 1.24 and later: GstCudaStream), else a stream of ours.
  void* stream() const { return memory_stream_ ? memory_stream_ : stream_; }
  // The frame's work is queued: on the memory's own stream, the memory is marked as needing a sync
  // (GST_CUDA_MEMORY_TRANSFER_NEED_SYNC), which stream-aware neighbours wait on or order after,
  // and nothing waits here; on ours, waits for it (GStreamer 1.22 has neither the memory's stream
  // nor the flag: downstream elements do not know our stream, so the frame must be complete when
  // it is pushed). False with `error` on failure.
  bool finish(GstBuffer* buffer, std::string& error);
  // Runs `fn` with the equalizer's context current (to destroy what was made in it); `fn` alone
  // when there is none.
  template <class F>
  void with_context(F&& fn) {
    const bool pushed = push();
    fn();
    if (pushed) pop();
  }
  // Destroys the stream (with the context current) and drops the context.
  void release();

 private:
  bool push();
  void pop();

  GstObject* context_ = nullptr;  // a GstCudaContext*, referenced
  void* stream_ = nullptr;         // ours, made on first use
  void* memory_stream_ = nullptr;  // the entered buffer's own (1.24 and later), or null
  int device_ = 0;
  bool pushed_ = false;
};

}  // namespace histeq_gst
