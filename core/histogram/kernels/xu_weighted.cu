// Weighted histograms after Xu, Xu, Zhao, Hsu, "Efficient Weighted Histogramming on GPUs with CUDA"
// (Microsoft Research Asia), section 4: collision_free (§4.2), collision (§4.3), collision_reduced
// (§4.4, algorithm 2) and hybrid (§4.5, table 1). Each computes histogram.h's 32-bit counts and,
// given a weight plane, every bin's weight sum (the paper's λ sums, algorithm 1); without weights
// they are ordinary histogram kernels.
//
//  - collision_free: every thread owns a histogram of 16-bit counts and float weights in shared
//    memory; no atomics in the hot loop; the block sums its threads' histograms at the end.
//  - collision: one histogram per block in shared memory, a shared atomic per sample (and per weight).
//    On sm_90 the count increment is ATOMS.POPC.INC (a warp's increments of one address merge in
//    hardware), so one-value data serializes only the weights' CAS loop, not the counts.
//  - collision_reduced: algorithm 2. Each thread first files a round of samples into its own small
//    hash buffer (slots of value << 16 | count plus the slot's weight sum, hash (value + thread) mod
//    N_buffer, linear probing), then adds each occupied slot to the block histogram with one atomic:
//    equal values of a round cost one atomic, and different threads file one value in different
//    slots, so they reach the block histogram at different times.
//  - hybrid: collision_free for small bin counts; otherwise times collision and collision_reduced on
//    its first two calls and keeps the faster (the paper's "first round"; policy::XuHybrid).
//
// Adapted for today's GPUs (the paper ran a GTX 580: 16 SMs, 48 KB of shared memory, one block per
// feature):
//  - persistent grids from the occupancy calculator: a block loops over many 16-byte units and adds
//    its histogram to the output once, with global atomics (the paper gave a block one feature, or
//    one round of N_buffer x N_thread documents for algorithm 2, and merged sub-histograms with a
//    second kernel);
//  - the device's real shared memory: collision_free keeps up to 256 bins (48 KB per warp, 4 warps
//    per Hopper SM, the occupancy the paper had at 64 bins) where the paper stopped at 128 (table 5);
//    threads per block follow the bin count so that small counts still fill the SM;
//  - weights: Hopper has no shared-memory float atomic add (atomicAdd(float*) on shared memory is an
//    LDS / FADD / ATOMS.CAST.SPIN loop in sm_90 SASS, and double is the same loop at 64 bits), so the
//    block histograms of collision and collision_reduced hold double weight sums at the same
//    instruction count. Float stays where its chains are short: collision_reduced's slots (at most
//    N_buffer adds) and collision_free's private sums, which move into the block's double sum every
//    policy::XuCollisionFree::kWeightChain adds. Blocks add double sums into a device scratch and one
//    small kernel rounds them to float. A float sum of 20000 weights of 0.7 is already off by 1.8e-4
//    (every add rounds the same way); this keeps every bin within 1e-5 of the exact sum at any size;
//  - 16-bit counters: collision_free merges and clears every 65535 samples per thread (bounded
//    passes, as method2), so any plane size is exact;
//  - 16-byte loads of samples and of their weights, several units in flight: the paper's manual
//    unrolling for ILP (§4.2.3);
//  - the per-thread hash buffer lives in shared memory as in the paper ([N_buffer][threads], thread
//    t's slots in bank t); a register array indexed by the hash would go to local memory;
//  - algorithm 2's slips are corrected: the count field is 16 bits (the paper masks 0xFF), a new slot
//    is key << 16 | 1 (the paper's key << 16 + 1 is key << 17), and a slot's weight accumulates (the
//    paper overwrites it);
//  - §4.4.2's zero skipping is not used: it relies on a known dominant value, which video lacks.
#include "core/cuda/resources.h"
#include "core/histogram/kernels/weighted.cuh"

