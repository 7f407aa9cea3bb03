#include <map>

#include "core/cuda/device.h"
#include "core/equalize/equalize.h"
#include "core/equalize/fused_gpu.h"
#include "core/equalize/operation.h"
#include "core/histogram/histogram.h"

namespace histeq::eq {
namespace {

template <class T>
PlaneView<T> writable(const PlaneRef& r) {
  return {static_cast<T*>(const_cast<void*>(r.data)), r.width, r.height, r.pitch, r.bit_depth, r.memory};
}

// Histogram -> LUT -> apply in one launch (fused_gpu.h), for the fused kernel on the GPU. One
// FusedEqualizer per slot: instances share nothing, and a slot's frames are ordered on its stream.
class FusedOp final : public Operation {
 public:
  video::StageId stage() const override { return id_; }
  Status prepare(Backend backend, int slots, const video::FrameFormat& format) override {
    fused_.clear();
    usable_ = backend == Backend::gpu && format.sample_shift() == 0;
    if (!usable_) return Status::ok();
    for (int i = 0; i < slots; ++i) {
      auto f = FusedEqualizer::create();
      if (!f) return f.status();
      fused_.push_back(std::move(f.value()));
    }
    return Status::ok();
  }
  bool active(const FrameContext& ctx) const override { return usable_ && ctx.settings->kernel == kFusedKernel; }
  Status run(FrameContext& ctx, cudaStream_t stream) override {
    FusedEqualizer& fe = fused_.at(static_cast<size_t>(ctx.slot));
    const FusedOutputs out{ctx.counts, ctx.lut};  // the side data and the displays read them
    if (ctx.luma.bytes_per_sample == 1) HISTEQ_TRY(fe.run(writable<uint8_t>(ctx.luma), ctx.settings->weight, stream, out));
    else HISTEQ_TRY(fe.run(writable<uint16_t>(ctx.luma), ctx.settings->weight, stream, out));
    ctx.equalized = true;
    return Status::ok();
  }

 private:
  video::StageId id_ = video::stage_id("equalize");
  bool usable_ = false;
  std::vector<FusedEqualizer> fused_;
};

// The luma histogram by a registry kernel. Instances are made at the first frame that names them
// and kept per slot (a kernel instance may hold scratch memory that one stream uses, e.g. cub's),
// so a live switch waits for nothing and switching back costs nothing; a slot with a frame in
// flight keeps the instance it used alive.
class HistogramOp final : public Operation {
 public:
  video::StageId stage() const override { return id_; }
  bool active(const FrameContext& ctx) const override { return !ctx.equalized; }
  Status prepare(Backend backend, int slots, const video::FrameFormat& format) override {
    (void)backend, (void)format;
    kernels_.clear();
    kernels_.resize(static_cast<size_t>(slots));
    return Status::ok();
  }
  Status run(FrameContext& ctx, cudaStream_t stream) override {
    auto& set = kernels_.at(static_cast<size_t>(ctx.slot));
    auto it = set.find(ctx.settings->kernel);
    if (it == set.end()) {
      auto k = hist::create_kernel(ctx.settings->kernel);
      if (!k) return k.status();
      it = set.emplace(ctx.settings->kernel, std::move(k.value())).first;
    }
    const MemoryKind mem = ctx.backend == Backend::gpu ? MemoryKind::device : MemoryKind::host;
    return hist::compute(*it->second, ctx.luma, {ctx.counts, ctx.bins, mem}, stream);
  }

 private:
  video::StageId id_ = video::stage_id("histogram");
  std::vector<std::map<std::string, std::unique_ptr<hist::Kernel>>> kernels_;
};

class LutOp final : public Operation {
 public:
  video::StageId stage() const override { return id_; }
  bool active(const FrameContext& ctx) const override { return !ctx.equalized; }
  Status run(FrameContext& ctx, cudaStream_t stream) override {
    if (ctx.backend == Backend::gpu) return build_lut_gpu(ctx.counts, ctx.bins, ctx.settings->weight, ctx.lut, stream);
    return build_lut(ctx.counts, ctx.bins, ctx.settings->weight, ctx.lut);
  }

 private:
  video::StageId id_ = video::stage_id("lut");
};

class ApplyOp final : public Operation {
 public:
  video::StageId stage() const override { return id_; }
  bool active(const FrameContext& ctx) const override { return !ctx.equalized; }
  Status run(FrameContext& ctx, cudaStream_t stream) override {
    const bool gpu = ctx.backend == Backend::gpu;
    if (ctx.luma.bytes_per_sample == 1)
      return gpu ? apply_lut_gpu(writable<uint8_t>(ctx.luma), ctx.lut, ctx.bins, stream)
                 : apply_lut(writable<uint8_t>(ctx.luma), ctx.lut, ctx.bins);
    const int shift = ctx.format->sample_shift();  // P010: the table maps v >> 6
    return gpu ? apply_lut_gpu(writable<uint16_t>(ctx.luma), ctx.lut, ctx.bins, stream, shift)
               : apply_lut(writable<uint16_t>(ctx.luma), ctx.lut, ctx.bins, shift);
  }

 private:
  video::StageId id_ = video::stage_id("apply");
};

}  // namespace

Operations standard_operations() {
  Operations ops;
  ops.push_back(std::make_unique<FusedOp>());
  ops.push_back(std::make_unique<HistogramOp>());
  ops.push_back(std::make_unique<LutOp>());
  ops.push_back(std::make_unique<ApplyOp>());
  return ops;
}

Status check_kernel(const std::string& name, Backend backend, const video::FrameFormat& format) {
  const hist::KernelEntry* e = hist::find_kernel(name);
  if (e == nullptr) return hist::create_kernel(name).status();  // the registry's "unknown kernel (known: ...)"
  const bool gpu = e->info.backend == Backend::gpu;
  if (gpu != (backend == Backend::gpu))
    return HISTEQ_ERROR(Code::invalid_argument, "kernel '" + name + "' runs on the " + (gpu ? "GPU" : "CPU") +
                                                    ", but this equalizer runs on the " + (gpu ? "CPU" : "GPU"));
  if (gpu && !cuda::have_device())
    return HISTEQ_ERROR(Code::no_device, "kernel '" + name + "' needs a CUDA device and none is available");
  const int bins = format.bins();
  if (e->info.supports(format.bytes_per_sample(), bins)) return Status::ok();
  std::string ok;
  for (const auto& k : hist::registry())
    if (k.info.supports(format.bytes_per_sample(), bins)) ok += (ok.empty() ? "" : ", ") + k.info.name;
  return HISTEQ_ERROR(Code::unsupported, "kernel '" + e->info.name + "' has no " + std::to_string(bins) + "-bin mode for " +
                                             std::to_string(format.bit_depth) + "-bit video (kernels that do: " + ok + ")");
}

}  // namespace histeq::eq
