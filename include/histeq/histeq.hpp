// histeq's public C++ API: equalize video frames (host or CUDA device memory) with the same
// operations, kernels and integer formulas as `histeq export`, so a frame processed here is
// bit-identical to the frame `histeq export` writes with the same settings.
//
// Stability: everything in this header is the stable API of libhisteq; the library's SONAME carries
// the project version. Nothing else of the project is public. The names are declared in
// histeq::api and brought into histeq by a using-directive, so callers write histeq::Equalizer:
// the project's own core has a histeq::Status and histeq::Result of its own, and the library's
// sources (which see both) define HISTEQ_API_NO_USING and spell histeq::api:: instead. Nothing here prints, exits or throws across the API: every fallible call returns a
// Status (or a Result<T>), whose message is one line naming what was wrong.
//
// Units: widths and heights in samples, pitches in BYTES (as cudaMallocPitch and FFmpeg's
// linesize). Streams are CUDA runtime streams (cudaStream_t); nullptr is the legacy default stream.
//
// Threads: an Equalizer belongs to one thread at a time (calls on one object must not overlap);
// different objects may be used from different threads. The free functions are thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

// Exported symbols of libhisteq (the library is built with hidden visibility).
#if defined(_WIN32)
#define HISTEQ_API
#elif defined(HISTEQ_BUILDING_LIBRARY)
#define HISTEQ_API __attribute__((visibility("default")))
#else
#define HISTEQ_API
#endif

struct CUstream_st;  // cudaStream_t is CUstream_st*; no CUDA header is needed to use this API

namespace histeq {
namespace api {

using Stream = CUstream_st*;

// "0.1.0": the library's version (the project's).
HISTEQ_API const char* version() noexcept;

// ---- errors as values --------------------------------------------------------------------------

enum class ErrorCode {
  ok = 0,
  invalid_argument = 1,  // a bad value, shape, pitch, format, control name or control value
  unsupported = 2,       // valid, but not available here (a GPU kernel without a GPU, 16-bit on an 8-bit kernel)
  device_error = 3,      // a CUDA call failed (its text, file and line are in the message)
  internal = 4,          // a bug: please report it with the message
};

class HISTEQ_API Status {
 public:
  Status() = default;  // ok
  Status(ErrorCode code, std::string message) : code_(code), message_(std::move(message)) {}
  bool ok() const noexcept { return code_ == ErrorCode::ok; }
  explicit operator bool() const noexcept { return ok(); }
  ErrorCode code() const noexcept { return code_; }
  const std::string& message() const noexcept { return message_; }  // "" when ok

 private:
  ErrorCode code_ = ErrorCode::ok;
  std::string message_;
};

// A value or the Status that says why there is none.
template <class T>
class Result {
 public:
  Result(T value) : value_(std::move(value)) {}          // NOLINT(google-explicit-constructor)
  Result(Status status) : status_(std::move(status)) {}  // NOLINT(google-explicit-constructor)
  bool ok() const noexcept { return value_.has_value(); }
  explicit operator bool() const noexcept { return ok(); }
  const Status& status() const noexcept { return status_; }
  // Only when ok().
  T& value() & { return *value_; }
  const T& value() const& { return *value_; }
  T&& value() && { return std::move(*value_); }

 private:
  std::optional<T> value_;
  Status status_;
};

// ---- images ------------------------------------------------------------------------------------

enum class PixelFormat {
  gray8,      // one plane of 8-bit luma
  gray10,     // one plane of 16-bit samples holding 10-bit luma in the low bits
  yuv420p,    // three planes Y, U, V; 8-bit; chroma halved on both axes
  yuv420p10,  // three planes Y, U, V; 16-bit samples, 10-bit values in the low bits (yuv420p10le)
  nv12,       // two planes: Y, then U and V interleaved; 8-bit
  p010,       // two planes: Y, then UV interleaved; 16-bit samples, 10-bit values in the HIGH bits
  yuv444p,    // three planes Y, U, V of the full size; 8-bit
  yuv444p10,  // three planes Y, U, V of the full size; 16-bit samples, 10-bit values in the low bits
  yuv422p,    // three planes Y, U, V; 8-bit; chroma halved across, full height
  yuv422p10,  // three planes Y, U, V; chroma halved across; 16-bit samples, 10-bit values in the low bits
};

enum class Memory { host, device };

// The colour range of the samples: where black and white are (the tone curves keep within it).
enum class ColorRange {
  unspecified,  // untagged: treated as limited, as FFmpeg and players do
  limited,      // "tv": luma 16..235 (x4 for 10-bit)
  full,         // "pc": luma 0..255 (0..1023)
};

struct PlaneDesc {
  void* data = nullptr;  // the first sample of the first row
  size_t pitch = 0;      // bytes between row starts; 0 = tight (width * bytes per sample)
};

// A frame the caller owns (the API never keeps a pointer to it after a call returns, except as
// documented for asynchronous device work). Planes: gray 1, yuv420p*, yuv422p* and yuv444p* 3 (Y,
// U, V), nv12/p010 2 (Y, UV). 4:2:0 chroma planes are ceil(width/2) x ceil(height/2) samples
// (NV12/P010: 2*ceil(width/2) interleaved samples a row); 4:2:2 ones ceil(width/2) x height; 4:4:4
// ones width x height.
struct HISTEQ_API Image {
  PixelFormat format = PixelFormat::gray8;
  int width = 0, height = 0;
  Memory memory = Memory::host;
  int device = 0;  // the CUDA device of device memory
  ColorRange range = ColorRange::unspecified;
  PlaneDesc planes[3];
  // The frame's time in seconds (any origin; the temporal filter's frame interval comes from the
  // difference of two frames' times, as `histeq export` takes it from the timestamps). Negative:
  // unknown; the frame then follows the previous one by the previous interval (1/30 s at first).
  double time_s = -1;

