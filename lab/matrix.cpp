#include "lab/matrix.h"

#include <algorithm>

namespace histeq::lab {

namespace {

// Whether kernel entry e computes the form a run asks for: an error naming the option, or ok.
Status check_form(const hist::KernelEntry& e, bool weighted, bool tiled) {
  if (weighted && !e.info.weighted)
    return HISTEQ_ERROR(Code::invalid_argument, "kernel '" + e.info.name + "' does not compute weighted histograms (--weighted)");
  if (tiled && !e.info.tiles)
    return HISTEQ_ERROR(Code::invalid_argument, "kernel '" + e.info.name + "' does not compute tiled histograms (--tiles)");
  return Status::ok();
}

// One instance of kernel n per (max_blocks, units_per_lane) pair, labelled name@N/uU.
Status add_instances(const std::string& n, const std::vector<int>& max_blocks, const std::vector<int>& units_per_lane,
                     std::vector<NamedKernel>& out) {
  for (int mb : max_blocks) {
    if (mb < 0) return HISTEQ_ERROR(Code::invalid_argument, "--max-blocks values must be >= 0");
    for (int u : units_per_lane) {
      if (u < 0) return HISTEQ_ERROR(Code::invalid_argument, "--units-per-lane values must be >= 0");
      hist::KernelOptions opts;
      opts.max_blocks = mb;
      opts.units_per_lane = u;
      auto k = hist::create_kernel(n, opts);
      if (!k) return k.status();
      out.push_back({n + (mb == 0 ? "" : "@" + std::to_string(mb)) + (u == 0 ? "" : "/u" + std::to_string(u)), std::move(k.value())});
    }
  }
  return Status::ok();
}

}  // namespace

Result<std::vector<NamedKernel>> select_kernels(const std::vector<std::string>& asked, int bins, bool weighted,
                                                const std::vector<int>& max_blocks, bool gpu, bool tiled,
                                                const std::vector<int>& units_per_lane) {
  std::vector<std::string> names = asked;
  const bool named = !names.empty();
  if (!named)
    for (const auto& e : hist::registry())
      if (e.info.alias_of.empty() && e.info.supports(1, bins) && check_form(e, weighted, tiled)) names.push_back(e.info.name);
  std::vector<NamedKernel> out;
  for (const auto& n : names) {
    const hist::KernelEntry* e = hist::find_kernel(n);
    if (e == nullptr) return hist::create_kernel(n).status();  // "unknown kernel (known: ...)"
    HISTEQ_TRY(check_form(*e, weighted, tiled));
    if (e->info.backend == Backend::gpu && !gpu) {
      if (named) return HISTEQ_ERROR(Code::no_device, "kernel '" + n + "' needs a CUDA device and none is available");
      continue;
    }
    HISTEQ_TRY(add_instances(n, max_blocks, units_per_lane, out));
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
  const std::string experiment =
      plan.tiled ? "tiles " + std::to_string(plan.tiles.cols) + "x" + std::to_string(plan.tiles.rows) : std::string();
  MatrixResult out;
  for (const auto& size : plan.sizes)
    for (bool padded : plan.padded)
      for (const auto& input : plan.inputs)
        run_case(eng, {size, padded, 1, 8, plan.bins, input, plan.weighted, plan.tiled, plan.tiles}, experiment, ks, out.rows,
                 sink);
  out.predictability = fill_predictability(out.rows);
  return out;
}

}  // namespace histeq::lab
