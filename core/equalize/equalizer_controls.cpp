#include "core/equalize/equalizer_controls.h"

#include "core/histogram/histogram.h"

namespace histeq::eq {
namespace {

Control own_choice(const std::string& name, std::vector<Choice> choices, std::string help) {
  Control c = param_spec(name, {0, static_cast<double>(choices.size()) - 1}, 0, std::nullopt, {}, std::move(help), "");
  c.type = ControlType::choice;
  for (auto& ch : choices) {
    c.choices.push_back(std::move(ch.name));
    c.choice_help.push_back(std::move(ch.help));
  }
  return c;
}

std::vector<Control> make() {
  std::vector<Choice> kernels{{"auto", "the backend's default kernel"}};
  for (const auto& e : hist::registry()) kernels.push_back({e.info.name, e.info.description});
  std::vector<Control> t = {
      own_choice("kernel", kernels, "the histogram kernel; auto: method2_tuned on a GPU (fused with the LUT and apply), cpu_parallel on the CPU"),
      param_spec("strength", {0, 1}, 1, std::nullopt, {}, "0..1: blend of the equalized and the original luma", ""),
      own_choice("backend", {{"auto", "the GPU when there is one, else the CPU"}, {"gpu", "a CUDA GPU"}, {"cpu", "the CPU"}},
                 "where frames are equalized: auto (the GPU when there is one), gpu, cpu")
          .at_start_only(),
      // 255: more devices than any host has; the equalizer checks the ordinal against the machine.
      param_spec("device", {0, 255}, 0, std::nullopt, {}, "the CUDA device of the GPU backend (an index, as nvidia-smi lists them)", "")
          .at_start_only(),
  };
  for (auto& c : t) c.op = "equalizer";
  return t;
}

}  // namespace

const std::vector<Control>& equalizer_controls() {
  static const std::vector<Control> table = make();
  return table;
}

const Control* find_equalizer_control(const std::string& name) { return find_control(equalizer_controls(), name); }

}  // namespace histeq::eq
