#include "arrays.h"

#include <cuda_runtime.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/string.h>

#include <cstring>
#include <unordered_map>

namespace histeq::py {

namespace {


constexpr int32_t kDLCPU = 1, kDLCUDA = 2, kDLCUDAHost = 3, kDLCUDAManaged = 13;

// What the module needs from an array's library, looked up once per Python type: the library's
// current CUDA stream, its empty_like, and (PyTorch) its capsule export without the stream dance of
// __dlpack__, used only when the work runs on torch's own current stream anyway.
struct Library {
  enum Kind { other, numpy, torch, cupy } kind = other;
  nb::object current_stream;  // torch: _cuda_getCurrentRawStream(index); cupy: get_current_stream_ptr()
  nb::object to_dlpack;       // torch._C._to_dlpack
  nb::object empty_like;
};

nb::object attr_or_none(nb::handle o, const char* name) {
  return nb::hasattr(o, name) ? nb::borrow(o.attr(name)) : nb::none();
}

Library lookup_library(nb::handle type) {
  Library lib;
  std::string module = nb::cast<std::string>(nb::str(type.attr("__module__")));
  std::string root = module.substr(0, module.find('.'));
  nb::object modules = nb::module_::import_("sys").attr("modules");
  if (!nb::cast<bool>(modules.attr("__contains__")(root))) return lib;
  nb::object mod = modules[root.c_str()];
  lib.empty_like = attr_or_none(mod, "empty_like");
  if (root == "numpy") lib.kind = Library::numpy;
  if (root == "torch") {
    lib.kind = Library::torch;
    nb::object c = attr_or_none(mod, "_C");
    if (!c.is_none()) {
      lib.current_stream = attr_or_none(c, "_cuda_getCurrentRawStream");
      lib.to_dlpack = attr_or_none(c, "_to_dlpack");
    }
  }
  if (root == "cupy") {
    lib.kind = Library::cupy;
    nb::object cuda = attr_or_none(mod, "cuda");
    nb::object stream = cuda.is_none() ? nb::none() : attr_or_none(cuda, "stream");
    if (!stream.is_none()) lib.current_stream = attr_or_none(stream, "get_current_stream_ptr");
    if ((!lib.current_stream.is_valid() || lib.current_stream.is_none()) && !cuda.is_none()) {
      nb::object get = attr_or_none(cuda, "get_current_stream");  // older CuPy: the stream object's .ptr
      if (!get.is_none()) lib.current_stream = nb::cpp_function([get]() -> nb::object { return get().attr("ptr"); });
    }
  }
  return lib;
}

const Library& library_of(nb::handle array) {
  // Types live as long as the process, and so does this cache: never destroyed, because its Python
  // objects must not be released by a C++ static destructor after the interpreter has finalized
  // (a segfault in PyObject_GC_Del at exit, seen on the H100 machine with torch and CuPy).
  static auto& cache = *new std::unordered_map<PyTypeObject*, Library>();
  PyTypeObject* t = Py_TYPE(array.ptr());
  auto it = cache.find(t);
  if (it != cache.end()) return it->second;
  Py_INCREF(t);
  return cache.emplace(t, lookup_library(nb::handle(reinterpret_cast<PyObject*>(t)))).first->second;
}

std::string kind_of(nb::handle o) { return nb::cast<std::string>(nb::str(nb::handle(reinterpret_cast<PyObject*>(Py_TYPE(o.ptr()))).attr("__name__"))); }

const char* const kDtypes = "uint8, uint16, float16, float32 or float64";

void set_sample(ArrayView& v, int code, int bits, int lanes, const char* what, const std::string& spelled) {
  const bool uint = code == int(nb::dlpack::dtype_code::UInt), real = code == int(nb::dlpack::dtype_code::Float);
  if (lanes == 1 && uint && bits == 8) v.sample = cvt::Sample::u8;
  else if (lanes == 1 && uint && bits == 16) v.sample = cvt::Sample::u16;
  else if (lanes == 1 && real && bits == 16) v.sample = cvt::Sample::f16;
  else if (lanes == 1 && real && bits == 32) v.sample = cvt::Sample::f32;
  else if (lanes == 1 && real && bits == 64) v.sample = cvt::Sample::f64;
  else type_error(std::string(what) + ": the samples must be " + kDtypes + ", not " + spelled);
  v.itemsize = bits / 8;
}

void set_shape(ArrayView& v, int ndim, const char* what) {
  if (ndim < 1 || ndim > 4)
    value_error(std::string(what) + ": expected an image (2-D), a colour image (3-D) or a batch (3-D or 4-D), got " +
                std::to_string(ndim) + "-D");
  v.ndim = ndim;
}

// C-order strides where the producer gave none.
void compact_strides(ArrayView& v) {
  int64_t s = v.itemsize;
  for (int i = v.ndim - 1; i >= 0; --i) {
    v.strides[i] = s;
    s *= v.shape[i];
  }
}

// What nanobind imported (a numpy array, a DLPack capsule or producer): shape, strides, dtype and
// device from nb::ndarray.
ArrayView from_ndarray(nb::ndarray<nb::ro> a, const char* what) {
  ArrayView v;
  const nb::dlpack::dtype t = a.dtype();
  static const char* const kinds[] = {"int", "uint", "float", "opaque", "bfloat", "complex", "bool"};
  const std::string kind = t.code < 7 ? kinds[t.code] : "dtype code " + std::to_string(t.code) + " of ";
  set_sample(v, t.code, t.bits, t.lanes, what, t.code == 6 ? std::string("bool") : kind + std::to_string(t.bits));
  set_shape(v, int(a.ndim()), what);
  for (int i = 0; i < v.ndim; ++i) {
    v.shape[i] = int64_t(a.shape(size_t(i)));
    v.strides[i] = a.stride(size_t(i)) * v.itemsize;  // nanobind's strides are in samples
  }
  v.data = const_cast<void*>(a.data());
  const int32_t type = a.device_type();
  if (type == kDLCPU || type == kDLCUDAHost) {
    v.memory = Memory::host;
  } else if (type == kDLCUDA || type == kDLCUDAManaged) {
    v.memory = Memory::device;
    v.device = a.device_id();
  } else {
    value_error(std::string(what) + ": arrays on DLPack device type " + std::to_string(type) +
                " are not supported (CPU and CUDA only)");
  }
  v.hold = std::move(a);
  return v;
}

ArrayView import_ndarray(nb::handle source, const char* what) {
  nb::ndarray<nb::ro> a;
  try {
    a = nb::cast<nb::ndarray<nb::ro>>(source, false);
  } catch (const nb::cast_error&) {
    type_error(std::string(what) + ": could not read the array (" + kind_of(source) + ") through DLPack or the buffer protocol");
  }
  return from_ndarray(std::move(a), what);
}

ArrayView from_dlpack_capsule(nb::handle capsule, const char* what) {
  if (!PyCapsule_IsValid(capsule.ptr(), "dltensor") && !PyCapsule_IsValid(capsule.ptr(), "dltensor_versioned"))
    type_error(std::string(what) + ": __dlpack__ did not return a DLPack capsule");
  return import_ndarray(capsule, what);
}

// DLPack's spelling of a stream: 1 is the legacy default stream (0 is reserved).
nb::object dlpack_stream(Stream s) {
  return nb::int_(s == nullptr ? intptr_t(1) : reinterpret_cast<intptr_t>(s));
}

ArrayView via_dlpack(nb::handle array, const char* what, const CallStream& stream) {
  const Library& lib = library_of(array);
  // PyTorch on its own current stream: nothing to order, so skip __dlpack__'s Python-level checks.
  // (Only when the call's stream is torch's current one, which default_stream found.)
  bool torch_stream = lib.current_stream.is_valid() && !lib.current_stream.is_none();
  if (lib.kind == Library::torch && !stream.given && torch_stream && lib.to_dlpack.is_valid() && !lib.to_dlpack.is_none() &&
      nb::cast<bool>(array.attr("is_cuda")) && !nb::cast<bool>(array.attr("requires_grad"))) {
    nb::object capsule;
    try {
      capsule = lib.to_dlpack(array);
    } catch (nb::python_error&) {
      // A PyTorch whose private export differs: the public protocol below.
    }
    if (capsule.is_valid()) return from_dlpack_capsule(capsule, what);
  }
  nb::object device = array.attr("__dlpack_device__")();
  int32_t type = nb::cast<int32_t>(device[0]);
  if (type == kDLCUDA || type == kDLCUDAManaged)
    return from_dlpack_capsule(array.attr("__dlpack__")(nb::arg("stream") = dlpack_stream(stream.stream)), what);
  return from_dlpack_capsule(array.attr("__dlpack__")(), what);
}

// The typestr of the array interfaces: "|u1", "<u2", "<f4".
void typestr_dtype(ArrayView& v, nb::handle typestr, const char* what) {
  std::string t = nb::cast<std::string>(typestr);
  const bool little = !t.empty() && (t[0] == '<' || t[0] == '|' || t[0] == '=');
  const int bytes = t.size() >= 3 ? std::atoi(t.c_str() + 2) : 0;
  const int code = !little || t.size() < 3 ? -1 : t[1] == 'u' ? int(nb::dlpack::dtype_code::UInt)
                   : t[1] == 'f' ? int(nb::dlpack::dtype_code::Float) : -1;
  set_sample(v, code, bytes * 8, 1, what, "'" + t + "'");
}

void interface_geometry(ArrayView& v, nb::dict d, const char* what) {
  typestr_dtype(v, d["typestr"], what);
  nb::tuple shape = nb::cast<nb::tuple>(d["shape"]);
  set_shape(v, int(shape.size()), what);
  for (int i = 0; i < v.ndim; ++i) v.shape[i] = nb::cast<int64_t>(shape[i]);
  nb::object strides = d.contains("strides") ? nb::borrow(d["strides"]) : nb::none();
  if (strides.is_none()) {
    compact_strides(v);
  } else {
    for (int i = 0; i < v.ndim; ++i) v.strides[i] = nb::cast<int64_t>(strides[i]);
  }
  nb::tuple data = nb::cast<nb::tuple>(d["data"]);
  v.data = reinterpret_cast<void*>(nb::cast<uintptr_t>(data[0]));
  v.readonly = nb::cast<bool>(data[1]);
}

Stream cai_stream(nb::handle s) {
  intptr_t v = nb::cast<intptr_t>(s);
  if (v == 1) return nullptr;  // the legacy default stream
  if (v == 2) return cudaStreamPerThread;
  return reinterpret_cast<Stream>(v);
}

// __cuda_array_interface__ v3: the producer's stream (if any) must be done with the array before
// our stream uses it: an event between the two, as the protocol asks of a consumer.
ArrayView via_cai(nb::handle array, const char* what, const CallStream& stream) {
  nb::dict d = nb::cast<nb::dict>(array.attr("__cuda_array_interface__"));
  ArrayView v;
  interface_geometry(v, d, what);
  v.memory = Memory::device;
  cudaPointerAttributes attr{};
  if (v.data && cudaPointerGetAttributes(&attr, v.data) == cudaSuccess) v.device = attr.device;
  cudaGetLastError();  // a pointer the runtime does not know leaves an error behind
  if (d.contains("stream") && !d["stream"].is_none()) {
    Stream producer = cai_stream(d["stream"]);
    if (producer != stream.stream) {
      cudaEvent_t ev;
      if (cudaEventCreateWithFlags(&ev, cudaEventDisableTiming) != cudaSuccess ||
          cudaEventRecord(ev, reinterpret_cast<cudaStream_t>(producer)) != cudaSuccess ||
          cudaStreamWaitEvent(reinterpret_cast<cudaStream_t>(stream.stream), ev, 0) != cudaSuccess) {
        cudaGetLastError();
        value_error(std::string(what) + ": could not order the array's stream before the call's stream");
      }
      cudaEventDestroy(ev);
    }
  }
  return v;
}

ArrayView via_numpy(nb::handle array, const char* what) {
  ArrayView v = import_ndarray(array, what);
  v.readonly = !nb::cast<bool>(array.attr("flags").attr("writeable"));
  return v;
}

ArrayView via_array_interface(nb::handle array, const char* what) {
  ArrayView v;
  interface_geometry(v, nb::cast<nb::dict>(array.attr("__array_interface__")), what);
  v.memory = Memory::host;
  return v;
}

}  // namespace

void value_error(const std::string& message) { throw nb::value_error(message.c_str()); }
void type_error(const std::string& message) { throw nb::type_error(message.c_str()); }

CallStream parse_stream(nb::handle stream) {
  CallStream s;
  if (stream.is_none()) return s;
  s.given = true;
  nb::object handle;
  if (PyLong_Check(stream.ptr())) {
    handle = nb::borrow(stream);
  } else if (nb::hasattr(stream, "__cuda_stream__")) {
    handle = nb::borrow(nb::cast<nb::tuple>(stream.attr("__cuda_stream__")())[1]);
  } else if (nb::hasattr(stream, "cuda_stream")) {
    handle = stream.attr("cuda_stream");
  } else if (nb::hasattr(stream, "ptr")) {
    handle = stream.attr("ptr");
  } else {
    type_error("stream: expected None, an int (a cudaStream_t) or a stream object (torch, cupy, __cuda_stream__), got " +
               kind_of(stream));
  }
  s.stream = reinterpret_cast<Stream>(nb::cast<uintptr_t>(handle));
  return s;
}

void default_stream(nb::handle array, CallStream& stream) {
  if (stream.given) return;
  const Library& lib = library_of(array);
  if (!lib.current_stream.is_valid() || lib.current_stream.is_none()) return;
  if (lib.kind == Library::torch) {
    if (!nb::cast<bool>(array.attr("is_cuda"))) return;
    int index = nb::cast<int>(array.attr("get_device")());
    stream.stream = reinterpret_cast<Stream>(nb::cast<uintptr_t>(lib.current_stream(index)));
  } else if (lib.kind == Library::cupy) {
    stream.stream = reinterpret_cast<Stream>(nb::cast<uintptr_t>(lib.current_stream()));
  }
}

ArrayView view_array(nb::handle array, const char* what, const CallStream& stream) {
  if (library_of(array).kind == Library::numpy && nb::hasattr(array, "__array_interface__"))
    return via_numpy(array, what);  // any numpy array, read-only and broadcast ones included
  if (nb::hasattr(array, "__dlpack__")) return via_dlpack(array, what, stream);
  if (nb::hasattr(array, "__cuda_array_interface__")) return via_cai(array, what, stream);
  if (nb::hasattr(array, "__array_interface__")) return via_array_interface(array, what);
  type_error(std::string(what) + ": expected an array (numpy, or any with __dlpack__ or __cuda_array_interface__), got " +
             kind_of(array));
}

std::string ArrayView::dtype_name() const { return cvt::sample_name(sample); }

std::string ArrayView::shape_text() const {
  std::string s = "(";
  for (int i = 0; i < ndim; ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + (ndim == 1 ? ",)" : ")");
}

nb::object empty_like(nb::handle like, const ArrayView& v, Stream stream) {
  const Library& lib = library_of(like);
  if (lib.empty_like.is_valid() && !lib.empty_like.is_none()) {
    try {
      return lib.empty_like(like);
    } catch (nb::python_error&) {
      // A library whose empty_like refuses this array (or has another meaning): ours below.
    }
  }
  if (v.memory == Memory::device) return empty_like_device(v, stream);
  nb::list shape;
  for (int i = 0; i < v.ndim; ++i) shape.append(v.shape[i]);
  return nb::module_::import_("numpy").attr("empty")(nb::tuple(shape), v.dtype_name().c_str());
}

nb::object numpy_counts(const uint32_t* counts, size_t n) {
  auto* copy = new uint32_t[n];
  std::memcpy(copy, counts, n * sizeof(uint32_t));
  nb::capsule owner(copy, [](void* p) noexcept { delete[] static_cast<uint32_t*>(p); });
  return nb::cast(nb::ndarray<nb::numpy, uint32_t, nb::ndim<1>>(copy, {n}, owner));
}

}  // namespace histeq::py
