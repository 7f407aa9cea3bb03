// The method2_tuned sweep (see sweep.h). Stages:
//   0  correctness of every instance on odd shapes (pitch, misalignment, 16-bit out-of-range samples,
//      a one-value 8192x8192 plane on one block: counter overflow), fused vs the CPU equalizer
//   A  hot loop: every 8-bit instance at its largest block, one block per SM, at 1 GiB and 8192^2
//   B  grid: warps per block, units per lane, merge mode, at 1080p/4K/8K, for the best of each width
//   C  10-bit (1024 bins) instances at 1080p and 4K
//   D  the fused equalizer vs the unfused histogram + LUT + apply (8- and 10-bit, 1080p and 4K)
// Every result is checked against a reference histogram before it is timed. Lines "CSV,..." go to
// stdout and to OUT/sweep.csv.
//   sweep OUT [--stages 0ABCD] [--runs 50]
//   sweep OUT --sanitize            stage 0 on small shapes only (compute-sanitizer)
//   sweep OUT --profile NAME        NAME (a hist instance) 5x on 1 GiB uniform (ncu)
#include <cub/device/device_histogram.cuh>

#include <algorithm>
#include <cmath>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "bench/sweep/sweep.h"
#include "core/cuda/device.h"
#include "core/equalize/equalize.h"
#include "core/image/synthetic.h"

namespace histeq::hist {
// The harness does not link the kernel registry; lut_cpu.cpp needs this one function.
int bins_log2(int bins) noexcept {
  if (bins <= 0 || (bins & (bins - 1)) != 0) return -1;
  int k = 0;
  while ((1 << k) < bins) ++k;
  return k;
}
}  // namespace histeq::hist

namespace sweep {

std::vector<HistVariant>& hist_variants() {
  static std::vector<HistVariant> v;
  return v;
}
std::vector<FusedVariant>& fused_variants() {
  static std::vector<FusedVariant> v;
  return v;
}

namespace {

using namespace histeq;

#define CK(x)                                                                                         \
  do {                                                                                                \
    cudaError_t e_ = (x);                                                                             \
    if (e_ != cudaSuccess) {                                                                          \
      std::fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_));         \
      std::exit(1);                                                                                   \
    }                                                                                                 \
  } while (0)
#define CKS(x)                                                                                        \
  do {                                                                                                \
    const histeq::Status s_ = (x);                                                                    \
    if (!s_) {                                                                                        \
      std::fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #x, s_.to_string().c_str());         \
      std::exit(1);                                                                                   \
    }                                                                                                 \
  } while (0)

FILE* g_csv = nullptr;
int g_runs = 50, g_warm = 5;
int g_sms = 0;
size_t g_l2 = 0, g_optin = 0;
cudaStream_t g_stream;

void emit(const std::string& line) {
  std::printf("CSV,%s\n", line.c_str());
  std::fflush(stdout);
  if (g_csv) {
    std::fprintf(g_csv, "%s\n", line.c_str());
    std::fflush(g_csv);
  }
}

// Reference: shared atomics per block, every sample < limit counted in bin v >> shift.
template <class T>
__global__ void ref_kernel(const unsigned char* base, int w, int h, size_t pitch, uint32_t shift, uint32_t limit, uint32_t bins,
                           uint32_t* out) {
  __shared__ uint32_t sh[1024];
  for (uint32_t b = threadIdx.x; b < bins; b += blockDim.x) sh[b] = 0;
  __syncthreads();
  const size_t n = static_cast<size_t>(w) * h;
  for (size_t i = static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += static_cast<size_t>(gridDim.x) * blockDim.x) {
    const size_t y = i / w, x = i % w;
    const uint32_t v = reinterpret_cast<const T*>(base + y * pitch)[x];
    if (v < limit) atomicAdd(&sh[v >> shift], 1u);
  }
  __syncthreads();
  for (uint32_t b = threadIdx.x; b < bins; b += blockDim.x) atomicAdd(&out[b], sh[b]);
}

struct Stats {
  double med = 0, p99 = 0;
};

Stats summarize(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  Stats s;
  const size_t n = v.size();
  s.med = n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
  s.p99 = v[std::min(n - 1, static_cast<size_t>(std::ceil(0.99 * n)) - 1)];
  return s;
}

Stats time_runs(const std::function<void(int)>& launch, int nbuf) {
  static std::vector<cudaEvent_t> ev0, ev1;
  if (ev0.empty())
    for (int i = 0; i < 64; ++i) {
      cudaEvent_t a, b;
      CK(cudaEventCreate(&a));
      CK(cudaEventCreate(&b));
      ev0.push_back(a);
      ev1.push_back(b);
    }
  for (int i = 0; i < g_warm; ++i) launch(i % nbuf);
  CK(cudaStreamSynchronize(g_stream));
  std::vector<double> us;
  int next = 1;
  while (static_cast<int>(us.size()) < g_runs) {
    const int batch = std::min(64, g_runs - static_cast<int>(us.size()));
    CKS(hist::gpu_busy_wait(std::min(20000.0, batch * 40.0 + 100.0), g_stream));
    for (int b = 0; b < batch; ++b) {
      CK(cudaEventRecord(ev0[b], g_stream));
      launch(next++ % nbuf);
      CK(cudaEventRecord(ev1[b], g_stream));
    }
    CK(cudaStreamSynchronize(g_stream));
    for (int b = 0; b < batch; ++b) {
      float ms = 0;
      CK(cudaEventElapsedTime(&ms, ev0[b], ev1[b]));
      us.push_back(1000.0 * ms);
    }
  }
  CK(cudaGetLastError());
  return summarize(us);
}

