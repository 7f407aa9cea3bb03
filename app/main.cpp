// histeq: real-time GPU video equalizer and histogram-kernel laboratory. Command-line entry point.
#include <CLI/CLI.hpp>

#include <cstdio>
#include <string>

#include "app/commands/commands.h"

int main(int argc, char** argv) {
  using namespace histeq::app;
  CLI::App app{"histeq: real-time GPU video histogram equalization and a laboratory of histogram kernels"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "histeq 0.1.0");

  bool info_markdown = false;
  app.add_subcommand("info", "GPU, driver and runtime versions, and the table of histogram kernels")
      ->add_flag("--markdown", info_markdown, "print the kernel table as Markdown (the README's)");

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

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    // One line, not CLI11's multi-line banner.
    return fail(std::string(e.what()) + " (see histeq --help)", e.get_exit_code() == 0 ? 2 : e.get_exit_code());
  }

  if (app.got_subcommand("info")) return run_info(info_markdown);
  if (app.got_subcommand("bench")) return run_bench(bench);
  if (app.got_subcommand("play")) {
    auto q = play.quality.resolve();
    if (!q) return fail(q.status().message() + " (see histeq play --help)", 2);
    play.eq.quality = *q;
    return run_play(play, bench.argv);
  }
  if (app.got_subcommand("export")) {
    auto q = exp.quality.resolve();
    if (!q) return fail(q.status().message() + " (see histeq export --help)", 2);
    exp.eq.quality = *q;
    return run_export(exp, bench.argv);
  }
  if (app.got_subcommand("quality")) return run_quality(quality);
  return fail("no command given (see histeq --help)", 2);
}