namespace histeq::hist {
namespace {

using namespace detail;
using CF = policy::XuCollisionFree;
using CO = policy::XuCollision;
using CR = policy::XuCollisionReduced;
using HY = policy::XuHybrid;

static_assert(CF::kWeightChain >= 32 && CF::kWeightChain <= 65536 && (CF::kWeightChain & (CF::kWeightChain - 1)) == 0,
              "the chain test reads a count modulo kWeightChain off a word holding two 16-bit counts");
static_assert(CF::kStepsPerPass8 * 16 <= 65535 && CF::kStepsPerPass16 * 8 <= 65535, "16-bit counters would overflow");
static_assert(CF::threads_for(CF::kMaxBins) % 32 == 0, "collision_free needs whole warps: thread t owns bank t");
static_assert(CR::warps_for(1024) * 32 <= CR::kMaxThreads, "launch bounds");

enum class Method { collision_free, collision, collision_reduced };

// One launch: the planes, the binning and the outputs. wsums (device doubles) is null without weights.
struct Job {
  PlaneGeometry g;
  WeightGeometry wg;
  BinMap m;
  int bins = 0;
  uint32_t* counts = nullptr;
  double* wsums = nullptr;
};

// Adds a block histogram to the outputs: one global atomic per non-empty bin (and one for its weight).
template <bool W>
__device__ __forceinline__ void add_block_histogram(const uint32_t* hc, const double* hw, const Job& j) {
  for (int b = threadIdx.x; b < j.bins; b += blockDim.x) {
    if (const uint32_t c = hc[b]) {
      atomicAdd(&j.counts[b], c);
      if constexpr (W) atomicAdd(&j.wsums[b], hw[b]);
    }
  }
}

// ---- §4.2 collision-free ---------------------------------------------------------------------------
// Shared memory: [double block_w[bins]] [float w[bins][nt]] (weighted only), then uint32 c[bins/2][nt]
// holding bins 2r (low half) and 2r + 1 (high half) of thread t in word r * nt + t. With nt a
// multiple of 32, all of thread t's words are in bank t % 32: no bank conflicts, whatever the data.
template <class T, bool W>
__global__ void __launch_bounds__(CF::kMaxThreads) collision_free_kernel(Job j) {
  extern __shared__ __align__(16) unsigned char smem[];
  constexpr uint32_t kPass = sizeof(T) == 1 ? CF::kStepsPerPass8 : CF::kStepsPerPass16;
  constexpr int U = W ? CF::kUnrollWeighted : CF::kUnroll;
  const uint32_t bins = static_cast<uint32_t>(j.bins);
  const uint32_t nt = blockDim.x;
  const uint32_t t = threadIdx.x;
  double* block_w = reinterpret_cast<double*>(smem);
  float* w_all = reinterpret_cast<float*>(smem + (W ? sizeof(double) * bins : 0));
  uint32_t* c_all = reinterpret_cast<uint32_t*>(smem + (W ? (sizeof(double) + sizeof(float) * nt) * bins : 0));
  uint32_t* c_mine = c_all + t;
  float* w_mine = w_all + t;

  auto clear = [&] {
    for (uint32_t r = 0; r < bins / 2; ++r) c_mine[r * nt] = 0;
    if constexpr (W) {
      for (uint32_t b = 0; b < bins; ++b) w_mine[b * nt] = 0.0f;
      for (uint32_t b = t; b < bins; b += nt) block_w[b] = 0.0;
    }
  };
  clear();
  __syncthreads();

  const uint32_t total = j.g.total_units();
  const uint32_t stride = gridDim.x * nt;
  const uint32_t block_first = blockIdx.x * nt;
  // Thread 0 has the most steps; all threads run the same passes so that they can merge together.
  const uint32_t block_steps = block_first < total ? (total - block_first + stride - 1) / stride : 0;
  UnitCursor cur = cursor_at(j.g, block_first + t);
  const UnitStep st = step_of(j.g, stride);
  // Lane l moves a bin's float sum to the block when the bin's count + 2l is a multiple of the chain
  // length: at most kWeightChain adds per float sum, and never 32 lanes on one bin at once.
  const uint32_t chain_offset = (t & 31u) * (CF::kWeightChain / 32);

  auto add = [&](uint32_t v, float w) {
    if (sizeof(T) == 1 || v < j.m.limit) {
      const uint32_t b = v >> j.m.shift;
      const uint32_t half = (b & 1u) << 4;
      uint32_t* cw = c_mine + (b >> 1) * nt;
      const uint32_t word = *cw + (1u << half);
      *cw = word;
      if constexpr (W) {
        float* pw = w_mine + b * nt;
        float s = *pw + w;
        // word >> half is this bin's count plus 65536 x its neighbour's: equal modulo the chain length.
        if ((((word >> half) + chain_offset) & (CF::kWeightChain - 1)) == 0) {
          atomicAdd(&block_w[b], static_cast<double>(s));
          s = 0.0f;
        }
        *pw = s;
      }
    }
  };
  auto no_hook = [] {};

  for (uint32_t done = 0; done < block_steps; done += kPass) {
    walk_weighted<T, U, W>(j.g, j.wg, cur, st, min(kPass, block_steps - done), add, no_hook);
    __syncthreads();
    // Thread t sums rows t, t + nt, ... over the nt columns, starting at column t: a warp reads 32
    // different banks (the paper's staggered summing, figure 1 step 2).
    for (uint32_t r = t; r < bins / 2; r += nt) {
      uint32_t lo = 0, hi = 0;
      double wlo = 0.0, whi = 0.0;
      const uint32_t* crow = c_all + r * nt;
      const float* wrow_lo = w_all + 2 * r * nt;
      const float* wrow_hi = wrow_lo + nt;
      for (uint32_t k = 0; k < nt; ++k) {
        const uint32_t col = (k + t) & (nt - 1);
        const uint32_t word = crow[col];
        lo += word & 0xFFFFu;
        hi += word >> 16;
        if constexpr (W) {
          wlo += wrow_lo[col];
          whi += wrow_hi[col];
        }
      }
      if (lo) {
        atomicAdd(&j.counts[2 * r], lo);
        if constexpr (W) atomicAdd(&j.wsums[2 * r], wlo + block_w[2 * r]);
      }
      if (hi) {
        atomicAdd(&j.counts[2 * r + 1], hi);
        if constexpr (W) atomicAdd(&j.wsums[2 * r + 1], whi + block_w[2 * r + 1]);
      }
    }
    if (done + kPass >= block_steps) break;  // nothing follows the last pass: skip the clear
    __syncthreads();
    clear();
    __syncthreads();
  }
}

// ---- §4.3 collision ----------------------------------------------------------------------------------
// Shared memory: [double hw[bins]] (weighted only), then uint32 hc[bins].
template <class T, bool W>
__global__ void __launch_bounds__(CO::kThreads) collision_kernel(Job j) {
  extern __shared__ __align__(16) unsigned char smem[];
  constexpr int U = W ? CO::kUnrollWeighted : CO::kUnroll;
  double* hw = reinterpret_cast<double*>(smem);
  uint32_t* hc = reinterpret_cast<uint32_t*>(smem + (W ? sizeof(double) * j.bins : 0));
  for (int b = threadIdx.x; b < j.bins; b += blockDim.x) {
    hc[b] = 0;
    if constexpr (W) hw[b] = 0.0;
  }
  __syncthreads();

  auto add = [&](uint32_t v, float w) {
    if (sizeof(T) == 1 || v < j.m.limit) {
      const uint32_t b = v >> j.m.shift;
      atomicAdd(&hc[b], 1u);
      if constexpr (W) atomicAdd(&hw[b], static_cast<double>(w));
    }
  };
  auto no_hook = [] {};
  UnitCursor cur = cursor_at(j.g, blockIdx.x * blockDim.x + threadIdx.x);
  walk_weighted<T, U, W>(j.g, j.wg, cur, step_of(j.g, gridDim.x * blockDim.x), 0xFFFFFFFFu, add, no_hook);
  __syncthreads();
  add_block_histogram<W>(hc, hw, j);
}

// ---- §4.4 collision-reduced (algorithm 2) ---------------------------------------------------------------
// Shared memory: [double hw[bins]] [float lambda[N][nt]] (weighted only), uint32 valcount[N][nt],
// uint32 hc[bins]. Thread t's buffer is column t of valcount / lambda (bank t). N = N_buffer = the
// samples of one 16-byte unit, and a round is one unit, so a free slot always exists.
// (min blocks 1: without it sm_90 ptxas capped registers and spilled the walk's loop counter.)
template <class T, bool W>
__global__ void __launch_bounds__(CR::kMaxThreads, 1) collision_reduced_kernel(Job j) {
  extern __shared__ __align__(16) unsigned char smem[];
  constexpr uint32_t N = kUnitSamples<T>;
  static_assert((N & (N - 1)) == 0 && N <= 0xFFFFu, "N_buffer: a power of two that fits the 16-bit count field");
  constexpr int U = W ? CR::kUnrollWeighted : CR::kUnroll;
  const uint32_t nt = blockDim.x;
  const uint32_t t = threadIdx.x;
  double* hw = reinterpret_cast<double*>(smem);
  float* lambda = reinterpret_cast<float*>(smem + (W ? sizeof(double) * j.bins : 0));
  uint32_t* valcount = reinterpret_cast<uint32_t*>(smem + (W ? sizeof(double) * j.bins + sizeof(float) * N * nt : 0));
  uint32_t* hc = valcount + N * nt;
  uint32_t* vc_mine = valcount + t;
  float* lambda_mine = lambda + t;
  for (int b = t; b < j.bins; b += nt) {
    hc[b] = 0;
    if constexpr (W) hw[b] = 0.0;
  }
#pragma unroll
  for (uint32_t i = 0; i < N; ++i) vc_mine[i * nt] = 0;
  __syncthreads();

  // Step 1.1: file the sample in this thread's buffer. A round holds at most N samples, so within N
  // probes a slot is empty (count field 0) or already holds the key.
  auto insert = [&](uint32_t v, float w) {
    if (sizeof(T) == 1 || v < j.m.limit) {
      const uint32_t key = v >> j.m.shift;
      uint32_t pos = (key + t) & (N - 1);
      // Each probe waits for the previous one's shared load: unrolling gains nothing, and 16 copies
      // per sample x 16 samples per unit only cost registers.
#pragma unroll 1
      for (uint32_t probe = 0; probe < N; ++probe) {
        const uint32_t e = vc_mine[pos * nt];
        if ((e & 0xFFFFu) == 0) {
          vc_mine[pos * nt] = key << 16 | 1u;
          if constexpr (W) lambda_mine[pos * nt] = w;
          break;
        }
        if ((e >> 16) == key) {
          vc_mine[pos * nt] = e + 1u;
          if constexpr (W) lambda_mine[pos * nt] += w;
          break;
        }
        pos = (pos + 1) & (N - 1);  // linear probing
      }
    }
  };
  // Step 1.2, after every round: each occupied slot goes to the block histogram with one atomic
  // (and one for its weight), and is emptied.
  auto flush = [&] {
#pragma unroll
    for (uint32_t i = 0; i < N; ++i) {
      const uint32_t e = vc_mine[i * nt];
      if (e & 0xFFFFu) {
        atomicAdd(&hc[e >> 16], e & 0xFFFFu);
        if constexpr (W) atomicAdd(&hw[e >> 16], static_cast<double>(lambda_mine[i * nt]));
        vc_mine[i * nt] = 0;
      }
    }
  };
  UnitCursor cur = cursor_at(j.g, blockIdx.x * nt + t);
  walk_weighted<T, U, W>(j.g, j.wg, cur, step_of(j.g, gridDim.x * nt), 0xFFFFFFFFu, insert, flush);
  __syncthreads();
  add_block_histogram<W>(hc, hw, j);
}

// The weight sums, accumulated in double, rounded once.
__global__ void sums_to_float(const double* __restrict__ sums, float* __restrict__ out, int bins) {
  for (int b = blockIdx.x * blockDim.x + threadIdx.x; b < bins; b += gridDim.x * blockDim.x)
    out[b] = static_cast<float>(sums[b]);
}

template <class T, bool W>
Status launch(Method method, const Job& j, const KernelOptions& opts, cudaStream_t stream) {
  const size_t bins = static_cast<size_t>(j.bins);
  const size_t wbytes = W ? sizeof(double) * bins : 0;  // the block's double weight sums
  void (*fn)(Job) = nullptr;
  int threads = 0;
  size_t smem = 0;
  int min_units = 1;
  switch (method) {
    case Method::collision_free:
      fn = collision_free_kernel<T, W>;
      threads = CF::threads_for(j.bins);
      smem = wbytes + (W ? sizeof(float) * bins * threads : 0) + sizeof(uint32_t) * (bins / 2) * threads;
      min_units = CF::kMinUnitsPerThread;
      break;
    case Method::collision:
      fn = collision_kernel<T, W>;
      threads = CO::kThreads;
      smem = wbytes + sizeof(uint32_t) * bins;
      min_units = CO::kMinUnitsPerThread;
      break;
    case Method::collision_reduced: {
      constexpr size_t n = kUnitSamples<T>;
      fn = collision_reduced_kernel<T, W>;
      threads = 32 * CR::warps_for(j.bins);
      smem = wbytes + (W ? sizeof(float) * n * threads : 0) + sizeof(uint32_t) * (n * threads + bins);
      min_units = CR::kMinUnitsPerThread;
      break;
    }
  }
  HISTEQ_TRY(allow_dynamic_smem(fn, smem));
  auto grid = grid_size(fn, threads, smem, j.g.total_units(), min_units, opts);
  if (!grid) return grid.status();
  fn<<<*grid, threads, smem, stream>>>(j);
  HISTEQ_CUDA_TRY_LAUNCH();
  return Status::ok();
}

// The four kernels share the call sequence; they differ in which method runs.
class XuKernel : public Kernel {
 public:
  XuKernel(const KernelInfo& info, KernelOptions opts) : Kernel(info, opts) {}
  Status run(const PlaneRef& in, const HistogramView& out, cudaStream_t stream) override {
    return execute(in, nullptr, out, stream);
  }
  Status run_weighted(const PlaneRef& in, const WeightsView& weights, const HistogramView& out,
                      cudaStream_t stream) override {
    return execute(in, &weights, out, stream);
  }

