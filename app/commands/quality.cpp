// histeq quality: what the picture-quality controls do to real clips, beside the peers (ffmpeg's
// filters, OpenCV), and (--bench) what they cost on the GPU or the CPU.
//
//   histeq quality CLIP... -o DIR     every clip through each configuration (export, lossless
//                                     FFV1, stage times kept), then bench/quality.py: the peers and
//                                     the metrics -> DIR/quality.csv, quality.json, mean_luma.png
//   histeq quality --bench            the equalization's cost per frame (quality_bench.cpp)
#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <map>
#include <cstdio>
#include <cstdlib>
#include <filesystem>

#include "app/commands/commands.h"
#include "app/common/equalizer_options.h"
#include "lab/results.h"
#include "core/pipeline/export.h"
#include "core/pipeline/source_factory.h"

namespace histeq::app {
namespace {

namespace fs = std::filesystem;

}  // namespace

void add_quality_command(CLI::App& app, QualityCliOptions& o) {
  CLI::App* q = app.add_subcommand(
      "quality", "what the picture-quality controls do to clips beside ffmpeg's and OpenCV's equalizers (metrics, plot, stills), "
                 "or with --bench what they cost per frame");
  q->add_option("clips", o.clips, "video files (bench/make_quality_clips.py makes the documented ones)");
  q->add_option("-o,--out", o.out, "folder for the outputs, the metrics and the plot")->capture_default_str();
  q->add_option("--configs", o.configs, quality_configs_help())
      ->delimiter(',')
      ->capture_default_str();
  add_equalizer_options(q, o.eq, {"kernel", "backend"});
  q->add_option("--peers", o.peers, "auto: also ffmpeg's and OpenCV's equalizers where installed; none: histeq only")
      ->check(CLI::IsMember({"auto", "none"}))
      ->capture_default_str();
  q->add_flag("--stills", o.stills, "also side-by-side stills of each clip (DIR/stills)");
  q->add_flag("--no-metrics", o.no_metrics, "only the histeq outputs and the manifest (no Python)");
  q->add_option("--script", o.script, "the metrics script (default: quality.py of the installed share/histeq, or the source tree's bench/)");
  q->add_flag("--bench", o.bench, "time the equalization per frame in each mode instead (CUDA events, or the host clock with --cpu)");
  q->add_option("--sizes", o.sizes, "--bench: frame sizes (1080p, 4k, WxH)")->delimiter(',')->capture_default_str();
  q->add_option("--input", o.input, "--bench: a video whose frames are the content (tiled to each size); default: synthetic");
  q->add_option("--runs", o.runs, "--bench: timed frames per case")->capture_default_str();
  q->add_option("--json", o.json, "--bench: write the results as JSON");
  q->add_option("--csv", o.csv, "--bench: write the results as CSV");
}

namespace {

using Configs = std::vector<std::pair<std::string, eq::Quality>>;

Result<Configs> parse_configs(const std::vector<std::string>& specs) {
  Configs configs;
  for (const auto& c : specs) {
    std::vector<std::string> warnings;
    auto q = quality_config(c, &warnings);
    if (!q) return q.status();
    warn(warnings);
    configs.emplace_back(c.substr(0, c.find(':')), *q);
  }
  return configs;
}

// Each configuration with the temporal filter is measured against itself without it (the cut lag):
// that one is added to `configs` too, unless the list has it. Gives each such configuration's reference.
std::map<std::string, std::string> add_references(Configs& configs) {
  std::map<std::string, std::string> reference;
  for (size_t i = 0, n = configs.size(); i < n; ++i) {
    if (configs[i].second.temporal_s <= 0) continue;
    eq::Quality still = configs[i].second;
    still.temporal_s = 0;
    // The scene-cut threshold means nothing without the filter.
    auto without = [](eq::Quality q) {
      if (q.temporal_s <= 0) q.scene_cut = eq::Quality{}.scene_cut;
      return q;
    };
    auto same = std::find_if(configs.begin(), configs.end(), [&](const auto& c) { return without(c.second) == without(still); });
    if (same == configs.end()) {
      configs.emplace_back(configs[i].first + "-t0", still);
      reference[configs[i].first] = configs.back().first;
    } else {
      reference[configs[i].first] = same->first;
    }
  }
  return reference;
}

// The equalization's own time per frame: its operations' stages (no decode, copies or encode).
nlohmann::json equalize_ms(const pipeline::RunStats& stats) {
  const std::vector<video::StageId> eq_stages = {video::stage_id("denoise"), video::stage_id("histogram"), video::stage_id("lut"),
                                                 video::stage_id("temporal"), video::stage_id("apply")};
  nlohmann::json ms = nlohmann::json::array();
  for (const auto& r : stats.records()) {
    double t = 0;
    for (auto s : eq_stages)
      if (r.timing.has(s)) t += r.timing.get(s);
    ms.push_back(t);
  }
  return ms;
}

struct QualityRun {
  const QualityCliOptions& o;
  const std::atomic<bool>& stop;
  std::map<std::string, std::string> reference;
  nlohmann::json man;
};

// One clip through one configuration into DIR/runs (lossless FFV1), its entry added to the manifest.
// 0, or fail()'s code.
int run_config(QualityRun& run, const std::string& clip, const std::string& name, const std::string& cname, const eq::Quality& q) {
  pipeline::ExportOptions eo;
  eo.input = clip;
  eo.output = (fs::path(run.o.out) / "runs" / (name + "." + cname + ".mkv")).string();
  eo.overwrite = true;
  eo.codec = "ffv1";
  eo.pipeline.equalizer = run.o.eq;
  eo.pipeline.equalizer.quality = q;
  auto ex = pipeline::Exporter::open(eo);
  if (!ex) return fail(ex.status().to_string());
  pipeline::RunStats stats(600, true);
  set_signal_cleanup((*ex)->temp_path());
  auto rep = (*ex)->run(run.stop, &stats, [](const pipeline::ExportProgress&) {});
  set_signal_cleanup("");
  if (!rep) return fail(rep.status().code() == Code::cancelled ? "interrupted" : rep.status().to_string());
  const auto& pe = (*ex)->plan().equalizer;
  run.man["device"] = describe_equalizer(pe);
  run.man["runs"].push_back({{"clip", name}, {"config", cname}, {"quality", eq::describe(q)}, {"output", fs::absolute(eo.output).string()},
                             {"ms", equalize_ms(stats)}, {"reference", run.reference.count(cname) ? run.reference[cname] : ""},
                             {"time_note", std::string("histeq ") + (pe.backend == Backend::gpu ? "GPU" : "CPU") + " stage times, " +
                                               pe.kernel}});
  std::printf("histeq quality: %s %-10s %s: %lld frames, %.1f s\n", name.c_str(), cname.c_str(), eq::describe(q).c_str(),
              static_cast<long long>(rep->frames_out), rep->elapsed_s);
  std::fflush(stdout);
  return 0;
}

// One clip through every configuration; 0, or fail()'s code.
int run_clip(QualityRun& run, const Configs& configs, const std::string& clip) {
  pipeline::SourceRequest request;
  request.input = clip;
  auto src = pipeline::open_source(request);
  if (!src) return fail(src.status().to_string());
  const video::SourceInfo& info = src->source->info();
  const std::string name = fs::path(clip).stem().string();
  const fs::path meta = fs::path(clip).replace_extension(".json");
  run.man["clips"].push_back({{"name", name}, {"path", fs::absolute(clip).string()},
                              {"meta", fs::exists(meta) ? fs::absolute(meta).string() : ""},
                              {"width", info.format.width}, {"height", info.format.height}, {"bit_depth", info.format.bit_depth},
                              {"frames", info.frames_hint}});
  for (const auto& [cname, q] : configs)
    if (const int rc = run_config(run, clip, name, cname, q)) return rc;
  return 0;
}

// bench/quality.py (or --script) on the manifest: the peers, the metrics and the plot.
int run_metrics(const QualityCliOptions& o, const std::string& manifest) {
  const std::string script = o.script.empty() ? find_shipped_script("quality.py") : o.script;
  if (script.empty()) return fail("quality.py: the metrics script is missing from " + shipped_data_dir() + " (give --script, or --no-metrics)");
  if (!fs::exists(script)) return fail(script + ": the metrics script is missing (give --script, or --no-metrics)");
  auto quote = [](const std::string& s) {
    std::string q = "'";
    for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
    return q + "'";
  };
  const std::string py = fs::exists("/usr/bin/python3") ? "/usr/bin/python3" : "python3";
  const std::string run = py + " " + quote(script) + " --manifest " + quote(manifest) + " --out " + quote(o.out) + " --peers " +
                          o.peers + (o.stills ? " --stills" : "");
  std::fflush(stdout);
  const int rc = std::system(run.c_str());
  if (rc != 0) return fail("the metrics script failed (" + run + ")");
  return 0;
}

}  // namespace

int run_quality(const QualityCliOptions& o) {
  if (o.bench) return run_quality_bench(o);
  if (o.clips.empty()) return fail("give one or more clips (or --bench)", 2);
  for (const auto& clip : o.clips)
    if (clip == "-") return fail("-: quality reads each clip once per configuration: give a file, not standard input", 2);
  auto configs = parse_configs(o.configs);
  if (!configs) return fail(configs.status().message(), 2);
  std::map<std::string, std::string> reference = add_references(*configs);
  std::error_code ec;
  fs::create_directories(fs::path(o.out) / "runs", ec);
  if (ec) return fail(o.out + ": " + ec.message());
  QualityRun run{o, install_stop_signals(), std::move(reference), nlohmann::json{}};

  std::string cmd;
  for (const auto& a : o.argv) cmd += (cmd.empty() ? "" : " ") + a;
  run.man["command"] = cmd;
  run.man["clips"] = nlohmann::json::array();
  run.man["runs"] = nlohmann::json::array();
  for (const auto& clip : o.clips)
    if (const int rc = run_clip(run, *configs, clip)) return rc;
  const std::string manifest = (fs::path(o.out) / "histeq_runs.json").string();
  if (Status s = lab::write_file(manifest, [&](std::ostream& f) { f << run.man.dump(1) << '\n'; }); !s) return fail(s.to_string());
  if (o.no_metrics) {
    std::printf("histeq quality: wrote %s\n", manifest.c_str());
    return 0;
  }
  return run_metrics(o, manifest);
}

}  // namespace histeq::app