  int plane_count() const noexcept;
  int bit_depth() const noexcept;         // 8 or 10
  int bytes_per_sample() const noexcept;  // 1 or 2
};

// ---- controls ----------------------------------------------------------------------------------

// A control of the equalizer, as the project's control table declares it (the same table gives the
// command line's options, the player's widgets, the Python keywords and the GStreamer properties).
struct ControlInfo {
  std::string name;         // "clip-limit" (the command line's --clip-limit)
  std::string python_name;  // "clip_limit" (Python keywords, GStreamer properties)
  std::string type;         // "choice", "number", "flag" or "grid"
  std::vector<std::string> choices;  // choice: the spellings
  std::vector<std::string> choice_help;  // choice: what each one means, a few words (as many as choices)
  double min = 0, max = 0;  // number: the valid values (grid: per axis)
  bool zero_off = false;    // number: 0 also valid, meaning off
  std::string unit;         // "s", "levels", ""
  std::string default_value;  // the text form of the default ("global", "1.1", "8x8", "1")
  std::string plain_value;    // the text form under plain equalization
  std::string help;         // one line
  bool live = true;         // may change between frames of one video
};

// Every control, in the order of the operation list, then the equalizer's own: "kernel",
// "strength" (0..1), "backend" ("auto", "gpu", "cpu"), "device" (CUDA device index).
HISTEQ_API std::vector<ControlInfo> controls();

// A renamed control keeps its old name as an alias, still taken by Settings::set/get and
// Equalizer::set: this gives what to tell the user when `name` is such an old name ("'limit' is an
// old name of 'chroma-limit' and will go: use 'chroma-limit'"), or "" for a current name or an
// unknown one. The library never prints it: the front end shows it (Python: a DeprecationWarning).
// Added in 0.1 beside the rest; controls() does not list the old names.
HISTEQ_API std::string control_warning(const std::string& name);
// The old names control `name` still takes (none for most; empty for an unknown name), for a front
// end that publishes them beside the new one (the GStreamer element: deprecated properties).
HISTEQ_API std::vector<std::string> control_aliases(const std::string& name);

// The settings of an equalizer: every control of controls(), by name (the command line's spelling,
// the Python name, or `histeq quality`'s key) with a value in its text form ("clahe", "2.5",
// "8x8", "on"/"off"/"1"/"0") or as a number (a choice's index, a flag's 1/0, a grid's columns and
// rows equal).
class HISTEQ_API Settings {
 public:
  Settings();  // the defaults of `histeq export` (what docs/quality.md measured)
  static Settings defaults();
  static Settings plain();  // plain equalization, as `histeq export --plain`

  Status set(const std::string& name, const std::string& value);
  Status set(const std::string& name, const char* value) { return set(name, std::string(value)); }
  Status set(const std::string& name, double value);
  Status set(const std::string& name, int value) { return set(name, static_cast<double>(value)); }
  Status set(const std::string& name, bool value) { return set(name, value ? 1.0 : 0.0); }
  // A grid control (tiles) by its columns and rows, typed; another control is an invalid_argument.
  Status set(const std::string& name, int columns, int rows);
  Result<std::string> get(const std::string& name) const;  // the text form
  // "clahe 8x8, clip 1.1, temporal 0.35 s ..." (as `histeq export` prints it).
  std::string describe() const;

  ~Settings();
  Settings(const Settings&);
  Settings& operator=(const Settings&);
  Settings(Settings&&) noexcept;
  Settings& operator=(Settings&&) noexcept;

 private:
  friend class Equalizer;
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// ---- the equalizer -----------------------------------------------------------------------------

struct EqualizerInfo {
  std::string backend;  // "gpu" or "cpu"
  std::string device;   // "NVIDIA H100 80GB HBM3" or "CPU, 16 threads"
  std::string kernel;   // the histogram kernel in use
  std::string fallback_note;  // why the CPU was chosen with backend "auto" ("" otherwise)
};

// Equalizes the frames of one video in order, keeping the temporal state (brightness hold, scene
// cuts, denoiser) from one frame to the next. The backend is chosen at creation (backend "auto":
// the GPU when there is one); frames in either memory are accepted by either backend (host frames
// go up to a GPU equalizer and device frames down to a CPU one, on `stream`).
//
// The frames are those of `histeq export` with the same settings, bit for bit: the same operation
// list (histogram -> LUT -> temporal filter -> apply, with the denoiser and colour as set) runs on
// the caller's planes, and the CPU and the GPU compute identical frames. Gray formats are luma
// only: the chroma controls have no chroma to act on. A frame of another format or size than the
// previous one starts a new video (the temporal state restarts).
class HISTEQ_API Equalizer {
 public:
  // Errors: an invalid setting, a GPU backend without a GPU, a device this machine lacks, a kernel
  // of the other backend or unknown. (A kernel that lacks the frames' bit depth fails at process.)
  static Result<Equalizer> create(const Settings& settings = Settings());

