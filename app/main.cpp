// histeq: real-time GPU video equalizer and histogram-kernel laboratory. Command-line entry point.
#include <CLI/CLI.hpp>

#include <csignal>
#include <cstdio>
#include <exception>
#include <functional>
#include <string>

#include "app/commands/commands.h"
#include "app/common/names.h"
#include "app/common/suggest.h"

namespace {

constexpr int kUsageError = 2;  // as ffmpeg-style tools (and getopt's users) exit on a bad command line

std::vector<std::string> option_names(const CLI::App& cmd) {
  std::vector<std::string> names;
  for (const CLI::Option* o : cmd.get_options()) {
    for (const auto& l : o->get_lnames()) names.push_back("--" + l);
    for (const auto& s : o->get_snames()) names.push_back("-" + s);
  }
  return names;
}

// A word CLI11 did not take, named, with the nearest command or flag: "unknown command 'exprot';
// did you mean 'export'?". "" when no word was left over (the error is of another kind).
std::string unknown_word(const CLI::App& app) {
  auto suggest = [](const std::string& word, const std::vector<std::string>& names) {
    const std::string near = histeq::app::nearest(word, names);
    return near.empty() ? std::string() : "; did you mean '" + near + "'?";
  };
  const std::vector<CLI::App*> used = app.get_subcommands();
  if (used.empty()) {
    for (const std::string& w : app.remaining()) {
      if (w.empty() || w[0] == '-') continue;
      std::vector<std::string> commands;
      for (const CLI::App* c : app.get_subcommands(std::function<bool(const CLI::App*)>())) commands.push_back(c->get_name());
      return "unknown command '" + histeq::app::escape_name(w) + "'" + suggest(w, commands);
    }
    return "";
  }
  for (const std::string& w : used.back()->remaining()) {
    if (w.size() < 2 || w[0] != '-') continue;
    const std::string flag = w.substr(0, w.find('='));
    return "unknown option '" + histeq::app::escape_name(flag) + "' for '" + used.back()->get_name() + "'" +
           suggest(flag, option_names(*used.back()));
  }
  return "";
}

}  // namespace

int main(int argc, char** argv) try {
  using namespace histeq::app;
  ignore_file_size_signal();
  CLI::App app{"histeq: real-time GPU video histogram equalization and a laboratory of histogram kernels"};
  app.require_subcommand(1);
  app.set_version_flag("--version", std::function<std::string()>(version_text), "print the version, the git commit, the FFmpeg and CUDA versions and what was built, then exit");

  bool info_markdown = false;
  app.add_subcommand("info", "GPU, driver and runtime versions, and the table of histogram kernels")
      ->add_flag("--markdown", info_markdown, "print the kernel table as Markdown (the README's)");
  bool controls_md = false;
  app.add_subcommand("controls", "the picture-quality controls: options, configuration keys, ranges, defaults")
      ->add_flag("--markdown", controls_md, "print the control table as Markdown (docs/controls.md's)");

  BenchOptions bench;
  for (int i = 0; i < argc; ++i) bench.argv.emplace_back(argv[i]);
  add_bench_command(app, bench);
  PlayOptions play;
  add_play_command(app, play);
  ExportCliOptions exp;
  add_export_command(app, exp);
  QualityCliOptions quality;
  quality.argv = bench.argv;
  add_quality_command(app, quality);
  std::string completion_shell;
  add_completion_command(app, completion_shell);

  try {
    std::vector<std::string> args = ffmpeg_spellings(argc, argv);  // -an, -sn, -map
    std::vector<char*> args_c;
    for (std::string& a : args) args_c.push_back(a.data());
    app.parse(argc, args_c.data());
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    // One line, not CLI11's multi-line banner; exit 2 for every usage error (CLI11's own codes are
    // 100 and up). A leftover word says what it is, before CLI11's "input is required".
    const std::string unknown = unknown_word(app);
    const std::string cmd = app.get_subcommands().empty() ? "histeq" : "histeq " + app.get_subcommands().back()->get_name();
    return fail((unknown.empty() ? std::string(e.what()) : unknown) + " (see " + cmd + " --help)", kUsageError);
  }

  if (app.got_subcommand("info")) return run_info(info_markdown);
  if (app.got_subcommand("controls")) return run_controls(controls_md);
  if (app.got_subcommand("bench")) return run_bench(bench);
  if (app.got_subcommand("play")) {
    auto q = play.quality.resolve();
    if (!q) return fail(q.status().message() + " (see histeq play --help)", kUsageError);
    warn(play.quality.warnings());
    play.eq.quality = *q;
    return run_play(play, bench.argv);
  }
  if (app.got_subcommand("export")) {
    auto q = exp.quality.resolve();
    if (!q) return fail(q.status().message() + " (see histeq export --help)", kUsageError);
    warn(exp.quality.warnings());
    exp.eq.quality = *q;
    return run_export(exp, bench.argv);
  }
  if (app.got_subcommand("quality")) return run_quality(quality);
  if (app.got_subcommand("completion")) return run_completion(app, completion_shell);
  return fail("no command given (see histeq --help)", kUsageError);
} catch (const std::exception& e) {
  // Unwinding ran the destructors (an export's temporary file is gone); say what happened in one line.
  return histeq::app::fail(std::string("internal error: ") + e.what(), 70);
}
