// histeq bench --equalize: the GPU time of a whole equalization per frame (histogram + LUT + apply),
// the fused method2_tuned path (core/equalize/fused_gpu.h, one launch) against the unfused one
// (a histogram kernel, build_lut_gpu, apply_lut_gpu: three launches) with method2_tuned and with
// cub, on 8- and 10-bit planes. Same engine and method as `histeq bench` (rotating buffers larger
// than the L2, CUDA events after a warm-up, median and p99).
//
// Check first: on a copy of the first buffer, at strength 1, the fused result (frame, histogram,
// LUT) must equal the unfused cub path's byte for byte, or the row is FAILED and nothing is timed.
// Timing runs at strength 0 (the identity LUT): the rotating inputs then keep their content from
// run to run (equalizing at strength 1 would flatten them, which changes what content-dependent
// kernels such as cub see), and the work is the same at any strength, since no kernel branches on
// the LUT's values.
#include <cstdio>
#include <cstring>

#include "app/commands/bench_engine.h"
#include "app/commands/commands.h"
#include "core/cuda/check.h"
#include "core/equalize/equalize.h"
#include "core/equalize/fused_gpu.h"

namespace histeq::app {
namespace {

using namespace histeq::app::bench;

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

}  // namespace

int run_bench_equalize(const BenchOptions& o, bench::Engine& eng) {
  if (!eng.gpu()) return fail("--equalize times GPU equalization and needs a CUDA device; none is available");
  eng.set_options({o.runs, o.warmup, o.cpu_budget_s, false});
  const BenchOptions defaults;
  const std::vector<std::string> size_names = o.sizes == defaults.sizes ? std::vector<std::string>{"1080p", "4k"} : o.sizes;
  std::vector<SizeSpec> sizes;
  for (const auto& s : size_names) {
    auto sp = parse_size(s);
    if (!sp) return fail(sp.status().message(), 2);
    sizes.push_back(*sp);
  }
  auto parsed = parse_inputs(o.inputs, eng.frame_count());
  if (!parsed) return fail(parsed.status().message(), 2);
  const std::vector<InputSpec> inputs = std::move(parsed.value());
  auto fe = eq::FusedEqualizer::create();
  if (!fe) return fail(fe.status().to_string());
  auto m2t = hist::create_kernel("method2_tuned");
  auto cub = hist::create_kernel("cub");
  if (!m2t) return fail(m2t.status().to_string());
  if (!cub) return fail(cub.status().to_string());
  auto d_hist = cuda::DeviceArray<uint32_t>::allocate(1024);
  auto d_lut = cuda::DeviceArray<uint16_t>::allocate(1024);
  if (!d_hist || !d_lut) return fail("cannot allocate the histogram and LUT");
  const cudaStream_t s = eng.stream();

  std::vector<Row> rows;
  std::printf("equalization per frame (histogram + LUT + apply); timed at strength 0, checked at strength 1\n");
  print_header();
  for (const auto& size : sizes) {
    for (int depth : o.depths) {
      for (const auto& input : inputs) {
        const CaseSpec spec{size, false, depth == 8 ? 1 : 2, depth, 1 << depth, input, false};
        Row base = row_for(spec, "equalize");
        CaseData cd;
        if (Status st = eng.build(spec, cd); !st) {
          base.kernel = "*";
          base.m.status = "error: " + st.to_string();
          print_row(base);
          rows.push_back(base);
          continue;
        }
        base.pitch = cd.pitch;
        base.bytes = cd.bytes;
        base.buffers = static_cast<int>(cd.buffers());
        const size_t first = rows.size();
        Row ceil = base;
        ceil.kernel = "read_ceiling";
        ceil.backend = "gpu";
        ceil.m = eng.ceiling(cd);
        rows.push_back(ceil);

        auto checked = depth == 8 ? check<uint8_t>(cd, *fe, **cub, d_hist->data(), d_lut->data(), s)
                                  : check<uint16_t>(cd, *fe, **cub, d_hist->data(), d_lut->data(), s);
        const std::string status = checked ? *checked : "error: " + checked.status().to_string();
        auto timed = [&](const std::string& label, const std::function<Status(size_t)>& launch) {
          Row r = base;
          r.kernel = label;
          r.backend = "gpu";
          if (status != "ok") {
            r.m.status = status;
          } else if (auto t = eng.time_launches(launch, cd.dev.size()); !t) {
            r.m.status = "error: " + t.status().to_string();
          } else {
            r.m.status = "ok";
            r.m.t = *t;
            r.m.gbps = cd.bytes / (r.m.t.median_us * 1e3);
          }
          rows.push_back(r);
        };
        auto plane = [&](size_t i) { return cd.dev[i].ref().data; };
        if (depth == 8) {
          timed("fused", [&](size_t i) { return fe->run(view_of<uint8_t>(cd, const_cast<void*>(plane(i))), 0, s); });
          timed("method2_tuned+lut+apply", [&](size_t i) {
            return unfused(**m2t, view_of<uint8_t>(cd, const_cast<void*>(plane(i))), 0, d_hist->data(), d_lut->data(), s);
          });
          timed("cub+lut+apply", [&](size_t i) {
            return unfused(**cub, view_of<uint8_t>(cd, const_cast<void*>(plane(i))), 0, d_hist->data(), d_lut->data(), s);
          });
        } else {
          timed("fused", [&](size_t i) { return fe->run(view_of<uint16_t>(cd, const_cast<void*>(plane(i))), 0, s); });
          timed("method2_tuned+lut+apply", [&](size_t i) {
            return unfused(**m2t, view_of<uint16_t>(cd, const_cast<void*>(plane(i))), 0, d_hist->data(), d_lut->data(), s);
          });
          timed("cub+lut+apply", [&](size_t i) {
            return unfused(**cub, view_of<uint16_t>(cd, const_cast<void*>(plane(i))), 0, d_hist->data(), d_lut->data(), s);
          });
        }
        // x_cub against the unfused cub path, x_ceiling against the read ceiling (the apply also
        // writes the frame: a full equalization moves twice the bytes the ceiling reads).
        double cub_us = 0, ceil_gbps = rows[first].m.ok() ? rows[first].m.gbps : 0;
        for (size_t i = first; i < rows.size(); ++i)
          if (rows[i].kernel == "cub+lut+apply" && rows[i].m.ok()) cub_us = rows[i].m.t.median_us;
        for (size_t i = first; i < rows.size(); ++i) {
          if (!rows[i].m.ok()) continue;
          if (cub_us > 0 && i != first) rows[i].x_cub = cub_us / rows[i].m.t.median_us;
          if (ceil_gbps > 0) rows[i].x_ceiling = rows[i].m.gbps / ceil_gbps;
        }
        for (size_t i = first; i < rows.size(); ++i) print_row(rows[i]);
      }
    }
  }
  const auto table = fill_predictability(rows);
  print_predictability(table);
  std::string cmd;
  for (const auto& a : o.argv) cmd += (cmd.empty() ? "" : " ") + a;
  if (!o.csv.empty())
    if (Status st = write_csv(o.csv, rows, cmd, eng.device().name); !st) return fail(st.to_string());
  if (!o.json.empty())
    if (Status st = write_json(o.json, rows, cmd, &eng.device(), table); !st) return fail(st.to_string());
  std::printf("\nx_cub = (cub + LUT + apply) median / this median; launch fused: %d blocks x %d counting warps, %zu B of shared memory\n",
              fe->last_launch().blocks, fe->last_launch().warps, fe->last_launch().shared_bytes);
  for (const auto& r : rows)
    if (!r.m.ok()) return fail("some equalizations FAILED or errored (see the status column)");
  return 0;
}

}  // namespace histeq::app
