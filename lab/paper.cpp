// The papers' comparisons (paper.h lists them and their inputs).
#include "lab/paper.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <memory>

#include "lab/matrix.h"

namespace histeq::lab {
namespace {

std::vector<InputSpec> nugteren_inputs(size_t real_frames) {
  std::vector<InputSpec> in;
  for (size_t f = 0; f < real_frames; ++f) {
    InputSpec r;
    r.name = "real" + std::to_string(f + 1);
    r.real = true;
    r.frame = static_cast<int>(f);
    in.push_back(r);
  }
  in.push_back(*parse_input("uniform"));
  in.back().name = "random";
  in.push_back(*parse_input("degenerate"));
  return in;
}

// Mean, standard deviation (population, as across a fixed benchmark set), min and max of GB/s over
// the given rows.
Summary summarize_rows(const std::vector<const Row*>& rows) {
  Summary s;
  if (rows.empty()) return s;
  s.inputs = static_cast<int>(rows.size());
  s.min = s.max = rows[0]->m.gbps;
  for (const Row* r : rows) {
    s.mean += r->m.gbps;
    s.min = std::min(s.min, r->m.gbps);
    s.max = std::max(s.max, r->m.gbps);
  }
  s.mean /= rows.size();
  for (const Row* r : rows) s.stddev += (r->m.gbps - s.mean) * (r->m.gbps - s.mean);
  s.stddev = std::sqrt(s.stddev / rows.size());
  return s;
}

Status write_summary(const std::string& path, const std::vector<Summary>& sums, const std::string& command, const std::string& device) {
  return write_file(path, [&](std::ostream& f) {
    f << "# " << command << "\n# device: " << device << "\n";
    f << "experiment,size,scope,kernel,inputs,mean_gbps,relative,stddev_gbps,min_gbps,max_gbps\n";
    for (const auto& s : sums)
      f << s.experiment << ',' << s.size << ',' << s.scope << ',' << s.kernel << ',' << s.inputs << ',' << s.mean << ','
        << s.relative << ',' << s.stddev << ',' << s.min << ',' << s.max << '\n';
  });
}

// Each kernel's summary over the rows of one experiment: per size, over every input and over the
// real ones.
void summarize_experiment(const Experiment& ex, const std::vector<Row>& rows, std::vector<Summary>& sums) {
  for (const auto& size : ex.sizes) {
    for (const std::string scope : {"all", "real"}) {
      double base_mean = 0;
      for (const auto& name : ex.kernels) {
        std::vector<const Row*> sel;
        for (const auto& r : rows)
          if (r.kernel == name && r.size == size.name && r.m.ok() && (scope == "all" || r.input.rfind("real", 0) == 0)) sel.push_back(&r);
        if (sel.empty()) continue;
        Summary s = summarize_rows(sel);
        s.experiment = ex.id;
        s.kernel = name;
        s.size = size.name;
        s.scope = scope;
        if (base_mean == 0) base_mean = s.mean;  // the first kernel listed is the baseline
        s.relative = base_mean > 0 ? s.mean / base_mean : 0;
        sums.push_back(s);
      }
    }
  }
}

// One experiment's rows; false when a kernel was missing, FAILED or errored.
bool run_experiment(Engine& eng, const Experiment& ex, const PaperObserver& obs, std::vector<Row>& rows) {
  bool ok = true;
  std::map<std::string, std::unique_ptr<hist::Kernel>> kernels;
  std::vector<std::pair<std::string, Status>> missing;
  for (const auto& name : ex.kernels) {
    auto k = hist::create_kernel(name);
    if (!k) {
      missing.emplace_back(name, k.status());
      ok = false;
      continue;
    }
    kernels[name] = std::move(k.value());
  }
  std::vector<LabelledKernel> labelled;
  for (const auto& name : ex.kernels)
    if (auto it = kernels.find(name); it != kernels.end()) labelled.push_back({name, it->second.get()});
  if (obs.start) obs.start(ex, missing);
  for (const auto& size : ex.sizes) {
    for (const auto& input : ex.inputs)
      ok &= run_case(eng, {size, false, ex.bytes_per_sample, ex.bit_depth, ex.bins, input, ex.weighted}, ex.id, labelled, rows, obs.row);
  }
  return ok;
}

}  // namespace

std::vector<Experiment> paper_experiments(size_t real_frames) {
  const SizeSpec paper{"2048x2048", 2048, 2048};  // Nugteren §5.1: 2048x2048 8-bit images
  const SizeSpec big{"8k", 8192, 8192};            // past launch overheads and the L2: bandwidth-bound
  std::vector<Experiment> e;
  e.push_back({"nugteren_fig8", "Nugteren fig. 8 / table 2: method1 baseline and extensions", false,
               {"method1_base", "method1_ext1", "method1_ext2", "method1_ext3", "method1_ext2_ext3"}, {paper, big}, 1, 8, 256,
               nugteren_inputs(real_frames)});
  e.push_back({"nugteren_fig14", "Nugteren fig. 14: the four method2 memory mappings", false,
               {"method2_map1", "method2_map2", "method2", "method2_map4"}, {paper, big}, 1, 8, 256, nugteren_inputs(real_frames)});
  e.push_back({"nugteren_fig15", "Nugteren fig. 15: reference vs method1 vs method2 (and cub)", false,
               {"podlozhnyuk256", "method1_ext2", "method2", "cub"}, {paper, big}, 1, 8, 256, nugteren_inputs(real_frames)});
  Experiment xu{"xu_fig9", "Xu fig. 9: collision vs collision_reduced, weighted, Gaussian sigma sweep, 1024 bins", true,
                {"collision", "collision_reduced"}, {paper, big}, 2, 10, 1024, {}};
  for (int sigma : {0, 1, 2, 4, 8, 16, 32, 64, 128, 256}) xu.inputs.push_back(*parse_input("gaussian:" + std::to_string(sigma)));
  xu.inputs.push_back(*parse_input("uniform"));
  e.push_back(xu);
  Experiment course{"course_colours", "Course report: atomics baselines over the number of distinct colours", false,
                    {"original", "block_partition", "tlb", "tlb_blr", "linear", "method2", "cub"},
                    {{"640x426", 640, 426}, {"4k", 3840, 2160}}, 1, 8, 256, {}};
  for (int n : {1, 2, 5, 256}) course.inputs.push_back(*parse_input("colours:" + std::to_string(n)));
  e.push_back(course);
  Experiment pred{"predictability", "Predictability: time per content per kernel", false,
                  {"method2_tuned", "method2", "cub", "block_atomic"}, {{"1080p", 1920, 1080}, {"4k", 3840, 2160}}, 1, 8, 256, {}};
  for (const char* in : {"uniform", "degenerate", "natural", "gaussian8"}) pred.inputs.push_back(*parse_input(in));
  for (size_t f = 0; f < real_frames; ++f) {
    InputSpec r;
    r.name = "real" + std::to_string(f + 1);
    r.real = true;
    r.frame = static_cast<int>(f);
    pred.inputs.push_back(r);
  }
  e.push_back(pred);
  return e;
}

Result<std::vector<Experiment>> select_experiments(const std::vector<std::string>& ids, size_t real_frames) {
  const auto all = paper_experiments(real_frames);
  for (const auto& id : ids) {
    if (std::any_of(all.begin(), all.end(), [&](const Experiment& ex) { return ex.id == id; })) continue;
    std::string known;
    for (const auto& ex : all) known += (known.empty() ? "" : ", ") + ex.id;
    return HISTEQ_ERROR(Code::invalid_argument, "unknown experiment '" + id + "' (" + known + ")");
  }
  std::vector<Experiment> out;
  for (const auto& ex : all)
    if (ids.empty() || std::find(ids.begin(), ids.end(), ex.id) != ids.end()) out.push_back(ex);
  return out;
}

Result<PaperResult> run_paper(Engine& eng, const std::vector<Experiment>& experiments, const std::string& dir,
                              const std::string& command, const PaperObserver& observer) {
  PaperResult res;
  for (const Experiment& ex : experiments) {
    std::vector<Row> rows;
    res.failed |= !run_experiment(eng, ex, observer, rows);
    const auto table = fill_predictability(rows);
    if (observer.done) observer.done(ex, table);
    HISTEQ_TRY(write_csv(dir + "/" + ex.id + ".csv", rows, command, eng.device().name));
    summarize_experiment(ex, rows, res.summaries);
  }
  HISTEQ_TRY(write_summary(dir + "/summary.csv", res.summaries, command, eng.device().name));
  return res;
}

}  // namespace histeq::lab
