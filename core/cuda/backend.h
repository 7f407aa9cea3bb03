// Where work runs: the one Backend enum of histeq (histogram kernels, equalizer stages, the
// pipeline and the player all use it).
#pragma once

namespace histeq {

enum class Backend { cpu, gpu };

constexpr const char* backend_name(Backend b) noexcept { return b == Backend::gpu ? "GPU" : "CPU"; }

}  // namespace histeq