 protected:
  // The method for one call, and the events (if any) to record around its kernel.
  struct Choice {
    Method method;
    const cuda::Event* start = nullptr;
    const cuda::Event* stop = nullptr;
  };
  virtual Result<Choice> choose(const PlaneRef& in, bool weighted, int bins) = 0;

 private:
  Status execute(const PlaneRef& in, const WeightsView* weights, const HistogramView& out, cudaStream_t stream) {
    auto choice = choose(in, weights != nullptr, out.bins);
    if (!choice) return choice.status();
    const WeightedGeometry geo = make_weighted_geometry(in, weights);
    Job j;
    j.g = geo.g;
    j.wg = geo.wg;
    j.m = make_binmap(in, out.bins);
    j.bins = out.bins;
    j.counts = out.counts;
    HISTEQ_CUDA_TRY(cudaMemsetAsync(out.counts, 0, sizeof(uint32_t) * out.bins, stream));
    if (weights != nullptr) {
      const size_t need = sizeof(double) * out.bins;
      if (scratch_.bytes() < need) {
        // Growing must not free memory a previous asynchronous call may still use.
        HISTEQ_CUDA_TRY(cudaStreamSynchronize(stream));
        auto s = cuda::Buffer::allocate(MemoryKind::device, need);
        if (!s) return s.status();
        scratch_ = std::move(s.value());
      }
      j.wsums = static_cast<double*>(scratch_.data());
      HISTEQ_CUDA_TRY(cudaMemsetAsync(j.wsums, 0, sizeof(double) * out.bins, stream));
    }
    if (choice->start != nullptr) HISTEQ_TRY(choice->start->record(stream));
    HISTEQ_TRY(by_sample_type(in, [&](auto sample) -> Status {
      using T = decltype(sample);
      return weights != nullptr ? launch<T, true>(choice->method, j, options(), stream)
                                : launch<T, false>(choice->method, j, options(), stream);
    }));
    if (choice->stop != nullptr) HISTEQ_TRY(choice->stop->record(stream));
    if (weights != nullptr) {
      constexpr int kThreads = 256;
      sums_to_float<<<(out.bins + kThreads - 1) / kThreads, kThreads, 0, stream>>>(j.wsums, out.weight_sums, out.bins);
      HISTEQ_CUDA_TRY_LAUNCH();
    }
    return Status::ok();
  }

