// method2_tuned: thread-private histograms (Nugteren, van den Braak, Corporaal, Mesman, "High
// performance predictable histogramming on GPUs", GPGPU-4 2011, §7: method2, layout 2), re-tuned for
// Hopper. The family's defining property is kept: per-lane private counters in shared memory, one
// bank per lane, no atomics and no data-dependent branch in the hot loop; and the merge now costs the
// same for every picture too.
//
// What changed from method2 (= §7.3, mapping 3, kernels/method2.cu), and why (the sweep's figures:
// docs/performance.md, "method2_tuned sweep"; the agent: agent/method2_tuned.cuh):
//  - counters per warp region, many warps per block (up to the SM's 227 KB), instead of one warp per
//    block: on Hopper bank conflicts exist only inside one warp's instruction, so layout 2 stays
//    conflict-free with any number of warps, and one block per SM merges once instead of 14 times;
//  - counter width, ILP group (several samples of a lane read-modified-written together, with
//    selects combining increments to a shared word), loads per stage and double buffering are
//    policy::Method2Tuned, chosen by the sweep;
//  - the merge no longer skips zero bins (method2's skip made one-value frames 2x faster at 4K): a
//    warp-cooperative flush sums each warp's 32 histograms into the block's, every block adds every
//    bin to a device accumulator, and the last block to finish writes the output and clears the
//    accumulator. One launch, no memset;
//  - grid size per plane size: small planes get fewer warps per SM (less shared memory to zero and
//    merge) before they get fewer SMs (m2t::plan_for);
//  - any bin count: 8-bit planes 2..256 bins, 16-bit planes 2..1024 (out-of-range samples go to a
//    trash bin by a min, not a branch).
#include "core/histogram/agent/method2_tuned.cuh"
#include "core/histogram/kernels/common.cuh"

namespace histeq::hist {
namespace {

using P = policy::Method2Tuned;

template <class T, int kCap, class L, class Bin>
Status launch(const PlaneRef& in, const HistogramView& out, Bin bin, const KernelOptions& opts, const m2t::Scratch& s,
              int units_per_lane, cudaStream_t stream) {
  using C = m2t::CountersFor<T, kCap, L, Bin>;
  auto kernel = m2t::histogram_kernel<T, kCap, L, Bin>;
  auto dev = cuda::device_info();
  if (!dev) return dev.status();
  const detail::PlaneGeometry g = detail::make_geometry(in);
  m2t::Plan plan = m2t::plan_for(g.total_units(), dev->sm_count, C::kMaxWarps, units_per_lane, opts.max_blocks);
  while (plan.warps > 1 && C::smem_bytes(plan.warps) > dev->shared_mem_per_block_optin) --plan.warps;
  const size_t smem = C::smem_bytes(plan.warps);
  HISTEQ_TRY(detail::allow_dynamic_smem(kernel, smem));
  uint32_t pass = C::kPassUnitsMax;
  if (opts.max_pass_steps > 0) pass = std::min(pass, static_cast<uint32_t>(opts.max_pass_steps));
  const m2t::L2Prefetch pf = m2t::l2_prefetch_for(g, dev->l2_bytes, P::kL2PrefetchFractionDen);
  kernel<<<plan.blocks, plan.warps * m2t::kWarp, smem, stream>>>(g, bin, static_cast<uint32_t>(out.bins), pass, s, pf,
                                                                 out.counts);
  HISTEQ_CUDA_TRY_LAUNCH();
  return Status::ok();
}

class Method2Tuned final : public Kernel {
 public:
  using Kernel::Kernel;

  Status run(const PlaneRef& in, const HistogramView& out, cudaStream_t stream) override {
    if (buf_.empty()) {
      // acc (kMaxBins bins, kAccStride words apart) and the ticket, zero before the first launch
      // (stream-ordered); each launch leaves them zero for the next.
      const size_t words = size_t{1024} * P::kAccStride + 1;
      auto b = cuda::Buffer::allocate(MemoryKind::device, words * 4);
      if (!b) return b.status();
      HISTEQ_CUDA_TRY(cudaMemsetAsync(b->data(), 0, words * 4, stream));
      buf_ = std::move(b.value());
      s_.acc = static_cast<uint32_t*>(buf_.data());
      s_.acc_stride = P::kAccStride;
      s_.ticket = s_.acc + size_t{1024} * P::kAccStride;
    }
    const uint32_t k = static_cast<uint32_t>(bins_log2(out.bins));
    if (in.bytes_per_sample == 1) {
      if (out.bins == 256) return launch<uint8_t, 256, P::Loop8>(in, out, m2t::DirectBin{}, options(), s_, P::kUnitsPerLane8, stream);
      return launch<uint8_t, 256, P::Loop8>(in, out, m2t::ShiftBin{8u - k}, options(), s_, P::kUnitsPerLane8, stream);
    }
    const m2t::ClampBin bin{static_cast<uint32_t>(in.bit_depth) - k, static_cast<uint32_t>(out.bins)};
    if (out.bins <= 256) return launch<uint16_t, 256, P::Loop16>(in, out, bin, options(), s_, P::kUnitsPerLane16, stream);
    return launch<uint16_t, 1024, P::Loop16>(in, out, bin, options(), s_, P::kUnitsPerLane16, stream);
  }

 private:
  cuda::Buffer buf_;  // the device-wide merge's accumulator and ticket (per instance)
  m2t::Scratch s_;
};

}  // namespace

KernelEntry entry_method2_tuned() {
  return KernelSpec("method2_tuned")
      .description("method2 tuned for Hopper: thread-private counters per warp region, ILP without atomics, picture-independent merge")
      .source("Nugteren et al. 2011, High performance predictable histogramming on GPUs (tuned)", "§7 (layout 2), tuned for sm_90")
      .bins_8bit(0x1FEu /* 2..256 */)
      .bins_16bit(kAnyBins)
      .data_independent()
      .on(Backend::gpu)
      .make<Method2Tuned>();
}

}  // namespace histeq::hist