struct Content {
  std::string name;
  synth::Pattern pattern;
  uint32_t value;
};

Content content(const std::string& n, int depth) {
  const uint32_t scale = 1u << (depth - 8);
  if (n == "uniform") return {n, synth::Pattern::uniform, 0};
  if (n == "degenerate") return {n, synth::Pattern::degenerate, 77u * scale};
  if (n == "natural") return {n, synth::Pattern::natural, 0};
  if (n == "gaussian8") return {n, synth::Pattern::gaussian, 8u * scale};
  std::fprintf(stderr, "unknown content %s\n", n.c_str());
  std::exit(2);
}

struct Case {
  std::string size, content;
  int w = 0, h = 0, bps = 1, depth = 8, bins = 256;
  size_t pitch = 0, offset = 0, bytes = 0;
  std::vector<unsigned char*> allocs;
  std::vector<unsigned char*> bufs;  // allocs + offset
  std::vector<uint32_t> ref_first, ref_last;
  uint32_t* d_out = nullptr;
  uint32_t* d_sink = nullptr;

  PlaneRef ref(int i) const {
    PlaneRef r;
    r.data = bufs[i];
    r.width = w;
    r.height = h;
    r.pitch = pitch;
    r.bytes_per_sample = bps;
    r.bit_depth = depth;
    r.memory = MemoryKind::device;
    return r;
  }
  PlaneGeometry geom(int i) const { return hist::detail::make_geometry(ref(i)); }
  int n() const { return static_cast<int>(bufs.size()); }
  ~Case() {
    for (auto* p : allocs) cudaFree(p);
    if (d_out) cudaFree(d_out);
    if (d_sink) cudaFree(d_sink);
  }
};

std::vector<uint32_t> reference(const Case& c, int i) {
  uint32_t* d;
  CK(cudaMalloc(&d, 4 * c.bins));
  CK(cudaMemsetAsync(d, 0, 4 * c.bins, g_stream));
  const uint32_t limit = 1u << c.depth;
  const uint32_t shift = static_cast<uint32_t>(c.depth - hist::bins_log2(c.bins));
  if (c.bps == 1) ref_kernel<uint8_t><<<g_sms * 4, 256, 0, g_stream>>>(c.bufs[i], c.w, c.h, c.pitch, shift, limit, c.bins, d);
  else ref_kernel<uint16_t><<<g_sms * 4, 256, 0, g_stream>>>(c.bufs[i], c.w, c.h, c.pitch, shift, limit, c.bins, d);
  std::vector<uint32_t> h(c.bins);
  CK(cudaMemcpyAsync(h.data(), d, 4 * c.bins, cudaMemcpyDeviceToHost, g_stream));
  CK(cudaStreamSynchronize(g_stream));
  CK(cudaFree(d));
  return h;
}

// Fills `c` (already sized) with `nbuf` buffers of content `ct`; out_of_range sprinkles 16-bit
// values >= 2^depth (every 7th sample); nbuf = 0: enough buffers for twice the L2.
void build(Case& c, const Content& ct, int nbuf, bool out_of_range = false) {
  c.content = ct.name;
  const size_t span = c.pitch * c.h + c.offset + 64;
  c.bytes = static_cast<size_t>(c.w) * c.h * c.bps;
  if (nbuf == 0) nbuf = static_cast<int>(std::max<size_t>(3, (2 * g_l2 + span - 1) / span));
  for (int i = 0; i < nbuf; ++i) {
    unsigned char* p;
    CK(cudaMalloc(&p, span));
    CK(cudaMemsetAsync(p, 0x5A, span, g_stream));
    c.allocs.push_back(p);
    c.bufs.push_back(p + c.offset);
    const uint32_t seed = 1000u + static_cast<uint32_t>(i);
    if (c.bps == 1) {
      PlaneView<uint8_t> v{c.bufs.back(), c.w, c.h, c.pitch, c.depth, MemoryKind::device};
      CKS(synth::fill_device(v, ct.pattern, seed, ct.value, g_stream));
    } else {
      PlaneView<uint16_t> v{reinterpret_cast<uint16_t*>(c.bufs.back()), c.w, c.h, c.pitch, c.depth, MemoryKind::device};
      CKS(synth::fill_device(v, ct.pattern, seed, ct.value, g_stream));
      if (out_of_range) {
        // every 7th sample of every row past the depth, on the host (small planes only)
        std::vector<uint16_t> host(c.pitch / 2 * c.h);
        CK(cudaMemcpyAsync(host.data(), c.bufs.back(), c.pitch * c.h, cudaMemcpyDeviceToHost, g_stream));
        CK(cudaStreamSynchronize(g_stream));
        for (int y = 0; y < c.h; ++y)
          for (int x = y % 7; x < c.w; x += 7)
            host[y * (c.pitch / 2) + x] = static_cast<uint16_t>((1u << c.depth) + synth::hash_xy(x, y, 99) % (65536u - (1u << c.depth)));
        CK(cudaMemcpyAsync(c.bufs.back(), host.data(), c.pitch * c.h, cudaMemcpyHostToDevice, g_stream));
      }
    }
  }
  CK(cudaStreamSynchronize(g_stream));
  c.ref_first = reference(c, 0);
  c.ref_last = reference(c, c.n() - 1);
  CK(cudaMalloc(&c.d_out, 4 * 1024));
  CK(cudaMalloc(&c.d_sink, 4));
}

