// Arrays of other Python libraries, seen without copying: DLPack (__dlpack__), the CUDA array
// interface (__cuda_array_interface__, v2/v3), numpy's __array_interface__; and the arrays the
// module hands back (the input's own library through its empty_like, else numpy on the host and
// histeq.DeviceArray on a GPU).
//
// Threads: called with the GIL held. Every view lives for one call of the module: it keeps what it
// points at alive through `owner` / `dlpack`, and it never outlives the Python objects it came from.
#pragma once

#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>

#include <cstdint>
#include <memory>
#include <string>

#include "convert_math.h"
#include "histeq/histeq.hpp"

namespace histeq::py {

namespace nb = nanobind;

// Errors of the caller's input: ValueError (shape, device, value) or TypeError (the kind of object).
[[noreturn]] void value_error(const std::string& message);
[[noreturn]] void type_error(const std::string& message);

// DLPack's managed tensor (dlpack.h's unversioned ABI, which every producer still exports): the
// one histeq.DeviceArray exports.
struct DLManagedTensor {
  nb::dlpack::dltensor dl_tensor;
  void* manager_ctx;
  void (*deleter)(DLManagedTensor* self);
};

struct ArrayView {
  void* data = nullptr;
  int ndim = 0;
  int64_t shape[4] = {0, 0, 0, 0};
  int64_t strides[4] = {0, 0, 0, 0};  // bytes; any sign, zero for broadcast axes
  int itemsize = 0;                    // bytes of a sample
  cvt::Sample sample = cvt::Sample::u8;  // uint8, uint16, float16/32/64: nothing else is accepted
  Memory memory = Memory::host;
  int device = 0;
  bool readonly = false;
  nb::ndarray<nb::ro> hold;  // the array as nanobind imported it (keeps a DLPack producer's memory alive)

  bool is_float() const { return sample != cvt::Sample::u8 && sample != cvt::Sample::u16; }
  std::string dtype_name() const;  // "uint8", "float32", ...
  std::string shape_text() const;  // "(1080, 1920, 3)"
};

// The stream of a call: the caller's `stream=` argument, else the current stream of the array's
// library (PyTorch, CuPy), else the legacy default stream (0).
struct CallStream {
  Stream stream = nullptr;
  bool given = false;  // the caller named it (stream=...)
};

// `stream=`: None, an int (a cudaStream_t's value; 0 = the legacy default stream), or an object with
// __cuda_stream__() (the CUDA stream protocol), .cuda_stream (torch.cuda.Stream) or .ptr (cupy).
CallStream parse_stream(nb::handle stream);
// When the caller named none: the current stream of `array`'s library on its device.
void default_stream(nb::handle array, CallStream& stream);

// The view of `array` (`what` names it in errors: "frame", "out[1]"), 1-D to 4-D. nanobind's
// nb::ndarray reads the shape, strides, dtype and device of numpy arrays and DLPack tensors; the
// stream ordering is ours: device arrays given through DLPack are made ready on `stream` by their
// producer (__dlpack__(stream=...)), those given through __cuda_array_interface__ with a stream of
// their own are waited for on `stream` (an event).
ArrayView view_array(nb::handle array, const char* what, const CallStream& stream);

// An empty array like `like`: its library's empty_like where it has one (numpy, torch, cupy), else a
// numpy array (host) or a histeq.DeviceArray (device) whose writes are queued on `stream`.
nb::object empty_like(nb::handle like, const ArrayView& view, Stream stream);
nb::object empty_like_device(const ArrayView& view, Stream written_on);

// numpy.ndarray of uint32 holding `counts` (copied).
nb::object numpy_counts(const uint32_t* counts, size_t n);

void bind_device_array(nb::module_& m);

}  // namespace histeq::py
