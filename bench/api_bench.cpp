// The public API's per-call time on a 1080p yuv420p frame (the library's speed figures), built against
// libhisteq.so and its public header only, as a consumer program is. JSON on stdout:
//   device: Equalizer::process on device frames (backend gpu) on a stream of ours, each call
//           bracketed by CUDA events on that stream (the time the call occupies the stream: its
//           kernels, and its launch overhead whenever the GPU waits for it), and the host clock
//           around the call (what it costs the calling thread); median and p99 after a warm-up;
//   host:   process on host frames with the CPU backend, the host clock.
// Frames rotate through several different pictures (out of place, so each keeps its content); two
// settings, `defaults` and `plain`, as Python's benchmark runs them.
//
//   histeq_api_bench [--runs N] [--warmup N] [--frames K] [--width W] [--height H] [--no-host]
#include <cuda_runtime_api.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "histeq/histeq.hpp"

namespace {

struct Options {
  int runs = 500, warmup = 50, frames = 8, width = 1920, height = 1080;
  bool host = true;
};

struct Stats {
  double median = 0, p99 = 0, mean = 0;
};

Stats stats_of(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  Stats s;
  if (v.empty()) return s;
  s.median = v[v.size() / 2];
  s.p99 = v[std::min(v.size() - 1, static_cast<size_t>(static_cast<double>(v.size()) * 0.99))];
  for (double x : v) s.mean += x / static_cast<double>(v.size());
  return s;
}

std::string json(const Stats& s) {
  char b[160];
  std::snprintf(b, sizeof b, "{\"median_us\": %.2f, \"p99_us\": %.2f, \"mean_us\": %.2f}", s.median, s.p99, s.mean);
  return b;
}

[[noreturn]] void die(const std::string& what) {
  std::fprintf(stderr, "histeq_api_bench: %s\n", what.c_str());
  std::exit(1);
}

void check(const histeq::Status& s, const char* what) {
  if (!s) die(std::string(what) + ": " + s.message());
}
void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) die(std::string(what) + ": " + cudaGetErrorString(e));
}

// Picture k of the rotation: gradients of a mid-grey range (so the curve has work), a block whose
// place depends on k, and noise; chroma varied. Planes packed (pitch = width).
std::vector<uint8_t> picture(const Options& o, int k) {
  const size_t luma = static_cast<size_t>(o.width) * o.height, chroma = luma / 4;
  std::vector<uint8_t> p(luma + 2 * chroma);
  uint32_t r = 12345u + static_cast<uint32_t>(k) * 7919u;
  for (int y = 0; y < o.height; ++y)
    for (int x = 0; x < o.width; ++x) {
      r = r * 1664525u + 1013904223u;
      int v = 70 + 80 * x / o.width + 40 * y / o.height + static_cast<int>(r >> 29);
      if (x / 240 == k % 8 && y / 270 == k % 4) v += 50;
      p[static_cast<size_t>(y) * o.width + x] = static_cast<uint8_t>(std::min(v, 255));
    }
  for (size_t i = 0; i < 2 * chroma; ++i) p[luma + i] = static_cast<uint8_t>(110 + (i * 7 + static_cast<size_t>(k)) % 37);
  return p;
}

histeq::Image image_at(const Options& o, uint8_t* base, histeq::Memory m) {
  histeq::Image im;
  im.format = histeq::PixelFormat::yuv420p;
  im.width = o.width;
  im.height = o.height;
  im.memory = m;
  const size_t luma = static_cast<size_t>(o.width) * o.height;
  im.planes[0] = {base, static_cast<size_t>(o.width)};
  im.planes[1] = {base + luma, static_cast<size_t>(o.width / 2)};
  im.planes[2] = {base + luma + luma / 4, static_cast<size_t>(o.width / 2)};
  return im;
}

