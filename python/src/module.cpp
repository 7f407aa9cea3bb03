// histeq._histeq: the public C++ API (include/histeq/histeq.hpp) for Python. The package around it
// (python/histeq/__init__.py) adds the keyword arguments, docstrings and stubs, all derived from
// controls() (the project's control table), so no control is spelled here.
#include <nanobind/nanobind.h>
#include <nanobind/stl/string.h>

#include <atomic>
#include <optional>

#include "arrays.h"
#include "bench.h"
#include "frames.h"

namespace histeq::py {

namespace {

[[noreturn]] void raise(const Status& s) {
  if (s.code() == ErrorCode::invalid_argument || s.code() == ErrorCode::unsupported) value_error(s.message());
  throw std::runtime_error(s.message());
}

void check(const Status& s) {
  if (!s.ok()) raise(s);
}

// A control's value from Python: a string, a number, True/False, or (columns, rows) for a grid.
template <class Target>
Status set_value(Target& target, const std::string& name, nb::handle v) {
  if (PyBool_Check(v.ptr())) return target.set(name, v.ptr() == Py_True ? 1.0 : 0.0);
  if (PyLong_Check(v.ptr()) || PyFloat_Check(v.ptr())) return target.set(name, nb::cast<double>(v));
  if (PyUnicode_Check(v.ptr())) return target.set(name, nb::cast<std::string>(v));
  if ((PyTuple_Check(v.ptr()) || PyList_Check(v.ptr())) && nb::len(v) == 2)
    return target.set(name, std::to_string(nb::cast<int>(v[0])) + "x" + std::to_string(nb::cast<int>(v[1])));
  type_error(name + ": expected a number, a string, True/False or (columns, rows), got " +
             nb::cast<std::string>(nb::str(v.type().attr("__name__"))));
}

// plain=True starts from plain equalization (`histeq export --plain`), the other keywords on top.
Settings settings_from(nb::dict controls) {
  bool plain = false;
  if (controls.contains("plain")) {
    nb::handle p = controls["plain"];
    if (!PyBool_Check(p.ptr())) type_error("plain: expected True or False");
    plain = p.ptr() == Py_True;
  }
  Settings s = plain ? Settings::plain() : Settings();
  for (auto [k, v] : controls) {
    std::string name = nb::cast<std::string>(k);
    if (name != "plain") check(set_value(s, name, v));
  }
  return s;
}

// An Equalizer takes one call at a time, and eq(frame) lets go of the GIL while it works: a second
// thread's call on the same object raises instead of overlapping (the C++ object's contract).
struct PyEqualizer {
  std::optional<Equalizer> eq;
  std::atomic<bool> busy{false};
};

class Using {
 public:
  explicit Using(PyEqualizer& e) : e_(e) {
    if (e_.busy.exchange(true))
      throw std::runtime_error("this Equalizer is in use by another thread (one call at a time; make one per thread)");
  }
  ~Using() { e_.busy = false; }
  Equalizer& operator*() { return *e_.eq; }
  Equalizer* operator->() { return &*e_.eq; }

