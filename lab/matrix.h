// `histeq bench`'s matrix: every kernel asked for on every size, pitch and input, each checked
// against cpu_reference before it is timed (engine.h gives the method). Also the case runner that
// bench --paper shares.
//
// Thread: the caller's (one Engine per thread). The sink is called on that thread.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "lab/engine.h"
#include "lab/results.h"

namespace histeq::lab {

struct LabelledKernel {
  std::string label;     // the kernel's name, or name@N in a grid sweep
  hist::Kernel* kernel;  // its name and options: run_case measures a fresh instance per case (not owned)
};

struct NamedKernel {
  std::string label;
  std::unique_ptr<hist::Kernel> kernel;
};
// The kernels to run: those named, or (names empty) every kernel this machine can run at `bins`
// (aliases, which repeat their target, only when named); one instance per --max-blocks value and
// --units-per-lane value, labelled name@N (N > 0 blocks) and name/uU (U > 0 units). Errors: an unknown name (Code::not_found, listing the known ones), a
// kernel that is not weighted under `weighted` (or has no tiled form under `tiled`), a named GPU
// kernel without a GPU (Code::no_device), a negative max_blocks, no kernel at all.
Result<std::vector<NamedKernel>> select_kernels(const std::vector<std::string>& names, int bins, bool weighted,
                                                const std::vector<int>& max_blocks, bool gpu, bool tiled = false,
                                                const std::vector<int>& units_per_lane = {0});
// Whether any of them runs on the CPU (the engine then keeps every buffer on the host).
bool any_cpu(const std::vector<NamedKernel>& kernels);
std::vector<LabelledKernel> labelled(const std::vector<NamedKernel>& kernels);

// Builds one case, measures the read ceiling (GPU) and every kernel on it, fills the ratios,
// appends the rows and passes each to `sink`. Returns false if any row is not ok (a case that
// cannot be built gives one error row, kernel "*").
bool run_case(Engine& eng, const CaseSpec& spec, const std::string& experiment, const std::vector<LabelledKernel>& kernels,
              std::vector<Row>& rows, const RowSink& sink = {});

struct MatrixPlan {
  std::vector<SizeSpec> sizes;
  std::vector<bool> padded;  // one entry per pitch kind, in the order asked
  std::vector<InputSpec> inputs;
  int bins = 256;
  bool weighted = false;
  bool tiled = false;  // every tile's histogram over `tiles` (the rows' experiment says "tiles CxR")
  hist::TileGrid tiles;
};
struct MatrixResult {
  std::vector<Row> rows;
  std::vector<Predictability> predictability;
  bool ok() const;  // every row ok
};
// Every size x pitch x input case of `plan` (8-bit samples), in that order, with run_case.
MatrixResult run_matrix(Engine& eng, const MatrixPlan& plan, const std::vector<NamedKernel>& kernels, const RowSink& sink = {});

}  // namespace histeq::lab