Case make_size(const std::string& s, int bps, int depth) {
  Case c;
  c.size = s;
  c.bps = bps;
  c.depth = depth;
  c.bins = 1 << depth;
  if (s == "1080p") c.w = 1920, c.h = 1080;
  else if (s == "4k") c.w = 3840, c.h = 2160;
  else if (s == "8k") c.w = 8192, c.h = 8192;
  else if (s == "1g") c.w = 32768, c.h = 32768;
  else std::sscanf(s.c_str(), "%dx%d", &c.w, &c.h);
  c.pitch = static_cast<size_t>(c.w) * bps;
  return c;
}

// Scratch for the device-wide merge: acc (1024 x 32 words), ticket, partials (4096 blocks x 1024).
struct MergeScratch {
  uint32_t* acc = nullptr;
  uint32_t* ticket = nullptr;
  uint32_t* partials = nullptr;
  MergeScratch() {
    CK(cudaMalloc(&acc, 4 * (1024 * 32 + 1)));
    CK(cudaMemset(acc, 0, 4 * (1024 * 32 + 1)));
    ticket = acc + 1024 * 32;
    CK(cudaMalloc(&partials, size_t{4} * 4096 * 1024));
    CK(cudaDeviceSynchronize());
  }
  Scratch get(int mode) const {  // 0: RED stride 32, 1: RED stride 1, 2: partials
    Scratch s;
    s.acc = acc;
    s.acc_stride = mode == 1 ? 1 : 32;
    s.partials = mode == 2 ? partials : nullptr;
    s.ticket = ticket;
    return s;
  }
};
const char* mode_name(int m) { return m == 0 ? "red32" : m == 1 ? "red1" : "partials"; }

MergeScratch* g_merge = nullptr;

// Checks a histogram launch on the first and last buffer. Returns "ok" or what differs.
std::string check(const Case& c, const std::function<void(int)>& launch) {
  for (int which : {0, c.n() - 1}) {
    CK(cudaMemsetAsync(c.d_out, 0xA5, 4 * 1024, g_stream));
    launch(which);
    std::vector<uint32_t> h(c.bins);
    CK(cudaMemcpyAsync(h.data(), c.d_out, 4 * c.bins, cudaMemcpyDeviceToHost, g_stream));
    const cudaError_t e = cudaStreamSynchronize(g_stream);
    if (e != cudaSuccess) {
      std::fprintf(stderr, "CUDA error: %s\n", cudaGetErrorString(e));
      std::exit(1);
    }
    const auto& ref = which == 0 ? c.ref_first : c.ref_last;
    for (int b = 0; b < c.bins; ++b)
      if (h[b] != ref[b]) return "FAILED bin " + std::to_string(b) + " got " + std::to_string(h[b]) + " want " + std::to_string(ref[b]);
  }
  return "ok";
}

std::string fmt(const char* f, ...) {
  char b[512];
  va_list a;
  va_start(a, f);
  std::vsnprintf(b, sizeof(b), f, a);
  va_end(a);
  return b;
}

// Measures variant v on c with (blocks, warps, mode, pass); emits a line; returns the stats.
Stats measure_hist(const std::string& stage, const Case& c, const HistVariant& v, int blocks, int warps, int mode,
                   uint32_t pass = 0, const std::string& tag0 = "", bool pf = false) {
  const std::string tag = tag0 + (pf ? "+pf" : "");
  if (pass == 0) pass = v.pass_units;
  if (warps > v.max_warps || v.smem(warps) > g_optin) return {};
  const Scratch s = g_merge->get(mode);
  auto launch = [&](int i) {
    CK(v.launch(c.geom(i), static_cast<uint32_t>(c.bins), pass, blocks, warps, s, pf, c.d_out, g_stream));
  };
  const std::string st = check(c, launch);
  Stats t;
  if (st == "ok") t = time_runs(launch, c.n());
  emit(fmt("%s,%s,%s,%s,%d,%d,%s,%s,%.2f,%.2f,%.1f,%s", stage.c_str(), c.size.c_str(), c.content.c_str(), v.name.c_str(), blocks,
           warps, mode_name(mode), tag.c_str(), t.med, t.p99, t.med > 0 ? c.bytes / (t.med * 1e3) : 0.0, st.c_str()));
  return t;
}

