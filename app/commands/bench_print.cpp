#include "app/commands/bench_print.h"

#include <cstdio>

namespace histeq::app {

void print_bench_header() {
  std::printf("%-10s %-6s %-12s %-18s %10s %10s %9s %7s %7s %5s  %s\n", "size", "pitch", "input", "kernel", "median_us",
              "p99_us", "GB/s", "x_cub", "x_ceil", "runs", "status");
}

void print_bench_row(const lab::Row& r) {
  if (!r.m.ok()) {
    std::printf("%-10s %-6s %-12s %-18s %10s %10s %9s %7s %7s %5s  %s\n", r.size.c_str(), r.pitch_kind.c_str(), r.input.c_str(),
                r.kernel.c_str(), "-", "-", "-", "-", "-", "-", r.m.status.c_str());
  } else {
    auto ratio = [](double v) {
      char b[16];
      if (v > 0) std::snprintf(b, sizeof(b), "%.2f", v);
      else std::snprintf(b, sizeof(b), "-");
      return std::string(b);
    };
    std::printf("%-10s %-6s %-12s %-18s %10.1f %10.1f %9.1f %7s %7s %5d  %s\n", r.size.c_str(), r.pitch_kind.c_str(),
                r.input.c_str(), r.kernel.c_str(), r.m.t.median_us, r.m.t.p99_us, r.m.gbps, ratio(r.x_cub).c_str(),
                ratio(r.x_ceiling).c_str(), r.m.t.runs, r.m.status.c_str());
  }
  std::fflush(stdout);
}

void print_predictability(const std::vector<lab::Predictability>& table) {
  std::printf("\npredictability: per kernel and size, the medians over the inputs (max/min) and the worst p99/median\n");
  std::printf("%-10s %-6s %4s %-22s %6s %10s %10s %8s %-12s %9s %-12s\n", "size", "pitch", "bits", "kernel", "inputs",
              "min_med_us", "max_med_us", "max/min", "slowest", "p99/med", "(input)");
  for (const auto& p : table) {
    char mm[16];
    if (p.max_over_min > 0) std::snprintf(mm, sizeof(mm), "%.3f", p.max_over_min);
    else std::snprintf(mm, sizeof(mm), "-");
    std::printf("%-10s %-6s %4d %-22s %6d %10.1f %10.1f %8s %-12s %9.3f %-12s\n", p.size.c_str(), p.pitch_kind.c_str(), p.bits,
                p.kernel.c_str(), p.inputs, p.min_median_us, p.max_median_us, mm, p.slowest_input.c_str(), p.worst_p99_over_median,
                p.worst_p99_input.c_str());
  }
  std::fflush(stdout);
}

Result<std::vector<lab::InputSpec>> parse_bench_inputs(const std::vector<std::string>& names, size_t real_frames) {
  std::vector<lab::InputSpec> inputs;
  for (const auto& s : names) {
    auto in = lab::parse_input(s);
    if (!in) return in.status();
    if (in->real && real_frames == 0) {
      std::printf("note: input 'real' skipped: give a video or image file with --input\n");
      continue;
    }
    inputs.push_back(*in);
  }
  return inputs;
}

std::string command_line(const std::vector<std::string>& argv) {
  std::string cmd;
  for (const auto& a : argv) cmd += (cmd.empty() ? "" : " ") + a;
  return cmd;
}

}  // namespace histeq::app
