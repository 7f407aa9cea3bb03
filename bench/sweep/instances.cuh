// Instance factories for the sweep (included by the instances_*.cu files, one per compile job).
#pragma once

#include <string>
#include <type_traits>

#include "bench/sweep/sweep.h"
#include "core/equalize/ops/equalize/fused_gpu.cuh"

namespace sweep {

template <class T, int kCap, class L>
HistVariant make_hist() {
  using Bin = std::conditional_t<sizeof(T) == 1, histeq::hist::m2t::DirectBin, histeq::hist::m2t::ClampBin>;
  using C = histeq::hist::m2t::CountersFor<T, kCap, L, Bin>;
  HistVariant v;
  v.name = std::string(sizeof(T) == 1 ? "h8" : "h10") + "_cw" + std::to_string(L::kBits) + "_k" + std::to_string(L::kIlp) +
           "_u" + std::to_string(L::kUnroll) + (L::kPrefetch ? "p" : "");
  v.bits = L::kBits;
  v.ilp = L::kIlp;
  v.unroll = L::kUnroll;
  v.prefetch = L::kPrefetch;
  v.bytes_per_sample = sizeof(T);
  v.max_warps = C::kMaxWarps;
  v.pass_units = C::kPassUnitsMax;
  v.smem = [](int warps) { return C::smem_bytes(warps); };
  v.launch = [](const PlaneGeometry& g, uint32_t bins, uint32_t pass, int blocks, int warps, const Scratch& s, bool l2pf,
                uint32_t* out, cudaStream_t stream) -> cudaError_t {
    const size_t smem = C::smem_bytes(warps);
    histeq::hist::m2t::L2Prefetch pf;
    if (l2pf) {
      static size_t l2 = 0;
      if (l2 == 0) {
        int v = 0;
        cudaDeviceGetAttribute(&v, cudaDevAttrL2CacheSize, 0);
        l2 = static_cast<size_t>(v);
      }
      pf = histeq::hist::m2t::l2_prefetch_for(g, l2, 2);
    }
    if constexpr (sizeof(T) == 1) {
      auto k = histeq::hist::m2t::histogram_kernel<T, kCap, L, histeq::hist::m2t::DirectBin>;
      cudaError_t e = cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(smem));
      if (e != cudaSuccess) return e;
      k<<<blocks, warps * 32, smem, stream>>>(g, histeq::hist::m2t::DirectBin{}, bins, pass, s, pf, out);
    } else {
      auto k = histeq::hist::m2t::histogram_kernel<T, kCap, L, histeq::hist::m2t::ClampBin>;
      cudaError_t e = cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(smem));
      if (e != cudaSuccess) return e;
      k<<<blocks, warps * 32, smem, stream>>>(g, histeq::hist::m2t::ClampBin{0, bins}, bins, pass, s, pf, out);
    }
    return cudaGetLastError();
  };
  return v;
}

template <class T, int kCap, class L, int UA>
FusedVariant make_fused() {
  FusedVariant v;
  v.name = std::string(sizeof(T) == 1 ? "f8" : "f10") + "_cw" + std::to_string(L::kBits) + "_k" + std::to_string(L::kIlp) +
           "_u" + std::to_string(L::kUnroll) + (L::kPrefetch ? "p" : "") + "_a" + std::to_string(UA);
  v.bytes_per_sample = sizeof(T);
  v.launch = [](const histeq::eq::FusedEqualizer::Scratch& s, void* data, int width, int height, size_t pitch, int depth,
                uint32_t weight, const histeq::eq::FusedOutputs& out, int upl, int max_warps, int max_blocks,
                cudaStream_t stream, histeq::eq::FusedLaunch* rec) -> histeq::Status {
    histeq::PlaneView<T> p{static_cast<T*>(data), width, height, pitch, depth, histeq::MemoryKind::device};
    const uint32_t bins = 1u << depth;
    if constexpr (sizeof(T) == 1)
      return histeq::eq::fused_detail::launch<T, kCap, L, UA>(s, p, histeq::hist::m2t::DirectBin{}, bins, weight,
                                                              histeq::eq::PlainLutBuilder{}, out, upl, max_warps,
                                                              max_blocks, stream, rec);
    else
      return histeq::eq::fused_detail::launch<T, kCap, L, UA>(s, p, histeq::hist::m2t::ClampBin{0, bins}, bins, weight,
                                                              histeq::eq::PlainLutBuilder{}, out, upl, max_warps,
                                                              max_blocks, stream, rec);
  };
  return v;
}

template <int B, int K, int U, bool P>
using L = histeq::hist::policy::Method2TunedLoop<B, K, U, P>;

}  // namespace sweep
