// histeq.DeviceArray: the result of a device frame whose library has no empty_like (an array that
// only speaks DLPack or __cuda_array_interface__). It owns CUDA memory and exports it both ways.
#include <cuda_runtime.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include "arrays.h"

namespace histeq::py {

namespace {


class DeviceArray {
 public:
  DeviceArray(std::vector<int64_t> shape, cvt::Sample sample, int itemsize, int device)
      : shape_(std::move(shape)), sample_(sample), itemsize_(itemsize), device_(device) {
    size_t bytes = itemsize_;
    for (int64_t s : shape_) bytes *= size_t(s);
    int previous = 0;
    cudaGetDevice(&previous);
    cudaError_t e = cudaSetDevice(device_);
    if (e == cudaSuccess) e = cudaMalloc(&data_, bytes == 0 ? 1 : bytes);
    cudaSetDevice(previous);
    if (e != cudaSuccess) {
      cudaGetLastError();
      throw nb::value_error(("histeq.DeviceArray: cudaMalloc of " + std::to_string(bytes) + " bytes failed: " +
                             cudaGetErrorString(e)).c_str());
    }
  }
  ~DeviceArray() { cudaFree(data_); }
  DeviceArray(const DeviceArray&) = delete;
  DeviceArray& operator=(const DeviceArray&) = delete;

  void* data() const { return data_; }
  const std::vector<int64_t>& shape() const { return shape_; }
  int device() const { return device_; }
  std::string typestr() const {
    return itemsize_ == 1 ? "|u1" : std::string("<") + (is_float() ? "f" : "u") + std::to_string(itemsize_);
  }
  const char* dtype() const { return cvt::sample_name(sample_); }
  bool is_float() const { return sample_ != cvt::Sample::u8 && sample_ != cvt::Sample::u16; }
  int itemsize() const { return itemsize_; }
  // The stream that last wrote it (a consumer on another stream waits for it).
  Stream written_on = nullptr;

 private:
  void* data_ = nullptr;
  std::vector<int64_t> shape_;
  cvt::Sample sample_;
  int itemsize_;
  int device_;
};

// A consumer on `consumer` must see the writes queued on the array's stream.
void order_after_write(const DeviceArray& a, Stream consumer) {
  if (consumer == a.written_on) return;
  cudaEvent_t ev;
  if (cudaEventCreateWithFlags(&ev, cudaEventDisableTiming) == cudaSuccess) {
    cudaEventRecord(ev, reinterpret_cast<cudaStream_t>(a.written_on));
    cudaStreamWaitEvent(reinterpret_cast<cudaStream_t>(consumer), ev, 0);
    cudaEventDestroy(ev);
  }
  cudaGetLastError();
}

nb::object dlpack(nb::handle self, nb::handle stream, nb::handle /*max_version*/, nb::handle /*dl_device*/, nb::handle /*copy*/) {
  DeviceArray& a = nb::cast<DeviceArray&>(self);
  if (!stream.is_none()) {
    intptr_t s = nb::cast<intptr_t>(stream);
    if (s != -1) order_after_write(a, s == 1 ? nullptr : s == 2 ? cudaStreamPerThread : reinterpret_cast<Stream>(s));
  }
  auto* m = new DLManagedTensor{};
  auto* shape = new int64_t[a.shape().size()];
  std::copy(a.shape().begin(), a.shape().end(), shape);
  m->dl_tensor.data = a.data();
  m->dl_tensor.device = {2, a.device()};
  m->dl_tensor.ndim = int32_t(a.shape().size());
  m->dl_tensor.dtype = {uint8_t(a.is_float() ? nb::dlpack::dtype_code::Float : nb::dlpack::dtype_code::UInt), uint8_t(a.itemsize() * 8), 1};
  m->dl_tensor.shape = shape;
  m->manager_ctx = self.ptr();
  Py_INCREF(self.ptr());  // the consumer's tensor keeps the memory's owner alive
  m->deleter = [](DLManagedTensor* t) {
    PyGILState_STATE g = PyGILState_Ensure();  // consumers may delete without the GIL
    Py_DECREF(static_cast<PyObject*>(t->manager_ctx));
    PyGILState_Release(g);
    delete[] t->dl_tensor.shape;
    delete t;
  };
  // An unconsumed capsule frees the tensor itself.
  return nb::steal(PyCapsule_New(m, "dltensor", [](PyObject* cap) {
    if (!PyCapsule_IsValid(cap, "dltensor")) return;
    auto* t = static_cast<DLManagedTensor*>(PyCapsule_GetPointer(cap, "dltensor"));
    t->deleter(t);
  }));
}

nb::dict cuda_array_interface(const DeviceArray& a) {
  nb::dict d;
  nb::list shape;
  for (int64_t s : a.shape()) shape.append(s);
  d["shape"] = nb::tuple(shape);
  d["typestr"] = a.typestr();
  d["data"] = nb::make_tuple(reinterpret_cast<uintptr_t>(a.data()), false);
  d["strides"] = nb::none();
  d["version"] = 3;
  d["stream"] = a.written_on == nullptr ? nb::int_(1) : nb::int_(reinterpret_cast<intptr_t>(a.written_on));
  return d;
}

nb::object to_host(const DeviceArray& a) {
  size_t n = 1;
  for (int64_t s : a.shape()) n *= size_t(s);
  nb::object np = nb::module_::import_("numpy");
  nb::object out = np.attr("empty")(nb::tuple(nb::cast(a.shape())), a.dtype());
  auto host = nb::cast<nb::ndarray<>>(out);
  cudaStreamSynchronize(reinterpret_cast<cudaStream_t>(a.written_on));
  cudaError_t e = cudaMemcpy(host.data(), a.data(), n * a.itemsize(), cudaMemcpyDeviceToHost);
  if (e != cudaSuccess) throw nb::value_error((std::string("DeviceArray.get: ") + cudaGetErrorString(e)).c_str());
  return out;
}

}  // namespace

nb::object empty_like_device(const ArrayView& v, Stream written_on) {
  std::vector<int64_t> shape(v.shape, v.shape + v.ndim);
  nb::object o = nb::cast(new DeviceArray(shape, v.sample, v.itemsize, v.device), nb::rv_policy::take_ownership);
  nb::cast<DeviceArray&>(o).written_on = written_on;
  return o;
}

void bind_device_array(nb::module_& m) {
  nb::class_<DeviceArray>(m, "DeviceArray",
                          "CUDA memory that histeq allocated for a result (when the input's library has no empty_like).\n"
                          "Hand it to any library with from_dlpack or __cuda_array_interface__; .get() copies it to numpy.")
      .def_prop_ro("shape", [](const DeviceArray& a) { return nb::tuple(nb::cast(a.shape())); })
      .def_prop_ro("dtype", [](const DeviceArray& a) { return a.dtype(); })
      .def_prop_ro("device", &DeviceArray::device)
      .def_prop_ro("data_ptr", [](const DeviceArray& a) { return reinterpret_cast<uintptr_t>(a.data()); })
      .def_prop_ro("__cuda_array_interface__", &cuda_array_interface)
      .def("__dlpack__", &dlpack, nb::kw_only(), nb::arg("stream") = nb::none(), nb::arg("max_version") = nb::none(),
           nb::arg("dl_device") = nb::none(), nb::arg("copy") = nb::none())
      .def("__dlpack_device__", [](const DeviceArray& a) { return nb::make_tuple(2, a.device()); })
      .def("get", &to_host, "A numpy copy (waits for the stream that wrote it).");
}

}  // namespace histeq::py
