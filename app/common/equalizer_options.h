// The equalizer's own options on a command (play, export, quality), from their specs
// (core/equalize/equalizer_controls.h): -k/--kernel, --strength, --backend with --cpu as its
// shorthand, --device. Each command names the ones it takes; `device_help` replaces the spec's help
// where the command's device does more than equalize ("" = the spec's).
#pragma once

#include <initializer_list>
#include <string>

#include "core/pipeline/equalizer.h"

namespace CLI {
class App;
}

namespace histeq::app {

void add_equalizer_options(CLI::App* cmd, pipeline::EqualizerOptions& eq, std::initializer_list<const char*> which,
                           const std::string& device_help = "");

}  // namespace histeq::app
