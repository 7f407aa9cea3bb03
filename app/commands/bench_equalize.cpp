// histeq bench --equalize: the whole equalization per frame, fused against unfused
// (lab/equalize.h measures; this file parses, calls and prints).
#include <cstdio>

#include "app/commands/bench_print.h"
#include "app/commands/commands.h"
#include "lab/equalize.h"

namespace histeq::app {

int run_bench_equalize(const BenchOptions& o, lab::Engine& eng) {
  auto bench = lab::EqualizeBench::create(eng);
  if (!bench) return fail(bench.status().to_string());
  eng.set_options({o.runs, o.warmup, o.cpu_budget_s, false});
  lab::EqualizePlan plan;
  plan.depths = o.depths;
  const BenchOptions defaults;
  for (const auto& s : o.sizes == defaults.sizes ? std::vector<std::string>{"1080p", "4k"} : o.sizes) {
    auto sp = lab::parse_size(s);
    if (!sp) return fail(sp.status().message(), 2);
    plan.sizes.push_back(*sp);
  }
  auto parsed = parse_bench_inputs(o.inputs, eng.frame_count());
  if (!parsed) return fail(parsed.status().message(), 2);
  plan.inputs = std::move(parsed.value());

  std::printf("equalization per frame (histogram + LUT + apply); timed at strength 0, checked at strength 1\n");
  print_bench_header();
  std::vector<lab::Row> rows = (*bench)->run(plan, print_bench_row);
  const auto table = lab::fill_predictability(rows);
  print_predictability(table);
  const std::string cmd = command_line(o.argv);
  if (!o.csv.empty())
    if (Status st = lab::write_csv(o.csv, rows, cmd, eng.device().name); !st) return fail(st.to_string());
  if (!o.json.empty())
    if (Status st = lab::write_json(o.json, rows, cmd, &eng.device(), table); !st) return fail(st.to_string());
  const eq::FusedLaunch& l = (*bench)->last_launch();
  std::printf("\nx_cub = (cub + LUT + apply) median / this median; launch fused: %d blocks x %d counting warps, %zu B of shared memory\n",
              l.blocks, l.warps, l.shared_bytes);
  for (const auto& r : rows)
    if (!r.m.ok()) return fail("some equalizations FAILED or errored (see the status column)");
  return 0;
}

}  // namespace histeq::app