Stats measure_cub(const std::string& stage, const Case& c) {
  static void* temp = nullptr;
  static size_t have = 0;
  const int levels = c.bins + 1, upper = 1 << c.depth;
  auto run = [&](int i) {
    size_t need = 0;
    if (c.bps == 1) {
      CK(cub::DeviceHistogram::HistogramEven(nullptr, need, c.bufs[i], c.d_out, levels, 0, upper, (int64_t)c.w * c.h, (int64_t)1,
                                             c.pitch * c.h, g_stream));
    } else {
      CK(cub::DeviceHistogram::HistogramEven(nullptr, need, reinterpret_cast<const uint16_t*>(c.bufs[i]), c.d_out, levels, 0,
                                             upper, (int64_t)c.w * c.h, (int64_t)1, c.pitch * c.h, g_stream));
    }
    if (need > have) {
      CK(cudaStreamSynchronize(g_stream));
      if (temp) CK(cudaFree(temp));
      CK(cudaMalloc(&temp, need));
      have = need;
    }
    if (c.bps == 1) {
      CK(cub::DeviceHistogram::HistogramEven(temp, have, c.bufs[i], c.d_out, levels, 0, upper, (int64_t)c.w * c.h, (int64_t)1,
                                             c.pitch * c.h, g_stream));
    } else {
      CK(cub::DeviceHistogram::HistogramEven(temp, have, reinterpret_cast<const uint16_t*>(c.bufs[i]), c.d_out, levels, 0,
                                             upper, (int64_t)c.w * c.h, (int64_t)1, c.pitch * c.h, g_stream));
    }
  };
  const std::string st = check(c, run);
  Stats t;
  if (st == "ok") t = time_runs(run, c.n());
  emit(fmt("%s,%s,%s,cub,0,0,-,,%.2f,%.2f,%.1f,%s", stage.c_str(), c.size.c_str(), c.content.c_str(), t.med, t.p99,
           t.med > 0 ? c.bytes / (t.med * 1e3) : 0.0, st.c_str()));
  return t;
}

Stats measure_ceiling(const std::string& stage, const Case& c) {
  size_t bytes = 0;
  auto run = [&](int i) {
    auto b = hist::read_ceiling(c.ref(i), c.d_sink, g_stream);
    CKS(b.status());
    bytes = *b;
  };
  Stats t = time_runs(run, c.n());
  emit(fmt("%s,%s,%s,read_ceiling,0,8,-,,%.2f,%.2f,%.1f,ok", stage.c_str(), c.size.c_str(), c.content.c_str(), t.med, t.p99,
           bytes / (t.med * 1e3)));
  return t;
}

const HistVariant* find_hist(const std::string& name) {
  for (const auto& v : hist_variants())
    if (v.name == name) return &v;
  return nullptr;
}

// ---------------------------------------------------------------------------------------------
// Stage 0: correctness on odd shapes.

struct Shape {
  std::string name;
  int w, h, bps, depth;
  size_t pitch, offset;
  std::string content;
  bool oor;
  int blocks;      // 0: plan (1 per SM, max warps)
  uint32_t pass;   // 0: the variant's
  int big;         // 1: skipped under --sanitize; 2: only under --sanitize
};

std::vector<Shape> shapes(int bps) {
  if (bps == 1)
    return {{"31x17", 31, 17, 1, 8, 31, 0, "uniform", false, 0, 0, 0},
            {"1x1", 1, 1, 1, 8, 1, 0, "natural", false, 0, 0, 0},
            {"1921x1081_pitch2048", 1921, 1081, 1, 8, 2048, 0, "natural", false, 0, 0, 1},
            {"1920x1081_pitch1925_off3", 1920, 1081, 1, 8, 1925, 3, "uniform", false, 0, 0, 1},
            {"385x217_pitch512", 385, 217, 1, 8, 512, 0, "natural", false, 0, 0, 2},
            {"384x217_pitch389_off3", 384, 217, 1, 8, 389, 3, "uniform", false, 0, 0, 2},
            {"1x4097_pitch64", 1, 4097, 1, 8, 64, 0, "natural", false, 0, 0, 0},
            {"1921x1081_2blocks_pass3", 1921, 1081, 1, 8, 1921, 0, "natural", false, 2, 3, 1},
            {"385x217_2blocks_pass3", 385, 217, 1, 8, 385, 0, "natural", false, 2, 3, 2},
            {"8192x8192_degenerate_1block", 8192, 8192, 1, 8, 8192, 0, "degenerate", false, 1, 0, 1}};
  return {{"u16_31x17", 31, 17, 2, 10, 62, 0, "uniform", false, 0, 0, 0},
          {"u16_1921x1081_oor", 1921, 1081, 2, 10, 3842, 0, "uniform", true, 0, 0, 1},
          {"u16_1920x1081_pitch3904_off2", 1920, 1081, 2, 10, 3904, 2, "natural", false, 0, 0, 1},
          {"u16_1921x1081_2blocks_pass3", 1921, 1081, 2, 10, 3842, 0, "natural", true, 2, 3, 1},
          {"u16_385x217_oor", 385, 217, 2, 10, 770, 0, "uniform", true, 0, 0, 2},
          {"u16_384x217_pitch832_off2", 384, 217, 2, 10, 832, 2, "natural", false, 0, 0, 2},
          {"u16_385x217_2blocks_pass3", 385, 217, 2, 10, 770, 0, "natural", true, 2, 3, 2},
          {"u16_4096x4096_degenerate_1block", 4096, 4096, 2, 10, 8192, 0, "degenerate", false, 1, 0, 1}};
}

