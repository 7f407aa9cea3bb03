#include "app/common/equalizer_options.h"

#include <CLI/CLI.hpp>

#include "core/cuda/device.h"
#include "core/equalize/equalizer_controls.h"

namespace histeq::app {
namespace {

// --backend (a choice of the spec) and --cpu, its shorthand of before: both set eq.cpu; gpu
// refuses a machine without a CUDA device instead of falling back to the CPU as auto does.
void add_backend(CLI::App* cmd, pipeline::EqualizerOptions& eq, const eq::Control& c) {
  CLI::Option* backend = cmd->add_option_function<std::string>(
                                "--" + c.name, [&eq](const std::string& v) { eq.cpu = v == "cpu"; }, c.help)
                             ->check(CLI::IsMember(c.choices))
                             ->check(CLI::Validator(
                                 [](std::string& v) { return v == "gpu" && !cuda::have_device() ? std::string("no CUDA device here") : std::string(); },
                                 "", "a GPU present"))
                             ->default_str(c.choices[static_cast<size_t>(c.fallback)]);
  cmd->add_flag("--cpu", eq.cpu, "equalize on the CPU even when a GPU is present (--" + c.name + " cpu)")->excludes(backend);
}

}  // namespace

void add_equalizer_options(CLI::App* cmd, pipeline::EqualizerOptions& eq, std::initializer_list<const char*> which,
                           const std::string& device_help) {
  for (const char* name : which) {
    const eq::Control* c = eq::find_equalizer_control(name);
    if (c == nullptr) continue;  // a name the table lost: tests/unit checks each command's options
    if (c->name == "kernel") {
      cmd->add_option_function<std::string>(
          "-k,--kernel", [&eq, c](const std::string& v) { eq.kernel = v == c->choices[0] ? "" : v; }, c->help);
    } else if (c->name == "strength") {
      cmd->add_option("--" + c->name, eq.strength, c->help)->capture_default_str();
    } else if (c->name == "backend") {
      add_backend(cmd, eq, *c);
    } else if (c->name == "device") {
      cmd->add_option("--" + c->name, eq.device, device_help.empty() ? c->help : device_help)->check(CLI::NonNegativeNumber);
    }
  }
}

}  // namespace histeq::app