  // Equalizes `in` into `out` (the same geometry and format; `out` may be `in` itself for in-place
  // work, or any other planes in either memory; `in` is only read).
  //
  // Device memory on the GPU backend: processed where it is (out's planes are written by the
  // kernels; nothing goes through the host). The work runs on a stream of the equalizer's, ordered
  // after the work queued on `stream` before the call (an event recorded on `stream` that its
  // stream waits for) and before the work queued on `stream` after it (an event recorded on its
  // stream that `stream` waits for), and the call returns without waiting for the device: use
  // `out` on `stream` (or synchronize it) as with any asynchronous work. The planes must stay
  // allocated until then. Frame n+1's work follows frame n's whatever streams are passed.
  // Host memory (in or out) on the GPU backend: copied through device buffers of the equalizer's;
  // complete on return. CPU backend: complete on return; device planes are copied down and up on
  // `stream`, which is synchronized.
  //
  // Errors, before anything is written: an image that does not fit its format (an unknown format,
  // a size outside 1..65536, a null plane, a pitch smaller than a row, 16-bit samples at an odd
  // address or pitch; odd sizes are fine), in and out of different formats or sizes, memory that
  // is not what the image says (host / device, the device number), a device other than the
  // equalizer's, a kernel that lacks the frames' bit depth. A frame that fails leaves the temporal
  // state as it was.
  Status process(const Image& in, const Image& out, Stream stream = nullptr);
  Status process(const Image& frame, Stream stream = nullptr) { return process(frame, frame, stream); }

  // The next frame does not follow the last one (a seek, another video): the temporal state restarts.
  void reset();
  // Changes controls between frames: they apply from the next frame, as the player's live
  // controls do (a changed curve setting restarts the temporal filter at that frame, as there).
  // Changing the backend or the device makes a new equalizer (its state starts anew).
  // Errors leave every setting as it was.
  Status set(const std::string& name, const std::string& value);
  Status set(const std::string& name, double value);
  Status set(const std::string& name, int columns, int rows);  // a grid control (tiles)
  Status set(const Settings& settings);
  const Settings& settings() const;
  EqualizerInfo info() const;

  Equalizer(Equalizer&&) noexcept;
  Equalizer& operator=(Equalizer&&) noexcept;
  ~Equalizer();

 private:
  Equalizer();
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// One-shot: a new equalizer for one frame (no temporal history). Device frames: complete on return
// (the equalizer waits for its work before it goes).
HISTEQ_API Status equalize(const Image& in, const Image& out, const Settings& settings = Settings(),
                           Stream stream = nullptr);

// ---- the kernel laboratory ---------------------------------------------------------------------

struct KernelInfo {
  std::string name;          // "method2_tuned", "cub", "cpu_parallel", ...
  std::string description;   // one line
  std::string paper;         // "Nugteren et al. 2011"
  std::string section;       // "§7.3, mapping 3"
  std::string backend;       // "gpu" or "cpu"
  std::vector<int> bins_8bit;   // the bin counts it computes on 8-bit samples (empty: none)
  std::vector<int> bins_16bit;  // ... on 16-bit samples
  bool data_independent = false;  // its time does not depend on the picture
  bool is_default = false;        // the default of its backend
  std::string alias_of;           // "" or the kernel this name is another name for
};

HISTEQ_API std::vector<KernelInfo> kernels();

// A plane of samples for histogram(): 8-bit or 16-bit, host or device memory.
struct Plane {
  const void* data = nullptr;
  int width = 0, height = 0;
  size_t pitch = 0;          // bytes; 0 = tight
  int bytes_per_sample = 1;  // 1 or 2
  int bit_depth = 8;         // significant bits (samples must be below 2^bit_depth)
  Memory memory = Memory::host;
  int device = 0;
};

// The histogram of `plane` by `kernel` ("" = the default kernel for the plane's memory), with
// `bins` bins (0 = 2^bit_depth; else a power of two the kernel supports). Device planes: the kernel
// runs on `stream`, and the counts are returned when it is done (this call waits for it).
HISTEQ_API Result<std::vector<uint32_t>> histogram(const Plane& plane, const std::string& kernel = "",
                                                   int bins = 0, Stream stream = nullptr);

// Whether a CUDA device is usable here (the GPU backend and kernels need one).
HISTEQ_API bool gpu_available() noexcept;

}  // namespace api
#ifndef HISTEQ_API_NO_USING
using namespace api;  // NOLINT(google-build-using-namespace): the public names are histeq::X
#endif
}  // namespace histeq