bool stage0(bool sanitize) {
  bool ok = true;
  for (int bps : {1, 2}) {
    for (const auto& sh : shapes(bps)) {
      if ((sanitize && sh.big == 1) || (!sanitize && sh.big == 2)) continue;
      Case c;
      c.size = sh.name;
      c.w = sh.w, c.h = sh.h, c.bps = bps, c.depth = sh.depth, c.bins = 1 << sh.depth;
      c.pitch = sh.pitch, c.offset = sh.offset;
      build(c, content(sh.content, sh.depth), 2, sh.oor);
      std::string last_bits;
      for (const auto& v : hist_variants()) {
        if (v.bytes_per_sample != bps) continue;
        // under the sanitizer one instance per counter width and ILP is enough
        if (sanitize && (v.unroll != 4 || !v.prefetch || v.ilp != 2)) continue;
        const uint32_t pass = sh.pass ? sh.pass : v.pass_units;
        for (int mode : {0, 2}) {
          if (mode == 2 && (sh.big == 1 || sanitize)) continue;
          const int warps = v.max_warps;
          const int blocks = sh.blocks ? sh.blocks : g_sms;
          const Scratch s = g_merge->get(mode);
          const std::string st = check(c, [&](int i) {
            CK(v.launch(c.geom(i), static_cast<uint32_t>(c.bins), pass, blocks, warps, s, mode == 0, c.d_out, g_stream));
          });
          if (st != "ok") ok = false;
          emit(fmt("0,%s,%s,%s,%d,%d,%s,,0,0,0,%s", c.size.c_str(), c.content.c_str(), v.name.c_str(), blocks, warps, mode_name(mode),
                   st.c_str()));
        }
      }
    }
  }
  // Fused vs the CPU equalizer (host build_lut + apply_lut), whole allocation compared (padding
  // and bytes around the plane untouched), three calls on one scratch, several strengths.
  auto fe = eq::FusedEqualizer::create();
  if (!fe) {
    std::fprintf(stderr, "%s\n", fe.status().to_string().c_str());
    std::exit(1);
  }
  struct FShape {
    std::string name;
    int w, h, bps, depth;
    size_t pitch, offset;
    std::string content;
    bool oor;
    int max_blocks;
    bool big;
  };
  const std::vector<FShape> fshapes = {
      {"31x17", 31, 17, 1, 8, 31, 0, "uniform", false, 0, false},
      {"1x1", 1, 1, 1, 8, 1, 0, "degenerate", false, 0, false},
      {"1921x1081_pitch2048", 1921, 1081, 1, 8, 2048, 0, "natural", false, 0, true},
      {"1920x1081_pitch1925_off3", 1920, 1081, 1, 8, 1925, 3, "natural", false, 0, true},
      {"385x217_pitch400_off3", 385, 217, 1, 8, 400, 3, "natural", false, 0, false},
      {"1920x1080_degenerate", 1920, 1080, 1, 8, 1920, 0, "degenerate", false, 0, true},
      {"1920x1080_3blocks", 1920, 1080, 1, 8, 1920, 0, "gaussian8", false, 3, true},
      {"384x216_3blocks", 384, 216, 1, 8, 384, 0, "gaussian8", false, 3, false},
      {"u16_1921x1081_oor", 1921, 1081, 2, 10, 3842, 0, "natural", true, 0, true},
      {"u16_385x217_oor", 385, 217, 2, 10, 770, 0, "natural", true, 0, false},
      {"u16_33x7_pitch68_off6", 33, 7, 2, 10, 68, 6, "uniform", false, 0, false},
      {"u16_1920x1080", 1920, 1080, 2, 10, 3840, 0, "gaussian8", false, 0, true},
  };
  for (const auto& fs : fshapes) {
    if (sanitize && fs.big) continue;
    Case c;
    c.size = fs.name;
    c.w = fs.w, c.h = fs.h, c.bps = fs.bps, c.depth = fs.depth, c.bins = 1 << fs.depth;
    c.pitch = fs.pitch, c.offset = fs.offset;
    build(c, content(fs.content, fs.depth), 1, fs.oor);
    const size_t span = c.pitch * c.h + c.offset + 64;
    std::vector<unsigned char> orig(span);
    CK(cudaMemcpy(orig.data(), c.allocs[0], span, cudaMemcpyDeviceToHost));
    for (const auto& v : fused_variants()) {
      if (v.bytes_per_sample != fs.bps) continue;
      if (sanitize && (v.name.find("_a8") == std::string::npos || v.name.find("_k2_u4p") == std::string::npos)) continue;
      for (uint32_t w : {eq::kWeightOne, 24248u}) {
        if (sanitize && w != eq::kWeightOne) continue;
        std::string st = "ok";
        // CPU truth
        std::vector<unsigned char> want = orig;
        std::vector<uint32_t> counts(c.bins, 0);
        for (int y = 0; y < c.h; ++y)
          for (int x = 0; x < c.w; ++x) {
            const unsigned char* p = want.data() + c.offset + y * c.pitch + x * c.bps;
            const uint32_t val = c.bps == 1 ? *p : *reinterpret_cast<const uint16_t*>(p);
            if (val < static_cast<uint32_t>(c.bins)) ++counts[val];
          }
        std::vector<uint16_t> lut(c.bins);
        CKS(eq::build_lut(counts.data(), c.bins, w, lut.data()));
        if (c.bps == 1)
          CKS(eq::apply_lut(PlaneView<uint8_t>{want.data() + c.offset, c.w, c.h, c.pitch, 8, MemoryKind::host}, lut.data(), c.bins));
        else
          CKS(eq::apply_lut(PlaneView<uint16_t>{reinterpret_cast<uint16_t*>(want.data() + c.offset), c.w, c.h, c.pitch, c.depth,
                                                MemoryKind::host}, lut.data(), c.bins));
        uint32_t* d_hist;
        uint16_t* d_lut;
        CK(cudaMalloc(&d_hist, 4096));
        CK(cudaMalloc(&d_lut, 2048));
        for (int call = 0; call < 2 && st == "ok"; ++call) {
          // on the launch's stream: a legacy-stream memset is not ordered with it
          CK(cudaMemcpyAsync(c.allocs[0], orig.data(), span, cudaMemcpyHostToDevice, g_stream));
          CK(cudaMemsetAsync(d_hist, 0xA5, 4096, g_stream));
          CK(cudaMemsetAsync(d_lut, 0xA5, 2048, g_stream));
          eq::FusedLaunch rec;
          const Status s = v.launch(fe->scratch(), c.bufs[0], c.w, c.h, c.pitch, c.depth, w, {d_hist, d_lut}, 8, 0,
                                    fs.max_blocks, g_stream, &rec);
          if (!s) {
            st = "error " + s.to_string();
            break;
          }
          CK(cudaStreamSynchronize(g_stream));
          std::vector<unsigned char> got(span);
          CK(cudaMemcpy(got.data(), c.allocs[0], span, cudaMemcpyDeviceToHost));
          std::vector<uint32_t> gh(c.bins);
          std::vector<uint16_t> gl(c.bins);
          CK(cudaMemcpy(gh.data(), d_hist, 4 * c.bins, cudaMemcpyDeviceToHost));
          CK(cudaMemcpy(gl.data(), d_lut, 2 * c.bins, cudaMemcpyDeviceToHost));
          if (gh != counts) st = "FAILED histogram (call " + std::to_string(call) + ")";
          else if (gl != lut) st = "FAILED lut (call " + std::to_string(call) + ")";
          else
            for (size_t i = 0; i < span; ++i)
              if (got[i] != want[i]) {
                st = "FAILED byte " + std::to_string(i) + " (call " + std::to_string(call) + ")";
                break;
              }
        }
        CK(cudaFree(d_hist));
        CK(cudaFree(d_lut));
        if (st != "ok") ok = false;
        emit(fmt("0f,%s,%s,%s,%d,0,-,w%u,0,0,0,%s", c.size.c_str(), c.content.c_str(), v.name.c_str(), fs.max_blocks, w, st.c_str()));
      }
    }
  }
  return ok;
}

