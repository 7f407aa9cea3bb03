// The scripts histeq ships (bench/quality.py, bench/plot_paper.py), found beside the running binary:
// an installed histeq reads them from its prefix's share/histeq (however the prefix was moved), a
// binary of the build tree from the source tree it was built from.
#include <filesystem>
#include <system_error>

#include "app/commands/commands.h"

#ifndef HISTEQ_DATA_RELDIR
#define HISTEQ_DATA_RELDIR "../share/histeq"
#endif
#ifndef HISTEQ_SOURCE_DIR
#define HISTEQ_SOURCE_DIR ""
#endif
#ifndef HISTEQ_BUILD_EXE_DIR
#define HISTEQ_BUILD_EXE_DIR ""
#endif

namespace histeq::app {

namespace fs = std::filesystem;

std::string shipped_data_dir() {
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (ec || exe.empty()) return {};
  return (exe.parent_path() / HISTEQ_DATA_RELDIR).lexically_normal().string();
}

std::string find_shipped_script(const std::string& name) {
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  // The source tree only for the binary the build tree holds: an installed copy must never reach
  // back into a checkout, which may be gone or belong to someone else.
  const bool build_tree = !ec && *HISTEQ_BUILD_EXE_DIR && fs::equivalent(exe.parent_path(), HISTEQ_BUILD_EXE_DIR, ec);
  return find_data_script(name, shipped_data_dir(), build_tree && !ec ? HISTEQ_SOURCE_DIR : "");
}

}  // namespace histeq::app