  cuda::Buffer scratch_;  // the weight sums in double (device); grows, never shrinks
};

class XuFixed final : public XuKernel {
 public:
  XuFixed(const KernelInfo& info, KernelOptions opts, Method method) : XuKernel(info, opts), method_(method) {}

 protected:
  Result<Choice> choose(const PlaneRef&, bool, int) override { return Choice{method_}; }

 private:
  Method method_;
};

// §4.5: the bin count decides for collision_free; above that, the first round of each configuration
// times collision and collision_reduced (events around their kernels, read without blocking once
// both have completed) and later calls take the faster. Until both timings are in, collision runs.
class XuHybrid final : public XuKernel {
 public:
  using XuKernel::XuKernel;

 protected:
  Result<Choice> choose(const PlaneRef& in, bool weighted, int bins) override {
    if (bins <= HY::kCollisionFreeMaxBins && bins <= CF::kMaxBins) return Choice{Method::collision_free};
    const Config config{in.bytes_per_sample, bins, weighted, in.samples()};
    if (!(config == config_) || (state_ == State::decided && ++calls_ >= HY::kReprobeCalls)) {
      config_ = config;
      state_ = State::time_collision;
      calls_ = 0;
    }
    switch (state_) {
      case State::time_collision:
        for (auto& e : events_)
          if (e.get() == nullptr) {
            auto created = cuda::Event::create();
            if (!created) return created.status();
            e = std::move(created.value());
          }
        state_ = State::time_reduced;
        return Choice{Method::collision, &events_[0], &events_[1]};
      case State::time_reduced:
        state_ = State::waiting;
        return Choice{Method::collision_reduced, &events_[2], &events_[3]};
      case State::waiting: {
        if (!events_[1].ready() || !events_[3].ready()) return Choice{Method::collision};
        auto collision_ms = cuda::elapsed_ms(events_[0], events_[1]);
        auto reduced_ms = cuda::elapsed_ms(events_[2], events_[3]);
        if (!collision_ms || !reduced_ms) {  // a timed call failed before its stop event: time again
          state_ = State::time_collision;
          return Choice{Method::collision};
        }
        chosen_ = *reduced_ms < *collision_ms ? Method::collision_reduced : Method::collision;
        state_ = State::decided;
        return Choice{chosen_};
      }
      case State::decided:
        break;
    }
    return Choice{chosen_};
  }