// ---------------------------------------------------------------------------------------------

std::vector<std::string> g_best;  // best 8-bit instance per counter width (stage A)

void stageA() {
  std::map<std::string, double> worst;  // instance -> max median over the 1 GiB contents
  for (const std::string size : {"1g", "8k"}) {
    const std::vector<std::string> contents = size == "1g" ? std::vector<std::string>{"uniform", "degenerate", "natural", "gaussian8"}
                                                           : std::vector<std::string>{"uniform", "degenerate"};
    for (const auto& cn : contents) {
      Case c = make_size(size, 1, 8);
      build(c, content(cn, 8), 0);
      measure_ceiling("A", c);
      measure_cub("A", c);
      for (const auto& v : hist_variants()) {
        if (v.bytes_per_sample != 1) continue;
        int warps = v.max_warps;
        while (warps > 1 && v.smem(warps) > g_optin) --warps;
        const Stats t = measure_hist("A", c, v, g_sms, warps, 0);
        if (size == "1g") worst[v.name] = std::max(worst[v.name], t.med > 0 ? t.med : 1e9);
      }
    }
  }
  for (int bits : {8, 16, 32}) {
    std::string best;
    double bt = 1e18;
    for (const auto& v : hist_variants())
      if (v.bytes_per_sample == 1 && v.bits == bits && worst.count(v.name) && worst[v.name] < bt) bt = worst[v.name], best = v.name;
    if (!best.empty()) {
      g_best.push_back(best);
      emit(fmt("bestA,%d,%s,%.2f", bits, best.c_str(), bt));
    }
  }
}

void stageB() {
  std::vector<std::string> names = g_best;
  for (const char* n : {"h8_cw16_k2_u4p", "h8_cw16_k1_u4p"})
    if (std::find(names.begin(), names.end(), n) == names.end()) names.push_back(n);
  for (const std::string size : {"1080p", "4k", "8k"}) {
    for (const std::string cn : {"uniform", "degenerate", "natural", "gaussian8"}) {
      Case c = make_size(size, 1, 8);
      build(c, content(cn, 8), 0);
      measure_ceiling("B", c);
      measure_cub("B", c);
      for (const auto& name : names) {
        const HistVariant* v = find_hist(name);
        if (!v) continue;
        int maxw = v->max_warps;
        while (maxw > 1 && v->smem(maxw) > g_optin) --maxw;
        for (int w : {2, 4, 6, 8, 10, 12, 14, 16, 20, 24, 28}) {
          if (w > maxw) break;
          measure_hist("B", c, *v, g_sms, w, 0, 0, "w", true);
        }
        const uint64_t units = c.geom(0).total_units();
        for (int upl : {1, 2, 4, 8, 16}) {
          const hist::m2t::Plan p = hist::m2t::plan_for(units, g_sms, maxw, upl, 0);
          for (bool pf : {true, false}) measure_hist("B", c, *v, p.blocks, p.warps, 0, 0, "upl" + std::to_string(upl), pf);
          if (upl == 4)
            for (int mode : {1, 2}) measure_hist("B", c, *v, p.blocks, p.warps, mode, 0, "upl4", true);
        }
      }
    }
  }
}

