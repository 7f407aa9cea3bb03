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
//    trash bin by a min, not a branch);
//  - a tiled form for CLAHE (m2t::tiles_kernel): every tile of a frame in one launch, the SMs
//    shared out among the tiles, and no memset (method2's tiled form needs one for its atomics).
#include <type_traits>

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

// The tiled form: every tile the plan of the largest (detail::largest_tile_units), blocks of a
// tile merging through the tile's slice of `s` (m2t::tiles_kernel). No memset: a tile's output is
// written whole, by its one block or by the last of its blocks.
template <class T, int kCap, class L, class Bin>
Status launch_tiles(const PlaneRef& in, const TileGrid& grid, const HistogramView& out, Bin bin, const KernelOptions& opts,
                    const m2t::Scratch& s, int units_per_lane, cudaStream_t stream) {
  using C = m2t::CountersFor<T, kCap, L, Bin>;
  auto kernel = m2t::tiles_kernel<T, kCap, L, Bin>;
  auto dev = cuda::device_info();
  if (!dev) return dev.status();
  const int tiles = grid.count();
  const uint64_t tile_units = detail::largest_tile_units(in, grid);
  // A block's whole shared memory: the counters, the kernel's static variables and what the runtime
  // reserves (at exactly two blocks' worth of an SM, leaving out the static part cost a second wave).
  static const size_t static_smem = [&] {
    cudaFuncAttributes a{};
    return cudaFuncGetAttributes(&a, kernel) == cudaSuccess ? a.sharedSizeBytes : size_t{1024};
  }();
  auto block_smem = [&](int warps) { return C::smem_bytes(warps) + static_smem + dev->reserved_shared_mem_per_block; };
  m2t::Plan plan = m2t::plan_tiles(tile_units, tiles, dev->sm_count, C::kMaxWarps, units_per_lane, opts.max_blocks, block_smem,
                                   dev->shared_mem_per_sm);
  while (plan.warps > 1 && C::smem_bytes(plan.warps) > dev->shared_mem_per_block_optin) --plan.warps;
  const size_t smem = C::smem_bytes(plan.warps);
  HISTEQ_TRY(detail::allow_dynamic_smem(kernel, smem));
  uint32_t pass = C::kPassUnitsMax;
  if (opts.max_pass_steps > 0) pass = std::min(pass, static_cast<uint32_t>(opts.max_pass_steps));
  kernel<<<dim3(static_cast<unsigned>(plan.blocks), static_cast<unsigned>(tiles)), plan.warps * m2t::kWarp, smem, stream>>>(
      detail::make_tiled(in, grid), bin, static_cast<uint32_t>(out.bins), pass, s, out.counts);
  HISTEQ_CUDA_TRY_LAUNCH();
  return Status::ok();
}

// Zeroed device scratch of at least `words` 32-bit words, grown (and zeroed, stream-ordered) on
// demand; the kernels leave what they use zero again.
Status ensure_zeroed(cuda::Buffer& buf, size_t words, cudaStream_t stream) {
  if (buf.bytes() >= words * 4) return Status::ok();
  auto b = cuda::Buffer::allocate(MemoryKind::device, words * 4);
  if (!b) return b.status();
  HISTEQ_CUDA_TRY(cudaMemsetAsync(b->data(), 0, words * 4, stream));
  buf = std::move(b.value());
  return Status::ok();
}

class Method2Tuned final : public Kernel {
 public:
  using Kernel::Kernel;

  Status run(const PlaneRef& in, const HistogramView& out, cudaStream_t stream) override {
    // acc (1024 bins, kAccStride words apart) and the ticket; each launch leaves them zero.
    const size_t acc_words = size_t{1024} * P::kAccStride;
    HISTEQ_TRY(ensure_zeroed(buf_, acc_words + 1, stream));
    m2t::Scratch s;
    s.acc = static_cast<uint32_t*>(buf_.data());
    s.acc_stride = P::kAccStride;
    s.ticket = s.acc + acc_words;
    return dispatch(in, out, [&](auto t, auto cap, auto loop, auto bin) {
      using T = decltype(t);
      const int u = units(sizeof(T) == 1 ? P::kUnitsPerLane8 : P::kUnitsPerLane16);
      return launch<T, decltype(cap)::value, decltype(loop)>(in, out, bin, options(), s, u, stream);
    });
  }

  Status run_tiles(const PlaneRef& in, const TileGrid& grid, const HistogramView& out, cudaStream_t stream) override {
    // A tile's slice: bins accumulator words (16-byte aligned for finish()), then one ticket a tile.
    const size_t tiles = static_cast<size_t>(grid.count()), bins = static_cast<size_t>(out.bins);
    HISTEQ_TRY(ensure_zeroed(tile_buf_, tiles * (bins + 1), stream));
    m2t::Scratch s;
    s.acc = static_cast<uint32_t*>(tile_buf_.data());
    s.ticket = s.acc + tiles * bins;
    return dispatch(in, out, [&](auto t, auto cap, auto loop, auto bin) {
      using T = decltype(t);
      const int u = units(sizeof(T) == 1 ? P::kTileUnitsPerLane8 : P::kTileUnitsPerLane16);
      return launch_tiles<T, decltype(cap)::value, decltype(loop)>(in, grid, out, bin, options(), s, u, stream);
    });
  }

 private:
  int units(int policy_units) const { return options().units_per_lane > 0 ? options().units_per_lane : policy_units; }

  // Picks the instance for the plane's depth and bins: f(sample, capacity, loop, bin map).
  template <class F>
  static Status dispatch(const PlaneRef& in, const HistogramView& out, F&& f) {
    using C256 = std::integral_constant<int, 256>;
    using C1024 = std::integral_constant<int, 1024>;
    const uint32_t k = static_cast<uint32_t>(bins_log2(out.bins));
    if (in.bytes_per_sample == 1) {
      if (out.bins == 256) return f(uint8_t{}, C256{}, P::Loop8{}, m2t::DirectBin{});
      return f(uint8_t{}, C256{}, P::Loop8{}, m2t::ShiftBin{8u - k});
    }
    const m2t::ClampBin bin{static_cast<uint32_t>(in.bit_depth) - k, static_cast<uint32_t>(out.bins)};
    if (out.bins <= 256) return f(uint16_t{}, C256{}, P::Loop16{}, bin);
    return f(uint16_t{}, C1024{}, P::Loop16{}, bin);
  }

  cuda::Buffer buf_;       // the device-wide merge's accumulator and ticket (per instance)
  cuda::Buffer tile_buf_;  // the tiled form's: an accumulator and a ticket per tile
};

}  // namespace

KernelEntry entry_method2_tuned() {
  return KernelSpec("method2_tuned")
      .description("method2 tuned for Hopper: thread-private counters per warp region, ILP without atomics, picture-independent merge")
      .source("Nugteren et al. 2011, High performance predictable histogramming on GPUs (tuned)", "§7 (layout 2), tuned for sm_90")
      .bins_8bit(0x1FEu /* 2..256 */)
      .bins_16bit(kAnyBins)
      .data_independent()
      .tiles()
      .on(Backend::gpu)
      .make<Method2Tuned>();
}

}  // namespace histeq::hist
