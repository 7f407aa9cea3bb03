// The lab's measuring engine (behind `histeq bench`, `--paper`, `--equalize`): builds the rotating
// input buffers of one case, checks a kernel against cpu_reference, and times it. Like core/, the
// lab never prints or exits: it returns its results as data, and app/ shows them.
//
// Method (DEVELOPERS.md, "Measuring"):
//  - inputs rotate over B >= 3 buffers whose total is at least twice the L2, so no run is served
//    from a cache the previous run warmed;
//  - GPU runs are timed one by one with CUDA events after a warm-up; a spin kernel is queued before
//    each batch so the whole batch is enqueued before the GPU reaches it, and host launch latency
//    does not leak into the events;
//  - median and p99 over the runs; effective GB/s = input bytes (no padding) / median;
//  - before timing, the kernel's histogram on the first and the last buffer must equal
//    cpu_reference's exactly, or the result is FAILED and not timed.
// CPU kernels are timed with a steady clock, capped at cpu_budget_s per case (at least 5 runs).
//
// Thread: one Engine per thread. Units: microseconds, bytes, GB/s = 1e9 bytes per second.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "core/cuda/device.h"
#include "core/cuda/resources.h"
#include "core/histogram/histogram.h"
#include "core/image/plane.h"
#include "core/image/synthetic.h"

namespace histeq::lab {

struct SizeSpec {
  std::string name;
  int width = 0, height = 0;
};
// "1080p", "4k", "8k" (8192x8192), "1g" (32768x32768, 1 GiB of 8-bit samples) or "WxH".
Result<SizeSpec> parse_size(const std::string& s);
// Padded pitch: the next multiple of 512 bytes above the row, as a pitched allocator would give.
size_t pitch_for(const SizeSpec& s, int bytes_per_sample, bool padded);

// What fills the buffers: a synthetic pattern (with its parameter), or real frames.
struct InputSpec {
  std::string name;                  // the label in tables
  bool real = false;                 // real frames (Engine's frames), mirror-tiled to the size
  int frame = -1;                    // real: this frame in every buffer, or -1 to rotate over all
  synth::Pattern pattern = synth::Pattern::uniform;
  uint32_t value = 77;               // degenerate value, gaussian sigma, colour count
};
// "uniform", "degenerate", "natural", "real", "gaussian:SIGMA" (or "gaussianSIGMA", e.g. "gaussian8":
// samples drawn from a Gaussian of standard deviation SIGMA around mid-grey), "colours:N".
Result<InputSpec> parse_input(const std::string& s);


struct CaseSpec {
  SizeSpec size;
  bool padded = false;
  int bytes_per_sample = 1;
  int bit_depth = 8;
  int bins = 256;
  InputSpec input;
  bool weighted = false;  // also a float weight plane per buffer (random in [0, 1)); weighted kernels only
  bool tiled = false;     // every tile's histogram (hist::compute_tiles over `tiles`); tiled kernels only
  hist::TileGrid tiles;
  // Counters a kernel writes: bins, times the tiles when tiled.
  size_t counters() const { return static_cast<size_t>(bins) * (tiled ? static_cast<size_t>(tiles.count()) : 1u); }
};

// A plane of either sample width.
struct AnyPlane {
  Plane8 p8;
  Plane16 p16;
  int bytes_per_sample = 1;
  PlaneRef ref() const { return bytes_per_sample == 1 ? PlaneRef(p8) : PlaneRef(p16); }
};

struct CaseData {
  CaseSpec spec;
  size_t pitch = 0;
  size_t bytes = 0;                 // input bytes (samples, and weights when weighted), padding excluded
  std::vector<AnyPlane> dev;        // GPU buffers (with a GPU)
  std::vector<AnyPlane> host;       // all buffers for CPU kernels; else the first and the last
  std::vector<uint32_t> reference_first, reference_last;
  // Weighted cases: one weight plane per buffer (device with a GPU, host otherwise) and the
  // reference weight sums (cpu_reference, double accumulation) of the first and last buffer.
  std::vector<PlaneF> weights_dev, weights_host;
  std::vector<float> ref_sums_first, ref_sums_last;
  size_t buffers() const { return dev.empty() ? host.size() : dev.size(); }
};

struct Stats {
  double median_us = 0, p99_us = 0;
  int runs = 0;
};
Stats summarize(std::vector<double> us);

struct Measurement {
  std::string status;  // "ok", "FAILED: ...", "error: ..."
  Stats t;
  double gbps = 0;
  bool ok() const { return status == "ok"; }
};

struct EngineOptions {
  int runs = 50;
  int warmup = 5;
  double cpu_budget_s = 2.0;
  bool keep_host_buffers = false;  // true when CPU kernels will run
};

class Engine {
 public:
  static Result<std::unique_ptr<Engine>> create(const EngineOptions& opts);
  bool gpu() const { return gpu_; }
  const cuda::DeviceInfo& device() const { return dev_; }
  void set_options(const EngineOptions& o) { o_ = o; }

  // Real frames (8-bit luma) for real inputs; 16-bit cases scale them to the bit depth.
  void set_frames(std::vector<Plane8> frames) { frames_ = std::move(frames); }
  size_t frame_count() const { return frames_.size(); }

  Status build(const CaseSpec& spec, CaseData& out);
  // The read ceiling on the case's buffers (GPU only); gbps counts the bytes it read.
  Measurement ceiling(const CaseData& cd);
  // Times launch(i) (i = the buffer to use, rotating) like a kernel: warm-up, batches behind a spin,
  // CUDA events around each run. For work other than a histogram (bench --equalize).
  Result<Stats> time_launches(const std::function<Status(size_t)>& launch, size_t buffers) { return time_gpu(launch, buffers); }
  cudaStream_t stream() const { return stream_.get(); }
  // Checks `k` against the reference on the first and last buffer, then times it.
  Measurement measure(hist::Kernel& k, const CaseData& cd);

 private:
  Engine() = default;
  // Buffer `i` of `buffers`: filled (synthetic or real), on the device with a GPU; kept on the host
  // when `keep`.
  Status build_buffer(const CaseSpec& spec, size_t i, bool keep, CaseData& cd);
  // cpu_reference's histogram (and weight sums) of the first and last buffer.
  static Status build_references(CaseData& cd);
  // The kernel's histogram of the first or last buffer (and its weight sums in a weighted case).
  Result<std::vector<uint32_t>> histogram_of(hist::Kernel& k, const CaseData& cd, bool last, std::vector<float>& sums);
  // The case's computation (plain, weighted or tiled) of buffer i, on the device (d_hist_, d_sums_,
  // the engine's stream) or the host (`counts`, `sums`).
  Status run_kernel(hist::Kernel& k, const CaseData& cd, size_t i, bool device, uint32_t* counts, float* sums);
  Status build_weights(const CaseSpec& spec, size_t buffers, bool keep_all, CaseData& cd);
  Result<Stats> time_gpu(const std::function<Status(size_t)>& launch, size_t buffers);
  Result<Stats> time_cpu(hist::Kernel& k, const CaseData& cd);
  Status fill_real(const CaseSpec& spec, size_t index, AnyPlane& host);

  EngineOptions o_;
  bool gpu_ = false;
  cuda::DeviceInfo dev_;
  std::vector<Plane8> frames_;
  cuda::Stream stream_;
  std::vector<cuda::Event> ev_start_, ev_stop_;
  cuda::DeviceArray<uint32_t> d_hist_, d_sink_;
  cuda::DeviceArray<float> d_sums_;
};

}  // namespace histeq::lab