void stageC() {
  for (const std::string size : {"1080p", "4k"}) {
    for (const std::string cn : {"uniform", "degenerate", "natural", "gaussian8"}) {
      Case c = make_size(size, 2, 10);
      build(c, content(cn, 10), 0);
      measure_ceiling("C", c);
      measure_cub("C", c);
      for (const auto& v : hist_variants()) {
        if (v.bytes_per_sample != 2) continue;
        for (int w = 1; w <= v.max_warps; ++w) measure_hist("C", c, v, g_sms, w, 0, 0, "w", true);
        const uint64_t units = c.geom(0).total_units();
        for (int upl : {2, 4, 8, 16}) {
          const hist::m2t::Plan p = hist::m2t::plan_for(units, g_sms, v.max_warps, upl, 0);
          for (bool pf : {true, false}) measure_hist("C", c, v, p.blocks, p.warps, 0, 0, "upl" + std::to_string(upl), pf);
        }
      }
    }
  }
}

// The unfused path: a histogram (cub or an m2t instance) + build_lut_gpu + apply_lut_gpu.
void stageD() {
  auto fe = eq::FusedEqualizer::create();
  if (!fe) std::exit(1);
  uint16_t* d_lut;
  CK(cudaMalloc(&d_lut, 2048));
  const HistVariant* h8 = find_hist("h8_cw16_k2_u4p");
  for (int depth : {8, 10}) {
    const int bps = depth == 8 ? 1 : 2;
    for (const std::string size : {"1080p", "4k"}) {
      for (const std::string cn : {"uniform", "degenerate", "natural", "gaussian8"}) {
        Case c = make_size(size, bps, depth);
        build(c, content(cn, depth), 0);
        const uint32_t weight = eq::kWeightOne;
        auto apply = [&](int i) {
          if (bps == 1) CKS(eq::apply_lut_gpu(PlaneView<uint8_t>{c.bufs[i], c.w, c.h, c.pitch, 8, MemoryKind::device}, d_lut, c.bins, g_stream));
          else CKS(eq::apply_lut_gpu(PlaneView<uint16_t>{reinterpret_cast<uint16_t*>(c.bufs[i]), c.w, c.h, c.pitch, depth, MemoryKind::device},
                                     d_lut, c.bins, g_stream));
        };
        // unfused with cub
        {
          static void* temp = nullptr;
          static size_t have = 0;
          auto run = [&](int i) {
            size_t need = 0;
            if (bps == 1) CK(cub::DeviceHistogram::HistogramEven(nullptr, need, c.bufs[i], c.d_out, c.bins + 1, 0, c.bins, (int64_t)c.w * c.h, (int64_t)1, c.pitch * c.h, g_stream));
            else CK(cub::DeviceHistogram::HistogramEven(nullptr, need, reinterpret_cast<const uint16_t*>(c.bufs[i]), c.d_out, c.bins + 1, 0, c.bins, (int64_t)c.w * c.h, (int64_t)1, c.pitch * c.h, g_stream));
            if (need > have) {
              CK(cudaStreamSynchronize(g_stream));
              if (temp) CK(cudaFree(temp));
              CK(cudaMalloc(&temp, need));
              have = need;
            }
            if (bps == 1) CK(cub::DeviceHistogram::HistogramEven(temp, have, c.bufs[i], c.d_out, c.bins + 1, 0, c.bins, (int64_t)c.w * c.h, (int64_t)1, c.pitch * c.h, g_stream));
            else CK(cub::DeviceHistogram::HistogramEven(temp, have, reinterpret_cast<const uint16_t*>(c.bufs[i]), c.d_out, c.bins + 1, 0, c.bins, (int64_t)c.w * c.h, (int64_t)1, c.pitch * c.h, g_stream));
            CKS(eq::build_lut_gpu(c.d_out, c.bins, weight, d_lut, g_stream));
            apply(i);
          };
          Stats t = time_runs(run, c.n());
          emit(fmt("D,%s_%dbit,%s,unfused_cub,0,0,-,,%.2f,%.2f,0,ok", size.c_str(), depth, cn.c_str(), t.med, t.p99));
        }
        // unfused with the m2t instance
        {
          const HistVariant* hv = bps == 1 ? h8 : find_hist("h10_cw16_k4_u4p");
          if (hv) {
            int maxw = hv->max_warps;
            while (maxw > 1 && hv->smem(maxw) > g_optin) --maxw;
            const hist::m2t::Plan p = hist::m2t::plan_for(c.geom(0).total_units(), g_sms, maxw, 4, 0);
            const Scratch s = g_merge->get(0);
            auto run = [&](int i) {
              CK(hv->launch(c.geom(i), c.bins, hv->pass_units, p.blocks, p.warps, s, true, c.d_out, g_stream));
              CKS(eq::build_lut_gpu(c.d_out, c.bins, weight, d_lut, g_stream));
              apply(i);
            };
            Stats t = time_runs(run, c.n());
            emit(fmt("D,%s_%dbit,%s,unfused_%s,%d,%d,-,,%.2f,%.2f,0,ok", size.c_str(), depth, cn.c_str(), hv->name.c_str(), p.blocks,
                     p.warps, t.med, t.p99));
          }
        }
        // fused, each instance and grid
        for (const auto& v : fused_variants()) {
          if (v.bytes_per_sample != bps) continue;
          for (int upl : {2, 4, 8}) {
            eq::FusedLaunch rec;
            bool failed = false;
            auto run = [&](int i) {
              const Status s = v.launch(fe->scratch(), c.bufs[i], c.w, c.h, c.pitch, depth, weight, {}, upl, 0, 0, g_stream, &rec);
              if (!s) {
                std::fprintf(stderr, "%s\n", s.to_string().c_str());
                failed = true;
              }
            };
            Stats t = time_runs(run, c.n());
            emit(fmt("D,%s_%dbit,%s,%s,%d,%d,-,upl%d,%.2f,%.2f,0,%s", size.c_str(), depth, cn.c_str(), v.name.c_str(), rec.blocks,
                     rec.warps, upl, t.med, t.p99, failed ? "error" : "ok"));
          }
        }
      }
    }
  }
  CK(cudaFree(d_lut));
}

}  // namespace
}  // namespace sweep

