#include "bench/lab/matrix.h"

#include <algorithm>

namespace histeq::lab {

Result<std::vector<NamedKernel>> select_kernels(const std::vector<std::string>& asked, int bins, bool weighted,
                                                const std::vector<int>& max_blocks, bool gpu) {
  std::vector<std::string> names = asked;
  const bool named = !names.empty();
  if (!named)
    for (const auto& e : hist::registry())
      if (e.info.alias_of.empty() && e.info.supports(1, bins) && (!weighted || e.info.weighted)) names.push_back(e.info.name);
  std::vector<NamedKernel> out;
  for (const auto& n : names) {
    const hist::KernelEntry* e = hist::find_kernel(n);
    if (e == nullptr) return hist::create_kernel(n).status();  // "unknown kernel (known: ...)"
    if (weighted && !e->info.weighted)
      return HISTEQ_ERROR(Code::invalid_argument, "kernel '" + n + "' does not compute weighted histograms (--weighted)");
    if (e->info.backend == Backend::gpu && !gpu) {
      if (named) return HISTEQ_ERROR(Code::no_device, "kernel '" + n + "' needs a CUDA device and none is available");
      continue;
    }
    for (int mb : max_blocks) {
      if (mb < 0) return HISTEQ_ERROR(Code::invalid_argument, "--max-blocks values must be >= 0");
      auto k = hist::create_kernel(n, {mb});
      if (!k) return k.status();
      out.push_back({mb == 0 ? n : n + "@" + std::to_string(mb), std::move(k.value())});
    }
  }
  if (out.empty()) return HISTEQ_ERROR(Code::invalid_argument, "no kernel to run");
  return out;
}

bool any_cpu(const std::vector<NamedKernel>& kernels) {
  return std::any_of(kernels.begin(), kernels.end(), [](const NamedKernel& k) { return k.kernel->info().backend == Backend::cpu; });
}

std::vector<LabelledKernel> labelled(const std::vector<NamedKernel>& kernels) {
  std::vector<LabelledKernel> out;
  for (const auto& k : kernels) out.push_back({k.label, k.kernel.get()});
  return out;
}

bool run_case(Engine& eng, const CaseSpec& spec, const std::string& experiment, const std::vector<LabelledKernel>& kernels,
              std::vector<Row>& rows, const RowSink& sink) {
  Row base = row_for(spec, experiment);
  CaseData cd;
  if (Status s = eng.build(spec, cd); !s) {
    base.kernel = "*";
    base.m.status = "error: " + s.to_string();
    rows.push_back(base);
    if (sink) sink(base);
    return false;
  }
  base.pitch = cd.pitch;
  base.bytes = cd.bytes;
  base.buffers = static_cast<int>(cd.buffers());
  const size_t first = rows.size();
  if (eng.gpu()) {
    Row r = base;
    r.kernel = "read_ceiling";
    r.backend = "gpu";
    r.m = eng.ceiling(cd);
    rows.push_back(r);
  }
  for (const auto& k : kernels) {
    Row r = base;
    r.kernel = k.label;
    r.backend = k.kernel->info().backend == Backend::gpu ? "gpu" : "cpu";
    // A fresh instance per case: kernels that adapt to what they have seen (hybrid probes its
    // candidates on its first calls) then adapt to this content, as in a video of stable content,
    // instead of carrying over a choice made on the previous case.
    auto fresh = hist::create_kernel(k.kernel->info().name, k.kernel->options());
    if (fresh) r.m = eng.measure(**fresh, cd);
    else r.m.status = "error: " + fresh.status().to_string();
    rows.push_back(r);
  }
  fill_ratios(rows, first);
  bool ok = true;
  for (size_t i = first; i < rows.size(); ++i) {
    if (sink) sink(rows[i]);
    ok &= rows[i].m.ok();
  }
  return ok;
}

bool MatrixResult::ok() const {
  return std::all_of(rows.begin(), rows.end(), [](const Row& r) { return r.m.ok(); });
}

MatrixResult run_matrix(Engine& eng, const MatrixPlan& plan, const std::vector<NamedKernel>& kernels, const RowSink& sink) {
  const std::vector<LabelledKernel> ks = labelled(kernels);
  MatrixResult out;
  for (const auto& size : plan.sizes)
    for (bool padded : plan.padded)
      for (const auto& input : plan.inputs)
        run_case(eng, {size, padded, 1, 8, plan.bins, input, plan.weighted}, "", ks, out.rows, sink);
  out.predictability = fill_predictability(out.rows);
  return out;
}

}  // namespace histeq::lab
