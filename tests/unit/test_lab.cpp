// The lab (lab/): what `histeq bench` and `histeq quality --bench` measure, driven as a
// library, without the CLI. On a machine with a GPU the engine times there too (the matrix's
// cases then also get a read-ceiling row); everything below holds on either.
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <sstream>
#include <unistd.h>

#include "lab/engine.h"
#include "lab/frame_cost.h"
#include "lab/matrix.h"
#include "lab/paper.h"
#include "lab/results.h"

namespace histeq::lab {
namespace {

TEST(Lab, ParsesSizesAndInputs) {
  auto s = parse_size("1921x1081");
  ASSERT_TRUE(s);
  EXPECT_EQ(s->width, 1921);
  EXPECT_EQ(s->height, 1081);
  EXPECT_EQ(parse_size("4k")->width, 3840);
  EXPECT_EQ(parse_size("12").status().message(), "bad size '12' (1080p, 4k, 8k, 1g or WxH)");
  EXPECT_FALSE(parse_size("0x5"));
  auto g = parse_input("gaussian8");
  ASSERT_TRUE(g);
  EXPECT_EQ(g->pattern, synth::Pattern::gaussian);
  EXPECT_EQ(g->value, 8u);
  EXPECT_EQ(g->name, "gaussian8");
  EXPECT_TRUE(parse_input("real")->real);
  EXPECT_EQ(parse_input("colours").status().message(), "input 'colours' needs a parameter, e.g. gaussian:32 or colours:5");
  EXPECT_EQ(parse_input("gaussian:x").status().message(), "bad parameter in input 'gaussian:x'");
  EXPECT_EQ(pitch_for({"t", 100, 10}, 2, true), 512u);
  EXPECT_EQ(pitch_for({"t", 100, 10}, 2, false), 200u);
}

TEST(Lab, SummarizesMedianAndP99) {
  std::vector<double> us;
  for (int i = 100; i >= 1; --i) us.push_back(i);
  const Stats s = summarize(us);
  EXPECT_EQ(s.runs, 100);
  EXPECT_DOUBLE_EQ(s.median_us, 50.5);
  EXPECT_DOUBLE_EQ(s.p99_us, 99);
  EXPECT_EQ(summarize({}).runs, 0);
}

Row ok_row(const std::string& kernel, const std::string& input, double median, double p99) {
  Row r;
  r.size = "1080p";
  r.pitch_kind = "tight";
  r.kernel = kernel;
  r.input = input;
  r.m.status = "ok";
  r.m.t = {median, p99, 10};
  r.m.gbps = 1000 / median;
  return r;
}

TEST(Lab, PredictabilityAndRatios) {
  std::vector<Row> rows{ok_row("read_ceiling", "a", 5, 5), ok_row("cub", "a", 20, 22), ok_row("k", "a", 10, 30),
                        ok_row("k", "b", 40, 44)};
  rows.push_back(ok_row("k", "c", 1, 1));
  rows.back().m.status = "FAILED: bin 3";  // not counted
  fill_ratios(rows, 0);
  EXPECT_DOUBLE_EQ(rows[2].x_cub, 2.0);
  EXPECT_DOUBLE_EQ(rows[2].x_ceiling, (1000.0 / 10) / (1000.0 / 5));
  EXPECT_EQ(rows[0].x_cub, 0);  // the ceiling is not compared with cub
  const auto table = fill_predictability(rows);
  ASSERT_EQ(table.size(), 3u);  // read_ceiling, cub, k
  const Predictability& k = table[2];
  EXPECT_EQ(k.kernel, "k");
  EXPECT_EQ(k.inputs, 2);
  EXPECT_DOUBLE_EQ(k.max_over_min, 4.0);
  EXPECT_EQ(k.slowest_input, "b");
  EXPECT_EQ(k.fastest_input, "a");
  EXPECT_DOUBLE_EQ(k.worst_p99_over_median, 3.0);
  EXPECT_EQ(k.worst_p99_input, "a");
  EXPECT_DOUBLE_EQ(rows[3].maxmin_across_inputs, 4.0);
  EXPECT_EQ(table[1].max_over_min, 0);  // one input: no ratio
}

TEST(Lab, SelectsKernelsWithTheCliErrors) {
  auto unknown = select_kernels({"nosuch"}, 256, false, {0}, false);
  ASSERT_FALSE(unknown);
  EXPECT_EQ(unknown.status().code(), Code::not_found);
  auto unweighted = select_kernels({"cpu_parallel"}, 256, true, {0}, false);
  ASSERT_FALSE(unweighted);
  EXPECT_EQ(unweighted.status().message(), "kernel 'cpu_parallel' does not compute weighted histograms (--weighted)");
  EXPECT_EQ(select_kernels({"method2"}, 256, false, {0}, false).status().code(), Code::no_device);
  EXPECT_EQ(select_kernels({"cpu_reference"}, 256, false, {-1}, false).status().message(), "--max-blocks values must be >= 0");
  auto sweep = select_kernels({"cpu_parallel"}, 256, false, {0, 4}, false);
  ASSERT_TRUE(sweep);
  ASSERT_EQ(sweep->size(), 2u);
  EXPECT_EQ((*sweep)[1].label, "cpu_parallel@4");
  auto plans = select_kernels({"cpu_parallel"}, 256, false, {0, 4}, false, false, {0, 8});
  ASSERT_TRUE(plans);
  ASSERT_EQ(plans->size(), 4u);
  EXPECT_EQ((*plans)[1].label, "cpu_parallel/u8");
  EXPECT_EQ((*plans)[3].label, "cpu_parallel@4/u8");
  EXPECT_EQ((*plans)[3].kernel->options().units_per_lane, 8);
  EXPECT_EQ(select_kernels({"cpu_parallel"}, 256, false, {0}, false, false, {-2}).status().message(),
            "--units-per-lane values must be >= 0");
  // None named without a GPU: the CPU kernels only.
  auto all = select_kernels({}, 256, false, {0}, false);
  ASSERT_TRUE(all);
  for (const auto& k : *all) EXPECT_EQ(k.kernel->info().backend, Backend::cpu) << k.label;
}

TEST(Lab, MatrixChecksAndTimesEveryCase) {
  auto eng = Engine::create({5, 1, 0.01, true});
  ASSERT_TRUE(eng) << eng.status().to_string();
  auto kernels = select_kernels({"cpu_reference", "cpu_parallel"}, 64, false, {0}, (*eng)->gpu());
  ASSERT_TRUE(kernels);
  MatrixPlan plan;
  // One size: a case fills its rotating buffers (twice a CPU cache, 128 MiB) whatever the size.
  plan.sizes = {*parse_size("2000x1000")};
  plan.padded = {false, true};
  plan.inputs = {*parse_input("degenerate"), *parse_input("colours:3")};
  plan.bins = 64;
  std::vector<Row> seen;
  const MatrixResult res = run_matrix(**eng, plan, *kernels, [&](const Row& r) { seen.push_back(r); });
  const size_t per_case = 2 + ((*eng)->gpu() ? 1 : 0);
  ASSERT_EQ(res.rows.size(), 4 * per_case);
  EXPECT_TRUE(res.ok());
  ASSERT_EQ(seen.size(), res.rows.size());  // every row reached the sink, in order
  for (size_t i = 0; i < seen.size(); ++i) EXPECT_EQ(seen[i].kernel, res.rows[i].kernel);
  const Row& r = res.rows[per_case * 2 + per_case - 1];  // padded, degenerate: cpu_parallel
  EXPECT_EQ(r.size, "2000x1000");
  EXPECT_EQ(r.pitch_kind, "padded");
  EXPECT_EQ(r.input, "degenerate");
  EXPECT_EQ(r.kernel, "cpu_parallel");
  EXPECT_EQ(r.bins, 64);
  EXPECT_EQ(r.pitch, 2048u);
  EXPECT_EQ(r.bytes, 2000u * 1000u);
  EXPECT_GE(r.buffers, 3);
  EXPECT_GE(r.m.t.runs, 5);
  EXPECT_GT(r.m.t.median_us, 0);
  // One predictability line per pitch and kernel, over the two inputs.
  ASSERT_EQ(res.predictability.size(), 2 * per_case);
  for (const auto& p : res.predictability) EXPECT_EQ(p.inputs, 2) << p.kernel;
}

TEST(Lab, TiledMatrixChecksEveryTileAgainstTheReference) {
  EXPECT_EQ(select_kernels({"cub"}, 256, false, {0}, false, true).status().message(),
            "kernel 'cub' does not compute tiled histograms (--tiles)");
  auto eng = Engine::create({5, 1, 0.01, true});
  ASSERT_TRUE(eng) << eng.status().to_string();
  auto kernels = select_kernels({}, 256, false, {0}, (*eng)->gpu(), true);
  ASSERT_TRUE(kernels);
  for (const auto& k : *kernels) EXPECT_TRUE(k.kernel->info().tiles) << k.label;
  MatrixPlan plan;
  plan.sizes = {*parse_size("1001x999")};  // tiles of uneven sizes
  plan.padded = {true};
  plan.inputs = {*parse_input("natural")};
  plan.tiled = true;
  plan.tiles = {3, 2};
  const MatrixResult res = run_matrix(**eng, plan, *kernels);
  EXPECT_TRUE(res.ok());
  for (const Row& r : res.rows) {
    EXPECT_EQ(r.experiment, "tiles 3x2");
    EXPECT_TRUE(r.m.ok()) << r.kernel << ": " << r.m.status;
  }
  // A kernel without the tiled form gives an error row, not a plain histogram passed off as tiles.
  auto cases = CaseData{};
  CaseSpec spec{*parse_size("64x32"), false, 1, 8, 256, *parse_input("uniform"), false, true, {2, 2}};
  ASSERT_TRUE((*eng)->build(spec, cases).is_ok());
  EXPECT_EQ(cases.reference_first.size(), 4u * 256u);
  const hist::KernelEntry* cub_entry = hist::find_kernel("cub");
  ASSERT_NE(cub_entry, nullptr);
  auto cub = cub_entry->make(cub_entry->info, {});  // the factory alone: no device needed to be refused
  ASSERT_TRUE(cub) << cub.status().to_string();
  EXPECT_EQ((*eng)->measure(**cub, cases).status, "error: kernel 'cub' does not compute tiled histograms");
}

TEST(Lab, MatrixGivesAnErrorRowForACaseThatCannotBeBuilt) {
  auto eng = Engine::create({5, 0, 0.01, true});
  ASSERT_TRUE(eng);
  auto kernels = select_kernels({"cpu_reference"}, 256, false, {0}, (*eng)->gpu());
  ASSERT_TRUE(kernels);
  MatrixPlan plan;
  plan.sizes = {*parse_size("16x16")};  // fails before a buffer is filled
  plan.padded = {false};
  plan.inputs = {*parse_input("real")};  // and the engine has no frames
  const MatrixResult res = run_matrix(**eng, plan, *kernels);
  ASSERT_EQ(res.rows.size(), 1u);
  EXPECT_EQ(res.rows[0].kernel, "*");
  EXPECT_EQ(res.rows[0].m.status, "error: input 'real' needs frames (give a video or image file)");
  EXPECT_FALSE(res.ok());
}

TEST(Lab, ResultFilesKeepTheirColumns) {
  char dir[] = "/tmp/histeq_lab_XXXXXX";
  ASSERT_NE(mkdtemp(dir), nullptr);
  const std::string csv = std::string(dir) + "/r.csv";
  std::vector<Row> rows{ok_row("k", "a", 10, 12)};
  rows[0].m.status = "FAILED: a, b";
  ASSERT_TRUE(write_csv(csv, rows, "histeq bench", "none"));
  std::ifstream f(csv);
  std::string l1, l2, header, row;
  std::getline(f, l1);
  std::getline(f, l2);
  std::getline(f, header);
  std::getline(f, row);
  EXPECT_EQ(l1, "# histeq bench");
  EXPECT_EQ(l2, "# device: none");
  EXPECT_EQ(header,
            "experiment,size,width,height,pitch_kind,pitch,bits,bins,input,kernel,backend,status,buffers,runs,median_us,p99_us,gbps,"
            "x_cub,x_ceiling,p99_over_median,maxmin_across_inputs");
  EXPECT_EQ(std::count(row.begin(), row.end(), ','), 20) << row;  // the status's comma became ';'
  EXPECT_NE(row.find("FAILED: a; b"), std::string::npos) << row;
  EXPECT_FALSE(write_csv(std::string(dir) + "/none/r.csv", rows, "", ""));
  EXPECT_EQ(access((std::string(dir) + "/none/r.csv.tmp").c_str(), F_OK), -1);
  std::remove(csv.c_str());
  rmdir(dir);
}

TEST(Lab, PaperExperimentsAreSelectedById) {
  auto bad = select_experiments({"nosuch"}, 0);
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.status().message(),
            "unknown experiment 'nosuch' (nugteren_fig8, nugteren_fig14, nugteren_fig15, xu_fig9, course_colours, predictability)");
  auto two = select_experiments({"predictability", "xu_fig9"}, 2);
  ASSERT_TRUE(two);
  ASSERT_EQ(two->size(), 2u);
  EXPECT_EQ((*two)[0].id, "xu_fig9");  // in the paper's order, not the order asked
  EXPECT_EQ((*two)[0].inputs.size(), 11u);
  EXPECT_EQ((*two)[0].bins, 1024);
  EXPECT_EQ((*two)[1].inputs.size(), 6u);  // four patterns and the two real frames
  EXPECT_EQ((*two)[1].inputs[5].name, "real2");
  EXPECT_EQ(select_experiments({}, 0)->size(), 6u);
}

TEST(Lab, FrameCostTimesEveryModeOnTheCpu) {
  auto bench = FrameCostBench::create(false, "cpu_parallel", 10, {});
  ASSERT_TRUE(bench) << bench.status().to_string();
  int done = 0;
  ASSERT_TRUE((*bench)->run_size(*parse_size("64x48"), [&](const FrameCost&) { ++done; }));
  const auto& res = (*bench)->results();
  ASSERT_EQ(res.size(), 5u);
  EXPECT_EQ(done, 5);
  const char* names[] = {"plain", "global+all", "clahe 8x8", "clahe 8x8+all", "global+denoise"};
  for (size_t i = 0; i < res.size(); ++i) {
    EXPECT_EQ(res[i].name, names[i]);
    EXPECT_EQ(res[i].size, "64x48");
    EXPECT_EQ(res[i].total.runs, 10);
    EXPECT_GT(res[i].total.median_us, 0);
    EXPECT_FALSE(res[i].stages.empty());
  }
  EXPECT_DOUBLE_EQ(res[0].x_plain, 1.0);
  EXPECT_EQ(res[0].stages.front().first, "histogram");
  EXPECT_EQ(res[4].stages.front().first, "denoise");  // the denoiser runs first, and only there
  for (size_t i = 0; i < 4; ++i) EXPECT_NE(res[i].stages.front().first, "denoise");
}

}  // namespace
}  // namespace histeq::lab