int main(int argc, char** argv) {
  using namespace sweep;
  if (argc < 2) {
    std::fprintf(stderr, "usage: sweep OUTDIR [--stages 0ABCD] [--runs N] [--sanitize] [--profile NAME]\n");
    return 2;
  }
  std::string out = argv[1], stages = "0ABCD", profile;
  bool sanitize = false;
  for (int i = 2; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--stages" && i + 1 < argc) stages = argv[++i];
    else if (a == "--runs" && i + 1 < argc) g_runs = std::atoi(argv[++i]);
    else if (a == "--sanitize") sanitize = true;
    else if (a == "--profile" && i + 1 < argc) profile = argv[++i];
  }
  cudaDeviceProp prop;
  CK(cudaGetDeviceProperties(&prop, 0));
  g_sms = prop.multiProcessorCount;
  g_l2 = prop.l2CacheSize;
  g_optin = prop.sharedMemPerBlockOptin;
  CK(cudaStreamCreateWithFlags(&g_stream, cudaStreamNonBlocking));
  int clock_khz = 0, mem_khz = 0;
  CK(cudaDeviceGetAttribute(&clock_khz, cudaDevAttrClockRate, 0));
  CK(cudaDeviceGetAttribute(&mem_khz, cudaDevAttrMemoryClockRate, 0));
  std::printf("device %s, %d SMs, L2 %zu MiB, smem optin %zu, clock %d MHz, mem clock %d MHz, bus %d bits\n", prop.name, g_sms,
              g_l2 >> 20, g_optin, clock_khz / 1000, mem_khz / 1000, prop.memoryBusWidth);
  std::printf("%zu hist instances, %zu fused instances\n", hist_variants().size(), fused_variants().size());
  for (const auto& v : hist_variants()) std::printf("  %s max_warps %d pass %u\n", v.name.c_str(), v.max_warps, v.pass_units);
  MergeScratch merge;
  g_merge = &merge;
  if (!profile.empty()) {
    const HistVariant* v = find_hist(profile);
    if (!v) return 2;
    Case c = make_size("16384x16384", 1, 8);
    build(c, content("uniform", 8), 1);
    int w = v->max_warps;
    while (w > 1 && v->smem(w) > g_optin) --w;
    for (int i = 0; i < 3; ++i) CK(v->launch(c.geom(0), 256, v->pass_units, g_sms, w, merge.get(0), false, c.d_out, g_stream));
    CK(cudaStreamSynchronize(g_stream));
    return 0;
  }
  g_csv = std::fopen((out + (sanitize ? "/sanitize.csv" : "/sweep.csv")).c_str(), "w");
  std::fprintf(g_csv, "stage,size,content,variant,blocks,warps,mode,tag,median_us,p99_us,gbps,status\n");
  bool ok = true;
  if (sanitize) {
    ok = stage0(true);
    std::printf("sanitize run %s\n", ok ? "ok" : "FAILED");
    return ok ? 0 : 1;
  }
  if (stages.find('0') != std::string::npos) {
    ok = stage0(false);
    std::printf("stage 0 %s\n", ok ? "ok" : "FAILED");
  }
  if (stages.find('A') != std::string::npos) stageA();
  if (stages.find('B') != std::string::npos) stageB();
  if (stages.find('C') != std::string::npos) stageC();
  if (stages.find('D') != std::string::npos) stageD();
  std::fclose(g_csv);
  std::printf("done %s\n", ok ? "ok" : "with failures");
  return ok ? 0 : 1;
}
