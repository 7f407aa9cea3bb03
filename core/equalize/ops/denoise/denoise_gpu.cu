// The temporal denoiser on the GPU (denoise.h), two launches on the frame's stream:
//   differences  one thread a sample: a = |c * 16 - s| into the scratch plane (state plane 2), and
//                the cut test's sum over every fourth row (warp shuffles, one atomic a block) into
//                sums[parity]; not launched when the frame starts over anyway
//   filter       a 32 x 8 block loads the differences of its tile and a two-sample halo into shared
//                memory, sums them over five rows, then each thread sums five of those (its 5x5),
//                and blends its own sample
// Why the differences go through memory: the filter writes the frame in place, and a block's halo
// covers samples its neighbours may already have written, so the halo must not read the frame; it
// reads differences made before any sample changed. Likewise the state is two planes, read one and
// write the other (DenoiseArgs::parity): nothing a launch reads is written by it.
#include "core/cuda/check.h"
#include "core/equalize/ops/denoise/denoise.h"

namespace histeq::eq {
namespace {

constexpr int kTileW = 32, kTileH = 8, kThreads = kTileW * kTileH;

template <class T>
__device__ __forceinline__ const T* row_at(const PlaneRef& p, int y) {
  return reinterpret_cast<const T*>(static_cast<const unsigned char*>(p.data) + static_cast<size_t>(y) * p.pitch);
}

template <class T>
__global__ void __launch_bounds__(kThreads) diff_kernel(PlaneRef luma, const uint16_t* __restrict__ prev, uint16_t* __restrict__ diffs,
                                                        denoise::Params p, unsigned long long* sum) {
  const int x = blockIdx.x * kTileW + threadIdx.x, y = blockIdx.y * kTileH + threadIdx.y;
  unsigned long long acc = 0;
  if (x < luma.width && y < luma.height) {
    const size_t at = static_cast<size_t>(y) * luma.width + x;
    const uint32_t a = denoise::diff(denoise::level(row_at<T>(luma, y)[x], p), prev[at]);
    diffs[at] = static_cast<uint16_t>(a);  // at most 1023 * 16
    if (y % denoise::kCutRowStep == 0) acc = a;
  }
  for (int m = 16; m > 0; m >>= 1) acc += __shfl_xor_sync(0xFFFFFFFFu, acc, m);
  __shared__ unsigned long long warp_sums[kThreads / 32];
  const int tid = threadIdx.y * kTileW + threadIdx.x;
  if ((tid & 31) == 0) warp_sums[tid >> 5] = acc;
  __syncthreads();
  if (tid == 0) {
    unsigned long long t = 0;
    for (int i = 0; i < kThreads / 32; ++i) t += warp_sums[i];
    if (t != 0) atomicAdd(sum, t);
  }
}

template <class T>
__global__ void __launch_bounds__(kThreads)
    filter_kernel(PlaneRef luma, const uint16_t* __restrict__ diffs, const uint16_t* __restrict__ prev, uint16_t* __restrict__ next,
                  denoise::Params p, unsigned long long* sums, int parity, bool restart, unsigned long long cut_total) {
  constexpr int R = denoise::kRadius, TW = kTileW + 2 * R, TH = kTileH + 2 * R;
  __shared__ uint32_t tile[TH][TW];     // the differences of the tile and its halo
  __shared__ uint32_t cols[kTileH][TW];  // their sums over 2R + 1 rows
  const int w = luma.width, h = luma.height;
  const int x0 = blockIdx.x * kTileW, y0 = blockIdx.y * kTileH;
  const int tid = threadIdx.y * kTileW + threadIdx.x;
  const bool start_over = restart || sums[parity] > cut_total;
  // Loaded also when the frame starts over (then unused: a cut costs what a frame costs). Edge
  // samples repeated through the clamped coordinates, as on the CPU.
  for (int i = tid; i < TH * TW; i += kThreads) {
    const int ty = i / TW, tx = i % TW;
    const int y = min(max(y0 + ty - R, 0), h - 1), x = min(max(x0 + tx - R, 0), w - 1);
    tile[ty][tx] = diffs[static_cast<size_t>(y) * w + x];
  }
  __syncthreads();
  for (int i = tid; i < kTileH * TW; i += kThreads) {
    const int ty = i / TW, tx = i % TW;
    uint32_t c = 0;
    for (int d = 0; d <= 2 * R; ++d) c += tile[ty + d][tx];
    cols[ty][tx] = c;
  }
  __syncthreads();
  const int x = x0 + threadIdx.x, y = y0 + threadIdx.y;
  if (x >= w || y >= h) return;
  uint32_t k = 256;
  if (!start_over) {
    uint32_t d = 0;
    for (int dx = 0; dx <= 2 * R; ++dx) d += cols[threadIdx.y][threadIdx.x + dx];
    k = denoise::gain(d, p);
  }
  T* v = const_cast<T*>(row_at<T>(luma, y)) + x;
  const size_t at = static_cast<size_t>(y) * w + x;
  const uint32_t ns = denoise::blend(prev[at], denoise::level(*v, p), k);
  next[at] = static_cast<uint16_t>(ns);
  *v = static_cast<T>(denoise::store(*v, ns, p));
  if (x == 0 && y == 0) sums[parity ^ 1] = 0;
}

template <class T>
Status run(const DenoiseArgs& a, cudaStream_t stream) {
  const PlaneRef& l = a.luma;
  const uint16_t* prev = a.state + static_cast<size_t>(a.parity) * l.samples();
  uint16_t* next = a.state + static_cast<size_t>(a.parity ^ 1) * l.samples();
  uint16_t* diffs = a.state + 2 * l.samples();
  const dim3 block(kTileW, kTileH), grid((l.width + kTileW - 1) / kTileW, (l.height + kTileH - 1) / kTileH);
  if (!a.restart) {
    diff_kernel<T><<<grid, block, 0, stream>>>(l, prev, diffs, a.params, a.sums + a.parity);
    HISTEQ_CUDA_TRY(cudaGetLastError());
  }
  const unsigned long long cut_total = a.params.cut_q4 * denoise::cut_samples(l.width, l.height);
  filter_kernel<T><<<grid, block, 0, stream>>>(l, diffs, prev, next, a.params, a.sums, a.parity, a.restart, cut_total);
  HISTEQ_CUDA_TRY(cudaGetLastError());
  return Status::ok();
}

}  // namespace

Status denoise_frame_gpu(const DenoiseArgs& a, cudaStream_t stream) {
  HISTEQ_TRY(check_denoise_args(a));
  return a.luma.bytes_per_sample == 1 ? run<uint8_t>(a, stream) : run<uint16_t>(a, stream);
}

}  // namespace histeq::eq
