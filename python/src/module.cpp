// histeq._histeq: the public C++ API (include/histeq/histeq.hpp) for Python. The package around it
// (python/histeq/__init__.py) adds the keyword arguments, docstrings and stubs, all derived from
// controls() (the project's control table), so no control is spelled here.
#include <nanobind/nanobind.h>
#include <nanobind/stl/string.h>

#include <atomic>
#include <climits>
#include <cstdint>
#include <cstring>
#include <memory>
#include <optional>
#include <vector>

#include "arrays.h"
#include "bench.h"
#include "frames.h"
#include "process.h"

namespace histeq::py {

namespace {

[[noreturn]] void raise(const Status& s) {
  if (s.code() == ErrorCode::invalid_argument || s.code() == ErrorCode::unsupported) value_error(s.message());
  throw std::runtime_error(s.message());
}

void check(const Status& s) {
  if (!s.ok()) raise(s);
}

[[noreturn]] void overflow_error(const std::string& message) {
  PyErr_SetString(PyExc_OverflowError, message.c_str());
  throw nb::python_error();
}

// A Python number as a double or an int, named in the error when it does not fit (10**400,
// 2**40): nanobind's own cast would say only "std::bad_cast".
double number_of(nb::handle v, const std::string& name) {
  const double d = PyFloat_AsDouble(v.ptr());
  if (d == -1.0 && PyErr_Occurred()) {
    PyErr_Clear();
    overflow_error(name + ": " + nb::cast<std::string>(nb::repr(v)).substr(0, 40) + " is beyond a double's range");
  }
  return d;
}

int int_of(nb::handle v, const std::string& name, long long lo, long long hi, const std::string& range) {
  if (!PyLong_Check(v.ptr()) || PyBool_Check(v.ptr())) type_error(name + ": expected a whole number, got " + nb::cast<std::string>(nb::str(v.type().attr("__name__"))));
  int overflow = 0;
  const long long x = PyLong_AsLongLongAndOverflow(v.ptr(), &overflow);
  const std::string what = name + ": " + nb::cast<std::string>(nb::repr(v)).substr(0, 40) + " is not " + range;
  if (overflow != 0) overflow_error(what);
  if (x < lo || x > hi) value_error(what);
  return int(x);
}

// A control's value from Python: a string, a number, True/False, or (columns, rows) for a grid.
// A renamed control's old name is taken with a DeprecationWarning (histeq::control_warning).
template <class Target>
Status set_value(Target& target, const std::string& name, nb::handle v) {
  if (const std::string old = control_warning(name); !old.empty())
    if (PyErr_WarnEx(PyExc_DeprecationWarning, old.c_str(), 2) != 0) throw nb::python_error();  // warnings made errors
  if (PyBool_Check(v.ptr())) return target.set(name, v.ptr() == Py_True ? 1.0 : 0.0);
  if (PyLong_Check(v.ptr()) || PyFloat_Check(v.ptr())) return target.set(name, number_of(v, name));
  if (PyUnicode_Check(v.ptr())) return target.set(name, nb::cast<std::string>(v));
  if ((PyTuple_Check(v.ptr()) || PyList_Check(v.ptr())) && nb::len(v) == 2) {
    // Typed as ints. One beyond an int still gets the control's own range message ("tiles must be
    // 1..32 per axis, not 1099511627776x1"), through its text form: the only use of text here.
    bool fits = true;
    auto axis = [&](nb::handle a) {
      if (!PyLong_Check(a.ptr()) || PyBool_Check(a.ptr())) type_error(name + ": (columns, rows) must be whole numbers");
      int overflow = 0;
      const long long x = PyLong_AsLongLongAndOverflow(a.ptr(), &overflow);
      if (overflow != 0 || x < INT_MIN || x > INT_MAX) fits = false;
      return static_cast<int>(fits ? x : 0);
    };
    const nb::object c = v[0], r = v[1];
    const int columns = axis(c), rows = axis(r);
    if (fits) return target.set(name, columns, rows);
    return target.set(name, nb::cast<std::string>(nb::str(c)) + "x" + nb::cast<std::string>(nb::str(r)));
  }
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

// The keywords that say what the frame is (layout=, channels=, bits=).
FrameOptions frame_options(nb::handle layout, nb::handle channels, nb::handle bits, nb::handle full_range) {
  FrameOptions o;
  if (!full_range.is_none()) {
    if (!PyBool_Check(full_range.ptr())) type_error("full_range: expected True, False or None");
    o.range = full_range.ptr() == Py_True ? ColorRange::full : ColorRange::limited;
  }
  if (!layout.is_none()) o.layout = nb::cast<std::string>(nb::str(layout));
  if (!channels.is_none()) {
    const std::string c = PyUnicode_Check(channels.ptr()) ? nb::cast<std::string>(channels) : "?";
    if (c != "bgr" && c != "rgb") value_error("channels: must be 'bgr' (OpenCV's order, the default) or 'rgb', not " + nb::cast<std::string>(nb::repr(channels)));
    o.rgb = c == "rgb";
  }
  if (!bits.is_none()) o.bits = int_of(bits, "bits", 1, 64, "10, 12 or 16");
  return o;
}

// time=: a number (one frame) or one number a frame (a batch).
std::vector<double> times_of(nb::handle time, const Frames& in) {
  std::vector<double> t;
  if (time.is_none()) return t;
  if (PyLong_Check(time.ptr()) || PyFloat_Check(time.ptr())) {
    if (in.count != 1) value_error("time: a batch takes one time a frame (a sequence of " + std::to_string(in.count) + ")");
    t.push_back(number_of(time, "time"));
    return t;
  }
  if (!PySequence_Check(time.ptr()) || PyUnicode_Check(time.ptr())) type_error("time: expected the frame's time in seconds");
  if (int64_t(nb::len(time)) != in.count)
    value_error("time: " + std::to_string(nb::len(time)) + " times for " + std::to_string(in.count) + " frames");
  for (nb::handle x : nb::borrow<nb::sequence>(time)) {
    if (!PyLong_Check(x.ptr()) && !PyFloat_Check(x.ptr())) type_error("time: expected the frames' times in seconds");
    t.push_back(number_of(x, "time"));
  }
  return t;
}

// The body of eq(frame) and equalize(frame): the frame's stream, its checked views and its result.
// Every check runs before anything is written (out= stays as it was on an error).
struct CallArgs {
  nb::handle frame, out, stream, time;
  FrameOptions options;
};

nb::object run_on_frame(const CallArgs& c, const ProcessFrame& process) {
  if (c.frame.is_none()) type_error("frame: expected an array or a tuple of planes, got None");
  CallStream stream = parse_stream(c.stream);
  const bool single = !(PyTuple_Check(c.frame.ptr()) || PyList_Check(c.frame.ptr()));
  if (!single && nb::len(c.frame) > 0) default_stream(nb::borrow<nb::sequence>(c.frame)[0], stream);
  if (single) default_stream(c.frame, stream);
  Frames in = parse_frames(c.frame, "frame", stream, c.options);
  const std::vector<double> times = times_of(c.time, in);
  nb::object result = c.out.is_none() ? new_output(c.frame, in, stream) : nb::borrow(c.out);
  Frames o = parse_frames(result, "out", stream, c.options);
  check_output(in, o);
  check_values(in, stream.stream);
  Status s;
  {
    nb::gil_scoped_release unlocked;  // host frames take milliseconds: let other threads run
    s = run_frames(in, o, times, stream.stream, process);
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

// The histogram of `p` whose samples are `s`: rows of contiguous samples at a positive pitch of whole
// rows go as they are; any other strides (zero: a broadcast array; negative; overlapping; samples
// apart) are read through a copy, as OpenCV copies a non-contiguous array, so the core never sees
// a pitch smaller than a row. Without the GIL.
Result<std::vector<uint32_t>> histogram_through(Plane p, const Strided& s, const std::string& kernel, int bins, Stream stream) {
  const int64_t row = s.cols * p.bytes_per_sample;
  const bool as_is = s.col_stride == p.bytes_per_sample && (s.rows == 1 || (s.row_stride >= row && s.row_stride % p.bytes_per_sample == 0)) &&
                     reinterpret_cast<uintptr_t>(s.data) % uintptr_t(p.bytes_per_sample) == 0;
  std::unique_ptr<uint8_t[]> host;
  DeviceScratch device;
  if (as_is) {
    p.data = s.data;
    p.pitch = s.rows == 1 ? size_t(row) : size_t(s.row_stride);
    return histeq::histogram(p, kernel, bins, stream);
  }
  const size_t bytes = size_t(row) * size_t(s.rows);
  if (p.memory == Memory::device) {
    if (Status st = device.allocate(bytes, p.device, stream); !st.ok()) return st;
  } else {
    host.reset(new uint8_t[bytes]);  // not zeroed: every sample is written
  }
  const WorkPlane w{p.memory == Memory::device ? device.data() : host.get(), size_t(row), p.bytes_per_sample == 2};
  if (Status st = load_plane(s, w, {p.memory, p.device, stream}); !st.ok()) return st;
  p.data = w.data;
  p.pitch = w.pitch;
  return histeq::histogram(p, kernel, bins, stream);
}

nb::object histogram_of(nb::handle a, const std::string& kernel, nb::handle bins_arg, nb::handle bits, nb::handle stream_arg) {
  CallStream stream = parse_stream(stream_arg);
  default_stream(a, stream);
  ArrayView v = view_array(a, "a", stream);
  if (v.ndim != 2) value_error("a: expected a 2-D array (rows, columns), got shape " + v.shape_text());
  if (v.is_float()) type_error("a: the samples must be uint8 or uint16, not " + v.dtype_name());
  if (v.shape[0] < 1 || v.shape[1] < 1) value_error("a: the plane is empty, shape " + v.shape_text());
  if (v.shape[0] > INT32_MAX || v.shape[1] > INT32_MAX) value_error("a: larger than 2**31 - 1 samples a side, shape " + v.shape_text());
  const int bins = bins_arg.is_none() ? 0 : int_of(bins_arg, "bins", 0, 1 << 16, "0 or a power of two up to 2**bits");
  Plane p;
  p.height = int(v.shape[0]);
  p.width = int(v.shape[1]);
  p.bytes_per_sample = v.itemsize;
  p.bit_depth = bits.is_none() ? (v.itemsize == 1 ? 8 : 10) : int_of(bits, "bits", 1, 16, "1..16");  // uint16 holds 10-bit video
  p.memory = v.memory;
  p.device = v.device;
  // bits 10: the samples copy as they are (a copy is a copy, whatever their depth).
  const Strided s{static_cast<char*>(v.data), v.shape[0], v.shape[1], v.strides[0], v.strides[1], v.sample, 10};
  Result<std::vector<uint32_t>> r = [&] {
    nb::gil_scoped_release unlocked;
    return histogram_through(p, s, kernel, bins, stream.stream);
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
           [](nb::pointer_and_handle<PyEqualizer> me, nb::handle frame, nb::handle out, nb::handle stream, nb::handle time,
              nb::handle layout, nb::handle channels, nb::handle bits, nb::handle full_range) -> nb::object {
             if (std::strcmp(Py_TYPE(frame.ptr())->tp_name, "av.video.frame.VideoFrame") == 0)  // PyAV: its planes, in Python
               return nb::module_::import_("histeq").attr("_av_equalizer_call")(me.h, frame, out, stream, time);
             Using eq(*me.p);  // held for the whole batch: its frames are one stream
             return run_on_frame({frame, out, stream, time, frame_options(layout, channels, bits, full_range)},
                                 [&](const Image& i, const Image& o, Stream s) { return eq->process(i, o, s); });
           },
           nb::arg("frame"), nb::kw_only(), nb::arg("out") = nb::none(), nb::arg("stream") = nb::none(),
           nb::arg("time") = nb::none(), nb::arg("layout") = nb::none(), nb::arg("channels") = nb::none(),
           nb::arg("bits") = nb::none(), nb::arg("full_range") = nb::none())
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
  m.def("_control_warning", [](const std::string& name) { return histeq::control_warning(name); },
        "what to say when `name` is a renamed control's old name, else ''");
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
        [](nb::handle frame, nb::dict controls, nb::handle out, nb::handle stream, nb::handle layout, nb::handle channels,
           nb::handle bits, nb::handle full_range) {
          // One equalizer for the call: a batch is one video (its frames in order), as in Equalizer.
          histeq::Result<histeq::Equalizer> eq = histeq::Equalizer::create(settings_from(controls));
          if (!eq.ok()) raise(eq.status());
          return run_on_frame({frame, out, stream, nb::none(), frame_options(layout, channels, bits, full_range)},
                              [&](const histeq::Image& i, const histeq::Image& o, histeq::Stream s) { return eq.value().process(i, o, s); });
        },
        nb::arg("frame"), nb::arg("controls"), nb::arg("out") = nb::none(), nb::arg("stream") = nb::none(),
        nb::arg("layout") = nb::none(), nb::arg("channels") = nb::none(), nb::arg("bits") = nb::none(),
        nb::arg("full_range") = nb::none());
  m.def("histogram", &histogram_of, nb::arg("a"), nb::kw_only(), nb::arg("kernel") = "", nb::arg("bins") = nb::none(),
        nb::arg("bits") = nb::none(), nb::arg("stream") = nb::none());
  bind_equalizer(m);
  bind_device_array(m);
}
