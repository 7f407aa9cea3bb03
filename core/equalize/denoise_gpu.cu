// The temporal denoiser on the GPU (denoise.h), two launches on the frame's stream:
//   cut test   one block per sampled row: the |differences| summed (warp shuffles, one atomic a
//              block) into sums[parity]; not launched when the frame starts over anyway
//   filter     one pass: a 32 x 8 block loads the differences of its tile and a two-sample halo
//              into shared memory, sums them over five rows, then each thread sums five of those
//              (its 5x5) and blends its pixel
// A block's halo reads its neighbours' states, which those blocks may already have updated: so
// the state is two planes, this frame reading one and writing the other (DenoiseArgs::parity), and
// nothing a launch reads is written by it.
#include "core/cuda/check.h"
#include "core/equalize/denoise.h"

namespace histeq::eq {
namespace {

constexpr int kTileW = 32, kTileH = 8;
constexpr int kCutThreads = 256;

template <class T>
__device__ __forceinline__ const T* row_at(const PlaneRef& p, int y) {
  return reinterpret_cast<const T*>(static_cast<const unsigned char*>(p.data) + static_cast<size_t>(y) * p.pitch);
}

template <class T>
__global__ void __launch_bounds__(kCutThreads) cut_kernel(PlaneRef luma, const uint16_t* __restrict__ state, denoise::Params p,
                                                          unsigned long long* sum) {
  const int y = blockIdx.x * denoise::kCutRowStep;
  const T* v = row_at<T>(luma, y);
  const uint16_t* s = state + static_cast<size_t>(y) * luma.width;
  unsigned long long acc = 0;
  for (int x = threadIdx.x; x < luma.width; x += kCutThreads) acc += denoise::diff(denoise::level(v[x], p), s[x]);
  for (int m = 16; m > 0; m >>= 1) acc += __shfl_xor_sync(0xFFFFFFFFu, acc, m);
  __shared__ unsigned long long warp_sums[kCutThreads / 32];
  if ((threadIdx.x & 31) == 0) warp_sums[threadIdx.x >> 5] = acc;
  __syncthreads();
  if (threadIdx.x == 0) {
    unsigned long long t = 0;
    for (int i = 0; i < kCutThreads / 32; ++i) t += warp_sums[i];
    atomicAdd(sum, t);
  }
}

template <class T>
__global__ void __launch_bounds__(kTileW* kTileH)
    filter_kernel(PlaneRef luma, const uint16_t* __restrict__ prev, uint16_t* __restrict__ next, denoise::Params p,
                  unsigned long long* sums, int parity, bool restart, unsigned long long cut_total) {
  constexpr int R = denoise::kRadius, TW = kTileW + 2 * R, TH = kTileH + 2 * R;
  __shared__ uint32_t tile[TH][TW];     // the differences of the tile and its halo
  __shared__ uint32_t cols[kTileH][TW];  // their sums over 2R + 1 rows
  const int w = luma.width, h = luma.height;
  const int x0 = blockIdx.x * kTileW, y0 = blockIdx.y * kTileH;
  const int tid = threadIdx.y * kTileW + threadIdx.x;
  const bool start_over = restart || sums[parity] > cut_total;
  // The tile is loaded also when the frame starts over (a cut costs what a frame costs). Edge
  // samples are repeated through the clamped coordinates, as on the CPU.
  for (int i = tid; i < TH * TW; i += kTileW * kTileH) {
    const int ty = i / TW, tx = i % TW;
    const int y = min(max(y0 + ty - R, 0), h - 1), x = min(max(x0 + tx - R, 0), w - 1);
    tile[ty][tx] = denoise::diff(denoise::level(row_at<T>(luma, y)[x], p), prev[static_cast<size_t>(y) * w + x]);
  }
  __syncthreads();
  for (int i = tid; i < kTileH * TW; i += kTileW * kTileH) {
    const int ty = i / TW, tx = i % TW;
    uint32_t c = 0;
    for (int d = 0; d <= 2 * R; ++d) c += tile[ty + d][tx];
    cols[ty][tx] = c;
  }
  __syncthreads();
  const int x = x0 + threadIdx.x, y = y0 + threadIdx.y;
  if (x >= w || y >= h) return;
  T* v = const_cast<T*>(row_at<T>(luma, y)) + x;
  uint32_t d = 0;
  for (int dx = 0; dx <= 2 * R; ++dx) d += cols[threadIdx.y][threadIdx.x + dx];
  const uint32_t k = start_over ? 256u : denoise::gain(d, p);
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
  if (!a.restart) {
    const int rows = (l.height + denoise::kCutRowStep - 1) / denoise::kCutRowStep;
    cut_kernel<T><<<rows, kCutThreads, 0, stream>>>(l, prev, a.params, a.sums + a.parity);
    HISTEQ_CUDA_TRY(cudaGetLastError());
  }
  const dim3 block(kTileW, kTileH), grid((l.width + kTileW - 1) / kTileW, (l.height + kTileH - 1) / kTileH);
  const unsigned long long cut_total = a.params.cut_q4 * denoise::cut_samples(l.width, l.height);
  filter_kernel<T><<<grid, block, 0, stream>>>(l, prev, next, a.params, a.sums, a.parity, a.restart, cut_total);
  HISTEQ_CUDA_TRY(cudaGetLastError());
  return Status::ok();
}

}  // namespace

Status denoise_frame_gpu(const DenoiseArgs& a, cudaStream_t stream) {
  HISTEQ_TRY(check_denoise_args(a));
  return a.luma.bytes_per_sample == 1 ? run<uint8_t>(a, stream) : run<uint16_t>(a, stream);
}

}  // namespace histeq::eq
