#include <cstdio>
#include <string>

#include "app/commands/commands.h"
#include "core/cuda/device.h"
#include "core/equalize/controls.h"
#include "core/histogram/histogram.h"
#include "core/pipeline/equalizer.h"
#include "core/video/hw_decode.h"

namespace histeq::app {
namespace {

using hist::KernelInfo;

std::string escape_cell(const std::string& s) {
  std::string out;
  for (char c : s) out += c == '|' ? std::string("\\|") : std::string(1, c);
  return out;
}

bool is_default(const KernelInfo& k) { return k.name == pipeline::default_kernel(k.backend); }

// The README's kernel table: every registry entry, whatever this machine has.
void print_markdown() {
  std::printf("| name | on | bins 8-bit / 16-bit | time independent of content | idea | source |\n");
  std::printf("|---|---|---|---|---|---|\n");
  for (const auto& e : hist::registry()) {
    const KernelInfo& k = e.info;
    std::string name = "`" + k.name + "`";
    if (is_default(k)) name += " (default)";
    if (k.weighted) name += " (weighted)";
    if (k.tiles) name += " (tiles)";
    const std::string idea = k.alias_of.empty() ? k.description : "alias of `" + k.alias_of + "`: " + k.description;
    std::string source = k.paper == "-" ? "-" : k.paper + (k.section.empty() || k.section == "-" ? "" : ", " + k.section);
    std::printf("| %s | %s | %s / %s | %s | %s | %s |\n", name.c_str(), backend_name(k.backend), hist::bins_to_string(k.bins_8bit).c_str(),
                hist::bins_to_string(k.bins_16bit).c_str(), k.data_independent ? "yes" : "no", escape_cell(idea).c_str(),
                escape_cell(source).c_str());
  }
}

// Every GPU with its NVDEC engines: what a batch spreads over (--device) and how many jobs each gets.
void print_devices() {
  const int n = cuda::device_count();
  for (int i = 0; i < n; ++i) {
    const int engines = video::nvdec_engines(i);
    const std::string nvdec = engines > 0 ? std::to_string(engines) + " NVDEC engine" + (engines > 1 ? "s" : "")
                                          : std::string("NVDEC engines unknown");
    const auto info = cuda::device_info(i);
    std::printf("%-17sGPU %d, %s: %s\n", i == 0 ? "devices" : "", i, info ? info->name.c_str() : "?", nvdec.c_str());
  }
}

}  // namespace

int run_info(bool markdown) {
  if (markdown) {
    print_markdown();
    return 0;
  }
  std::printf("%s\n\n", version_text().c_str());
  const bool gpu = cuda::have_device();
  if (gpu) {
    auto d = cuda::device_info();
    if (!d) return fail(d.status().to_string());
    std::printf("GPU              %s (compute capability %d.%d)\n", d->name.c_str(), d->cc_major, d->cc_minor);
    std::printf("SMs              %d\n", d->sm_count);
    std::printf("shared mem / SM  %zu KiB (%zu KiB per block opt-in)\n", d->shared_mem_per_sm / 1024,
                d->shared_mem_per_block_optin / 1024);
    std::printf("L2               %zu MiB\n", d->l2_bytes >> 20);
    std::printf("memory           %.1f GiB\n", d->global_mem_bytes / double(1ull << 30));
    print_devices();
  } else {
    std::printf("GPU              none: no usable CUDA device; the GPU kernels below need one (marked \"needs GPU\")\n");
  }
  std::printf("default kernel   %s (GPU; plain settings: one fused histogram+LUT+apply launch), %s (CPU): thread-private counters, time independent of the picture\n",
              pipeline::default_kernel(Backend::gpu), pipeline::default_kernel(Backend::cpu));
  std::printf("\n%-18s %-4s %-9s %-10s %-5s %-8s %-6s %-9s %s\n", "kernel", "on", "8-bit", "16-bit", "indep", "weights", "tiles",
              "here", "description / source");
  for (const auto& e : hist::registry()) {
    const KernelInfo& k = e.info;
    const bool runs = k.backend == Backend::cpu || gpu;
    std::string desc = k.alias_of.empty() ? k.description : "alias of " + k.alias_of + ": " + k.description;
    if (is_default(k)) desc = "(default) " + desc;
    std::printf("%-18s %-4s %-9s %-10s %-5s %-8s %-6s %-9s %s\n", k.name.c_str(), k.backend == Backend::gpu ? "gpu" : "cpu",
                hist::bins_to_string(k.bins_8bit).c_str(), hist::bins_to_string(k.bins_16bit).c_str(),
                k.data_independent ? "yes" : "no", k.weighted ? "yes" : "-", k.tiles ? "yes" : "-", runs ? "runs" : "needs GPU",
                desc.c_str());
    std::printf("%-18s %-4s %-9s %-10s %-5s %-8s %-6s %-9s   %s, %s\n", "", "", "", "", "", "", "", "", k.paper.c_str(),
                k.section.c_str());
  }
  return 0;
}

int run_controls(bool markdown) {
  if (markdown) {
    std::fputs(controls_markdown().c_str(), stdout);
    return 0;
  }
  const eq::Quality d = eq::default_quality();
  std::printf("%-15s %-9s %-10s %-9s %s\n", "option", "key", "operation", "default", "values");
  for (const auto& c : eq::controls())
    std::printf("--%-13s %-9s %-10s %-9s %s\n", c.name.c_str(), c.config_key().c_str(), c.op.c_str(), eq::control_text(c, d).c_str(),
                eq::range_text(c).c_str());
  return 0;
}

}  // namespace histeq::app
