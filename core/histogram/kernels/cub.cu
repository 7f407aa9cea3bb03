// cub: cub::DeviceHistogram::HistogramEven from the CUDA toolkit's CCCL, the library kernel every
// other kernel is measured against. Pitched planes go in as rows with their stride; levels are
// [0, 2^bit_depth) split evenly into `bins`, so out-of-range 16-bit samples are dropped exactly as
// the API's contract says. Temporary storage is allocated on first use and only grows afterwards,
// never per call.
#include <cub/device/device_histogram.cuh>

#include "core/histogram/kernels/common.cuh"

namespace histeq::hist {
namespace {

class Cub final : public Kernel {
 public:
  using Kernel::Kernel;

  Status run(const PlaneRef& in, const HistogramView& out, cudaStream_t stream) override {
    return detail::by_sample_type(in, [&](auto sample) -> Status {
      using T = decltype(sample);
      const T* samples = static_cast<const T*>(in.data);
      const int levels = out.bins + 1;
      const int upper = 1 << in.bit_depth;
      // A contiguous plane is one long row: CUB then takes its 1-D path.
      const bool contiguous = in.pitch == in.row_bytes() || in.height <= 1;
      const int64_t row_samples = contiguous ? static_cast<int64_t>(in.samples()) : in.width;
      const int64_t rows = contiguous ? 1 : in.height;
      const size_t stride = contiguous ? in.row_bytes() * in.height : in.pitch;
      size_t need = 0;
      HISTEQ_CUDA_TRY(cub::DeviceHistogram::HistogramEven(nullptr, need, samples, out.counts, levels, 0, upper,
                                                          row_samples, rows, stride, stream));
      if (need > temp_.bytes()) {
        // Growing must not free memory a previous asynchronous call may still use.
        HISTEQ_CUDA_TRY(cudaStreamSynchronize(stream));
        auto b = cuda::Buffer::allocate(MemoryKind::device, need);
        if (!b) return b.status();
        temp_ = std::move(b.value());
      }
      size_t have = temp_.bytes();
      HISTEQ_CUDA_TRY(cub::DeviceHistogram::HistogramEven(temp_.data(), have, samples, out.counts, levels, 0, upper,
                                                          row_samples, rows, stride, stream));
      HISTEQ_CUDA_TRY_LAUNCH();
      return Status::ok();
    });
  }

 private:
  cuda::Buffer temp_;
};

}  // namespace

KernelEntry entry_cub() {
  return KernelSpec("cub")
      .description("cub::DeviceHistogram::HistogramEven (CUDA toolkit), the library baseline")
      .source("NVIDIA CUB / CCCL", "DeviceHistogram::HistogramEven")
      .bins_8bit(kAnyBins)
      .bins_16bit(kAnyBins)
      .on(Backend::gpu)
      .make<Cub>();
}

}  // namespace histeq::hist