 private:
  PyEqualizer& e_;
};

// The frame's own stream, its views and its result: the body of eq(frame) and equalize(frame).
template <class Process>
nb::object run_on_frame(nb::handle frame, nb::handle out, nb::handle stream_arg, nb::handle time, Process&& process) {
  if (frame.is_none()) type_error("frame: expected an array or a tuple of planes, got None");
  CallStream stream = parse_stream(stream_arg);
  bool single = !(PyTuple_Check(frame.ptr()) || PyList_Check(frame.ptr()));
  if (!single && nb::len(frame) > 0) default_stream(nb::borrow<nb::sequence>(frame)[0], stream);
  if (single) default_stream(frame, stream);
  Frame in = parse_frame(frame, "frame", stream);
  nb::object result = out.is_none() ? new_output(frame, in, stream) : nb::borrow(out);
  Frame o = parse_frame(result, "out", stream);
  check_output(in, o);
  if (!time.is_none()) {
    if (!PyLong_Check(time.ptr()) && !PyFloat_Check(time.ptr())) type_error("time: expected the frame's time in seconds");
    in.image.time_s = nb::cast<double>(time);
  }
  Status s;
  {
    nb::gil_scoped_release unlocked;  // host frames take milliseconds: let other threads run
    s = process(in.image, o.image, stream.stream);
  }
  check(s);
  return result;
}

nb::dict control_dict(const ControlInfo& c) {
  nb::dict d;
  d["name"] = c.name;
  d["python_name"] = c.python_name;
  d["type"] = c.type;
  nb::list choices;
  for (const auto& x : c.choices) choices.append(x);
  d["choices"] = choices;
  d["min"] = c.min;
  d["max"] = c.max;
  d["zero_off"] = c.zero_off;
  d["unit"] = c.unit;
  d["default"] = c.default_value;
  d["plain"] = c.plain_value;
  d["help"] = c.help;
  d["live"] = c.live;
  return d;
}

nb::dict kernel_dict(const KernelInfo& k) {
  nb::dict d;
  d["name"] = k.name;
  d["description"] = k.description;
  d["paper"] = k.paper;
  d["section"] = k.section;
  d["backend"] = k.backend;
  nb::list b8, b16;
  for (int b : k.bins_8bit) b8.append(b);
  for (int b : k.bins_16bit) b16.append(b);
  d["bins_8bit"] = b8;
  d["bins_16bit"] = b16;
  d["data_independent"] = k.data_independent;
  d["default"] = k.is_default;
  d["alias_of"] = k.alias_of;
  return d;
}

nb::object histogram_of(nb::handle a, const std::string& kernel, int bins, nb::handle bits, nb::handle stream_arg) {
  CallStream stream = parse_stream(stream_arg);
  default_stream(a, stream);
  ArrayView v = view_array(a, "a", stream);
  if (v.ndim != 2) value_error("a: expected a 2-D array (rows, columns)");
  Plane p;
  p.data = v.data;
  p.height = int(v.shape[0]);
  p.width = int(v.shape[1]);
  if (v.strides[1] != v.itemsize) value_error("a: the samples of a row must be contiguous");
  p.pitch = p.height == 1 ? size_t(p.width) * v.itemsize : size_t(v.strides[0]);
  p.bytes_per_sample = v.itemsize;
  p.bit_depth = bits.is_none() ? (v.itemsize == 1 ? 8 : 10) : nb::cast<int>(bits);  // uint16 holds 10-bit video
  p.memory = v.memory;
  p.device = v.device;
  Result<std::vector<uint32_t>> r = [&] {
    nb::gil_scoped_release unlocked;
    return histeq::histogram(p, kernel, bins, stream.stream);
  }();
  if (!r.ok()) raise(r.status());
  return numpy_counts(r.value().data(), r.value().size());
}

void bind_equalizer(nb::module_& m) {
  nb::class_<PyEqualizer>(m, "_Equalizer")
      .def("__init__",
           [](PyEqualizer* self, nb::dict controls) {
             new (self) PyEqualizer();
             Result<Equalizer> e = Equalizer::create(settings_from(controls));
             if (!e.ok()) raise(e.status());
             self->eq.emplace(std::move(e).value());
           })
      .def("__call__",
           [](PyEqualizer& self, nb::handle frame, nb::handle out, nb::handle stream, nb::handle time) {
             return run_on_frame(frame, out, stream, time, [&](const Image& i, const Image& o, Stream s) {
               return Using(self)->process(i, o, s);
             });
           },
           nb::arg("frame"), nb::kw_only(), nb::arg("out") = nb::none(), nb::arg("stream") = nb::none(),
           nb::arg("time") = nb::none())
      .def("reset", [](PyEqualizer& self) { Using(self)->reset(); },
           "The next frame does not follow the last one (a seek, another video): the temporal state restarts.")
      .def("_set", [](PyEqualizer& self, const std::string& name, nb::handle v) { check(set_value(*Using(self), name, v)); })
      .def("_get",
           [](PyEqualizer& self, const std::string& name) {
             Result<std::string> r = Using(self)->settings().get(name);
             if (!r.ok()) raise(r.status());
             return r.value();
           })
      .def("_time_process",
           [](PyEqualizer& self, nb::handle frames, nb::handle out, nb::handle stream, int calls) {
             return time_process(*Using(self), frames, out, stream, calls);
           },
           nb::arg("frames"), nb::arg("out"), nb::arg("stream").none(), nb::arg("calls"),
           "bench/python_bench.py: Equalizer::process timed from C++ (event and host microseconds per call).")
      .def("describe", [](PyEqualizer& self) { return Using(self)->settings().describe(); },
           "The settings in one line, as `histeq export` prints them.")
      .def_prop_ro("info", [](PyEqualizer& self) {
        EqualizerInfo i = Using(self)->info();
        nb::dict d;
        d["backend"] = i.backend;
        d["device"] = i.device;
        d["kernel"] = i.kernel;
        d["fallback_note"] = i.fallback_note;
        return d;
      });
}

}  // namespace

}  // namespace histeq::py

NB_MODULE(_histeq, m) {
  using namespace histeq::py;
  m.doc() = "histeq's C++ API; use the package histeq.";
  m.def("version", [] { return std::string(histeq::version()); });
  m.def("gpu_available", &histeq::gpu_available);
  m.def("controls", [] {
    nb::list l;
    for (const auto& c : histeq::controls()) l.append(control_dict(c));
    return l;
  });
  m.def("kernels", [] {
    nb::list l;
    for (const auto& k : histeq::kernels()) l.append(kernel_dict(k));
    return l;
  });
  m.def("_equalize",
        [](nb::handle frame, nb::dict controls, nb::handle out, nb::handle stream) {
          histeq::Settings settings = settings_from(controls);
          return run_on_frame(frame, out, stream, nb::none(), [&](const histeq::Image& i, const histeq::Image& o, histeq::Stream s) {
            return histeq::equalize(i, o, settings, s);
          });
        },
        nb::arg("frame"), nb::arg("controls"), nb::arg("out") = nb::none(), nb::arg("stream") = nb::none());
  m.def("histogram", &histogram_of, nb::arg("a"), nb::kw_only(), nb::arg("kernel") = "", nb::arg("bins") = 0,
        nb::arg("bits") = nb::none(), nb::arg("stream") = nb::none());
  bind_equalizer(m);
  bind_device_array(m);
}