 private:
  struct Config {
    int bytes_per_sample = 0;
    int bins = 0;
    bool weighted = false;
    size_t samples = 0;
    bool operator==(const Config& o) const {
      return bytes_per_sample == o.bytes_per_sample && bins == o.bins && weighted == o.weighted && samples == o.samples;
    }
  };
  enum class State { time_collision, time_reduced, waiting, decided };

  Config config_;
  State state_ = State::time_collision;
  Method chosen_ = Method::collision;
  int calls_ = 0;
  cuda::Event events_[4];  // start/stop of the collision run, start/stop of the collision_reduced run
};

constexpr BinMask bins_up_to(int max_bins) { return (static_cast<BinMask>(max_bins) << 1) - 2u; }  // 2..max_bins
constexpr const char* kPaper = "Xu, Xu, Zhao, Hsu, Efficient Weighted Histogramming on GPUs with CUDA (MSR Asia)";

// The traits every kernel of the family shares: GPU, and weighted.
KernelSpec xu_spec(const char* name, const char* description, const char* section, BinMask bins, bool data_independent) {
  return KernelSpec(name)
      .description(description)
      .source(kPaper, section)
      .bins_8bit(bins)
      .bins_16bit(bins)
      .data_independent(data_independent)
      .weighted()
      .on(Backend::gpu);
}

}  // namespace

KernelEntry entry_collision_free() {
  return xu_spec("collision_free",
                 "per-thread 16-bit counts + float weights in shared memory, no atomics in the hot loop; up to 256 bins",
                 "§4.2 collision-free method", bins_up_to(CF::kMaxBins), true)
      .make<XuFixed>(Method::collision_free);
}

KernelEntry entry_collision() {
  return xu_spec("collision", "one shared histogram per block (counts + double weight sums), shared atomics per sample",
                 "§4.3 collision method", kAnyBins, false)
      .make<XuFixed>(Method::collision);
}

KernelEntry entry_collision_reduced() {
  return xu_spec("collision_reduced",
                 "per-thread hash buffer (value|count, linear probing) regroups equal values before the shared atomics",
                 "§4.4 collision-reduced method, algorithm 2", kAnyBins, false)
      .make<XuFixed>(Method::collision_reduced);
}

KernelEntry entry_hybrid() {
  return xu_spec("hybrid",
                 "collision_free for <= 128 bins, else the faster of collision / collision_reduced timed on the first calls",
                 "§4.5 hybrid method, table 1", kAnyBins, false)
      .make<XuHybrid>();
}

}  // namespace histeq::hist
