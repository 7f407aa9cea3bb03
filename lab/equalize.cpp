// The lab's equalization bench (equalize.h gives the method and the check).
#include "lab/equalize.h"

#include <cstring>

#include "core/cuda/check.h"
#include "core/equalize/equalize.h"

namespace histeq::lab {
namespace {

// A device copy of buffer 0 of `cd` (same pitch), for the check.
Result<cuda::Buffer> copy_of(const CaseData& cd, cudaStream_t s) {
  const size_t bytes = cd.pitch * static_cast<size_t>(cd.spec.size.height);
  auto b = cuda::Buffer::allocate(MemoryKind::device, bytes);
  if (!b) return b.status();
  HISTEQ_CUDA_TRY(cudaMemcpyAsync(b->data(), cd.dev[0].ref().data, bytes, cudaMemcpyDeviceToDevice, s));
  return b;
}

template <class T>
PlaneView<T> view_of(const CaseData& cd, void* data) {
  return {static_cast<T*>(data), cd.spec.size.width, cd.spec.size.height, cd.pitch, cd.spec.bit_depth, MemoryKind::device};
}

// The unfused path on one plane: histogram by `k`, LUT, apply.
template <class T>
Status unfused(hist::Kernel& k, const PlaneView<T>& v, uint32_t weight, uint32_t* d_hist, uint16_t* d_lut, cudaStream_t s) {
  const int bins = 1 << v.bit_depth;
  HISTEQ_TRY(hist::compute(k, PlaneRef(v), {d_hist, bins, MemoryKind::device}, s));
  HISTEQ_TRY(eq::build_lut_gpu(d_hist, bins, weight, d_lut, s));
  return eq::apply_lut_gpu(v, d_lut, bins, s);
}

// The fused path against the unfused cub path and cpu_reference on a copy of buffer 0 at strength 1:
// "ok" or "FAILED: ...".
template <class T>
Result<std::string> check(const CaseData& cd, eq::FusedEqualizer& fe, hist::Kernel& cub, uint32_t* d_hist, uint16_t* d_lut,
                          cudaStream_t s) {
  const int bins = cd.spec.bins;
  auto a = copy_of(cd, s);
  if (!a) return a.status();
  auto b = copy_of(cd, s);
  if (!b) return b.status();
  auto fh = cuda::DeviceArray<uint32_t>::allocate(bins);
  auto fl = cuda::DeviceArray<uint16_t>::allocate(bins);
  if (!fh) return fh.status();
  if (!fl) return fl.status();
  HISTEQ_CUDA_TRY(cudaMemsetAsync(fh->data(), 0xA5, fh->bytes(), s));
  HISTEQ_CUDA_TRY(cudaMemsetAsync(fl->data(), 0xA5, fl->bytes(), s));
  HISTEQ_TRY(fe.run(view_of<T>(cd, a->data()), eq::kWeightOne, s, {fh->data(), fl->data()}));
  HISTEQ_TRY(unfused(cub, view_of<T>(cd, b->data()), eq::kWeightOne, d_hist, d_lut, s));
  const size_t bytes = a->bytes();
  std::vector<unsigned char> ha(bytes), hb(bytes);
  std::vector<uint32_t> h1(bins), h2(bins);
  std::vector<uint16_t> l1(bins), l2(bins);
  HISTEQ_CUDA_TRY(cudaMemcpyAsync(ha.data(), a->data(), bytes, cudaMemcpyDeviceToHost, s));
  HISTEQ_CUDA_TRY(cudaMemcpyAsync(hb.data(), b->data(), bytes, cudaMemcpyDeviceToHost, s));
  HISTEQ_CUDA_TRY(cudaMemcpyAsync(h1.data(), fh->data(), 4 * bins, cudaMemcpyDeviceToHost, s));
  HISTEQ_CUDA_TRY(cudaMemcpyAsync(h2.data(), d_hist, 4 * bins, cudaMemcpyDeviceToHost, s));
  HISTEQ_CUDA_TRY(cudaMemcpyAsync(l1.data(), fl->data(), 2 * bins, cudaMemcpyDeviceToHost, s));
  HISTEQ_CUDA_TRY(cudaMemcpyAsync(l2.data(), d_lut, 2 * bins, cudaMemcpyDeviceToHost, s));
  HISTEQ_CUDA_TRY(cudaStreamSynchronize(s));
  if (h1 != cd.reference_first) return std::string("FAILED: fused histogram differs from cpu_reference");
  if (h2 != cd.reference_first) return std::string("FAILED: cub histogram differs from cpu_reference");
  if (l1 != l2) return std::string("FAILED: fused LUT differs from build_lut_gpu's");
  if (std::memcmp(ha.data(), hb.data(), bytes) != 0) return std::string("FAILED: fused frame differs from the unfused one");
  return std::string("ok");
}

// x_cub against the unfused cub path, x_ceiling against the read ceiling rows[first] (the apply also
// writes the frame: a full equalization moves twice the bytes the ceiling reads).
void fill_equalize_ratios(std::vector<Row>& rows, size_t first) {
  double cub_us = 0, ceil_gbps = rows[first].m.ok() ? rows[first].m.gbps : 0;
  for (size_t i = first; i < rows.size(); ++i)
    if (rows[i].kernel == "cub+lut+apply" && rows[i].m.ok()) cub_us = rows[i].m.t.median_us;
  for (size_t i = first; i < rows.size(); ++i) {
    if (!rows[i].m.ok()) continue;
    if (cub_us > 0 && i != first) rows[i].x_cub = cub_us / rows[i].m.t.median_us;
    if (ceil_gbps > 0) rows[i].x_ceiling = rows[i].m.gbps / ceil_gbps;
  }
}

}  // namespace

Result<std::unique_ptr<EqualizeBench>> EqualizeBench::create(Engine& eng) {
  if (!eng.gpu())
    return HISTEQ_ERROR(Code::no_device, "--equalize times GPU equalization and needs a CUDA device; none is available");
  auto fe = eq::FusedEqualizer::create();
  if (!fe) return fe.status();
  std::unique_ptr<EqualizeBench> b(new EqualizeBench(eng, std::move(fe.value())));
  auto m2t = hist::create_kernel("method2_tuned");
  auto cub = hist::create_kernel("cub");
  if (!m2t) return m2t.status();
  if (!cub) return cub.status();
  b->m2t_ = std::move(m2t.value());
  b->cub_ = std::move(cub.value());
  auto d_hist = cuda::DeviceArray<uint32_t>::allocate(1024);
  auto d_lut = cuda::DeviceArray<uint16_t>::allocate(1024);
  // No location: the message is the whole story for the user, as it was when the CLI said it.
  if (!d_hist || !d_lut) return Status(Code::out_of_memory, "cannot allocate the histogram and LUT");
  b->d_hist_ = std::move(d_hist.value());
  b->d_lut_ = std::move(d_lut.value());
  return b;
}

std::vector<Row> EqualizeBench::run(const EqualizePlan& plan, const RowSink& sink) {
  std::vector<Row> rows;
  for (const auto& size : plan.sizes) {
    for (int depth : plan.depths) {
      for (const auto& input : plan.inputs) {
        const size_t first = rows.size();
        run_case({size, false, depth == 8 ? 1 : 2, depth, 1 << depth, input, false}, rows);
        if (sink)
          for (size_t i = first; i < rows.size(); ++i) sink(rows[i]);
      }
    }
  }
  return rows;
}

void EqualizeBench::run_case(const CaseSpec& spec, std::vector<Row>& rows) {
  Row base = row_for(spec, "equalize");
  CaseData cd;
  if (Status st = eng_.build(spec, cd); !st) {
    base.kernel = "*";
    base.m.status = "error: " + st.to_string();
    rows.push_back(base);
    return;
  }
  base.pitch = cd.pitch;
  base.bytes = cd.bytes;
  base.buffers = static_cast<int>(cd.buffers());
  const size_t first = rows.size();
  Row ceil = base;
  ceil.kernel = "read_ceiling";
  ceil.backend = "gpu";
  ceil.m = eng_.ceiling(cd);
  rows.push_back(ceil);
  const cudaStream_t s = eng_.stream();
  auto checked = spec.bit_depth == 8 ? check<uint8_t>(cd, fused_, *cub_, d_hist_.data(), d_lut_.data(), s)
                                     : check<uint16_t>(cd, fused_, *cub_, d_hist_.data(), d_lut_.data(), s);
  const std::string status = checked ? *checked : "error: " + checked.status().to_string();
  if (spec.bit_depth == 8) time_paths<uint8_t>(cd, base, status, rows);
  else time_paths<uint16_t>(cd, base, status, rows);
  fill_equalize_ratios(rows, first);
}

// The three paths on the case's rotating buffers at strength 0, each a row (the check's status
// instead when it failed).
template <class T>
void EqualizeBench::time_paths(const CaseData& cd, const Row& base, const std::string& status, std::vector<Row>& rows) {
  const cudaStream_t s = eng_.stream();
  auto timed = [&](const std::string& label, const std::function<Status(size_t)>& launch) {
    Row r = base;
    r.kernel = label;
    r.backend = "gpu";
    if (status != "ok") {
      r.m.status = status;
    } else if (auto t = eng_.time_launches(launch, cd.dev.size()); !t) {
      r.m.status = "error: " + t.status().to_string();
    } else {
      r.m.status = "ok";
      r.m.t = *t;
      r.m.gbps = cd.bytes / (r.m.t.median_us * 1e3);
    }
    rows.push_back(r);
  };
  auto plane = [&](size_t i) { return view_of<T>(cd, const_cast<void*>(cd.dev[i].ref().data)); };
  timed("fused", [&](size_t i) { return fused_.run(plane(i), 0, s); });
  timed("method2_tuned+lut+apply", [&](size_t i) { return unfused(*m2t_, plane(i), 0, d_hist_.data(), d_lut_.data(), s); });
  timed("cub+lut+apply", [&](size_t i) { return unfused(*cub_, plane(i), 0, d_hist_.data(), d_lut_.data(), s); });
}

}  // namespace histeq::lab