double now_us() {
  return std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

histeq::Settings settings_for(const std::string& name, const char* backend) {
  histeq::Settings s = name == "plain" ? histeq::Settings::plain() : histeq::Settings::defaults();
  check(s.set("backend", backend), "backend");
  return s;
}

// Device frames: events around each call on our stream, the host clock around the call.
std::string run_device(const Options& o, const std::string& name, const std::vector<uint8_t*>& in, uint8_t* out) {
  auto e = histeq::Equalizer::create(settings_for(name, "gpu"));
  if (!e) die("equalizer: " + e.status().message());
  cudaStream_t st = nullptr;
  check(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking), "stream");
  const auto stream = reinterpret_cast<histeq::Stream>(st);
  const histeq::Image dst = image_at(o, out, histeq::Memory::device);
  for (int i = 0; i < o.warmup; ++i) check(e.value().process(image_at(o, in[i % in.size()], histeq::Memory::device), dst, stream), "warm-up");
  check(cudaStreamSynchronize(st), "warm-up");
  std::vector<cudaEvent_t> ev(2 * static_cast<size_t>(o.runs));
  for (auto& x : ev) check(cudaEventCreate(&x), "event");
  std::vector<double> host(static_cast<size_t>(o.runs)), device(static_cast<size_t>(o.runs));
  for (int i = 0; i < o.runs; ++i) {
    const histeq::Image src = image_at(o, in[static_cast<size_t>(i) % in.size()], histeq::Memory::device);
    check(cudaEventRecord(ev[2 * i], st), "record");
    const double t = now_us();
    check(e.value().process(src, dst, stream), "process");
    host[static_cast<size_t>(i)] = now_us() - t;
    check(cudaEventRecord(ev[2 * i + 1], st), "record");
  }
  check(cudaStreamSynchronize(st), "run");
  for (int i = 0; i < o.runs; ++i) {
    float ms = 0;
    check(cudaEventElapsedTime(&ms, ev[2 * i], ev[2 * i + 1]), "elapsed");
    device[static_cast<size_t>(i)] = 1000.0 * ms;
  }
  for (auto& x : ev) cudaEventDestroy(x);
  cudaStreamDestroy(st);
  return "{\"kernel\": \"" + e.value().info().kernel + "\", \"events\": " + json(stats_of(device)) +
         ", \"host_call\": " + json(stats_of(host)) + "}";
}

// Host frames on the CPU backend: the host clock around each call.
std::string run_host(const Options& o, const std::string& name, std::vector<std::vector<uint8_t>>& in, std::vector<uint8_t>& out) {
  auto e = histeq::Equalizer::create(settings_for(name, "cpu"));
  if (!e) die("equalizer: " + e.status().message());
  const histeq::Image dst = image_at(o, out.data(), histeq::Memory::host);
  for (int i = 0; i < std::min(o.warmup, 10); ++i) check(e.value().process(image_at(o, in[i % in.size()].data(), histeq::Memory::host), dst), "warm-up");
  std::vector<double> host(static_cast<size_t>(o.runs));
  for (int i = 0; i < o.runs; ++i) {
    const histeq::Image src = image_at(o, in[static_cast<size_t>(i) % in.size()].data(), histeq::Memory::host);
    const double t = now_us();
    check(e.value().process(src, dst), "process");
    host[static_cast<size_t>(i)] = now_us() - t;
  }
  return "{\"kernel\": \"" + e.value().info().kernel + "\", \"device\": \"" + e.value().info().device +
         "\", \"host_call\": " + json(stats_of(host)) + "}";
}

Options parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&](int& v) {
      if (i + 1 >= argc) die(a + " needs a value");
      v = std::atoi(argv[++i]);
    };
    if (a == "--runs") value(o.runs);
    else if (a == "--warmup") value(o.warmup);
    else if (a == "--frames") value(o.frames);
    else if (a == "--width") value(o.width);
    else if (a == "--height") value(o.height);
    else if (a == "--no-host") o.host = false;
    else die("unknown option " + a + " (--runs N --warmup N --frames K --width W --height H --no-host)");
  }
  if (o.runs < 1 || o.frames < 1 || o.warmup < 0 || o.width < 16 || o.height < 16 || o.width % 2 || o.height % 2)
    die("--runs and --frames must be >= 1, sizes even and >= 16");
  return o;
}

}  // namespace

int main(int argc, char** argv) {
  const Options o = parse(argc, argv);
  std::vector<std::vector<uint8_t>> pictures;
  for (int k = 0; k < o.frames; ++k) pictures.push_back(picture(o, k));
  std::vector<uint8_t> host_out(pictures[0].size());
  std::string dev = "null", host = "null";
  if (histeq::gpu_available()) {
    std::vector<uint8_t*> in;
    for (const auto& p : pictures) {
      void* d = nullptr;
      check(cudaMalloc(&d, p.size()), "cudaMalloc");
      check(cudaMemcpy(d, p.data(), p.size(), cudaMemcpyHostToDevice), "upload");
      in.push_back(static_cast<uint8_t*>(d));
    }
    void* out = nullptr;
    check(cudaMalloc(&out, pictures[0].size()), "cudaMalloc");
    dev = "{\"defaults\": " + run_device(o, "defaults", in, static_cast<uint8_t*>(out)) +
          ", \"plain\": " + run_device(o, "plain", in, static_cast<uint8_t*>(out)) + "}";
    for (uint8_t* p : in) cudaFree(p);
    cudaFree(out);
  }
  if (o.host)
    host = "{\"defaults\": " + run_host(o, "defaults", pictures, host_out) + ", \"plain\": " + run_host(o, "plain", pictures, host_out) + "}";
  std::printf("{\"library\": \"%s\", \"frame\": \"%dx%d yuv420p\", \"runs\": %d, \"warmup\": %d, \"pictures\": %d,\n \"device\": %s,\n \"host\": %s}\n",
              histeq::version(), o.width, o.height, o.runs, o.warmup, o.frames, dev.c_str(), host.c_str());
  return 0;
}
