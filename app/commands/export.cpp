// histeq export: equalize every frame of a video file into a new file (audio and subtitles copied),
// or the part of it between --start and --end, with a progress line (or JSON lines), a clean stop on
// Ctrl-C and no partial output. Several inputs or a folder go to export_batch.cpp. The input "-" is
// standard input, read to its end; the output "-" is standard output (-f: the container), and then
// everything else this command prints, --progress json included, goes to stderr.
#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <optional>

#include "app/commands/commands.h"
#include "app/common/equalizer_options.h"
#include "app/common/names.h"
#include "app/common/run_common.h"
#include "core/cuda/device.h"
#include "core/pipeline/export.h"
#include "core/video/writer.h"

namespace histeq::app {
namespace {

using Clock = std::chrono::steady_clock;
using nlohmann::json;

// Where --progress json's lines go: stdout, or stderr when stdout carries the video (-o -).
FILE* g_json_out = stdout;

void print_json(const json& j) {
  std::fprintf(g_json_out, "%s\n", dump_json(j).c_str());
  std::fflush(g_json_out);
}

bool is_stdout(const std::string& output) { return output == "-"; }

// The header's and the last line's names: "-" said as the stream it is.
std::string shown(const std::string& name, const char* standard) { return name == "-" ? standard : escape_name(name); }

// `j` with the file name `name` under `key` (put_name: its bytes kept when it is not UTF-8).
json named(json j, const std::string& key, const std::string& name) {
  put_name(j, key, name);
  return j;
}

bool is_folder(const std::string& p) {
  struct stat st {};
  return ::stat(p.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

}  // namespace

namespace {

// The streams written and the encoder's settings, in ffmpeg's spelling where it has one
// (-an, -sn and -map are rewritten to --an, --sn, --map before parsing: ffmpeg_spellings()).
void add_encode_options(CLI::App* e, ExportCliOptions& o) {
  e->add_option("--map", o.maps, "-map: the input's streams to write, ffmpeg's subset: 0 (all), 0:a, 0:s, 0:a:1 (the second audio), "
                                 "0:3 (stream 3), -0:s (remove), 0:a:2? (if there is one); the equalized video is always written")
      ->expected(1)
      ->allow_extra_args(false)  // one value each time: the input may follow
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  e->add_flag("--an", o.no_audio, "-an: no audio streams");
  e->add_flag("--sn", o.no_subtitles, "-sn: no subtitle streams");
  e->add_option("--audio-codec", o.audio_codec, "copy, or an audio encoder (libopus, aac, ...); default: copy where the container "
                                                "holds the codec, else the container's usual audio codec (with a note)");
  e->add_option("--bitrate", o.bitrate, "video bit rate, e.g. 4M or 2500k (the encoder's -b:v)");
  e->add_option("--encoder-opt", o.encoder_opts, "KEY=VALUE: one of the encoder's options (repeatable), e.g. tune=film, "
                                                 "x265-params=aq-mode=3; an unknown key is an error")
      ->expected(1)
      ->allow_extra_args(false)  // one value each time: the input may follow
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  e->add_option("--pix-fmt", o.pix_fmt, "the encoded pixel format, e.g. yuv420p, yuv420p10le, yuv444p (one the encoder takes)");
  e->add_option("--gop", o.gop, "the key frame interval in frames, the GOP size (ffmpeg's -g; x264 keeps it exactly, x265 within a frame)")->check(CLI::PositiveNumber);
  e->add_option("--tag", o.tag, "the video's codec tag, e.g. hvc1 (HEVC in MP4 for Apple players)");
}

}  // namespace

std::vector<std::string> ffmpeg_spellings(int argc, char** argv) {
  std::vector<std::string> args(argv, argv + argc);
  for (size_t i = 1; i < args.size() && args[i] != "--"; ++i)
    if (args[i] == "-an" || args[i] == "-sn" || args[i] == "-map") args[i] = "-" + args[i];
  return args;
}

Status parse_encode_args(const ExportCliOptions& o, pipeline::ExportOptions& eo) {
  video::StreamChoice& sc = eo.streams;
  for (const std::string& m : o.maps) {
    auto map = video::parse_stream_map(m);
    if (!map) return map.status();
    sc.maps.push_back(*map);
  }
  sc.no_audio = o.no_audio;
  sc.no_subtitles = o.no_subtitles;
  sc.audio_codec = o.audio_codec;
  video::EncoderControl& ec = eo.encoder_control;
  if (!o.bitrate.empty()) {
    auto b = video::parse_bit_rate(o.bitrate);
    if (!b) return b.status();
    ec.bit_rate = *b;
  }
  for (const std::string& kv : o.encoder_opts) {
    auto p = video::parse_encoder_option(kv);
    if (!p) return p.status();
    ec.options.push_back(*p);
  }
  if (!o.tag.empty() && o.tag.size() != 4)
    return HISTEQ_ERROR(Code::invalid_argument, "--tag " + o.tag + ": a codec tag is four characters (hvc1, avc1, ...)");
  ec.pix_fmt = o.pix_fmt;
  ec.gop = o.gop;
  ec.tag = o.tag;
  return Status::ok();
}

void add_export_command(CLI::App& app, ExportCliOptions& o) {
  CLI::App* e = app.add_subcommand("export", "equalize every frame of a video into a new file (audio and subtitles copied); "
                                             "several files or a folder into -o DIR/");
  e->add_option("input", o.inputs, "the video(s) to read, or folders of videos; - for standard input (read to its end)")->required();
  e->add_option("-o,--output", o.output, "the file to write (its extension picks the container: .mp4, .mkv, .mov, ...); "
                                         "for several inputs or a folder, the folder DIR/ to write into; - for standard output")->required();
  e->add_option("-f,--format", o.format, "the container, as ffmpeg's -f (nut, matroska, mpegts, yuv4mpegpipe, rawvideo, mp4, ...): "
                                         "default from the output's extension; with -o -, matroska; null: decode and equalize every frame, "
                                         "write nothing (as ffmpeg's -f null -)");
  e->add_flag("--live", o.live, "read standard input or a file as a live stream: frames are dropped (and counted) rather than "
                                "waited for when histeq falls behind; network URLs are live without it");
  e->add_flag("-y,--overwrite", o.overwrite, "replace the output if it exists");
  e->add_flag("-n,--skip-existing", o.skip_existing, "never overwrite: an output that exists is skipped, and counts as a success");
  e->add_flag("--resume", o.resume, "a batch run again: outputs recorded complete are skipped, the rest exported again "
                                    "(what an interrupted run left is removed)");
  add_equalizer_options(e, o.eq, {"kernel", "backend"});
  e->add_option("--hwdec", o.hwdec, "decode on the GPU: auto (NVDEC where the codec and GPU allow it), nvdec, none")
      ->check(CLI::IsMember({"auto", "nvdec", "none"}))
      ->capture_default_str();
  add_equalizer_options(e, o.eq, {"strength"});  // --device: a list of devices, below
  add_quality_options(e, o.quality);
  o.codec_opt = e->add_option("-c,--codec", o.codec, "video encoder (any FFmpeg encoder: libx264, libx265, ffv1, ...; default: the input's own "
                                                   "where this FFmpeg has an encoder and the container holds it, else libx264, else the container's)");
  e->add_option("--crf", o.crf, "constant rate factor (libx264: 0-51; default: the encoder's, 23 for libx264)");
  e->add_option("--preset", o.preset, "encoder preset (libx264: ultrafast ... veryslow; default: the encoder's, medium)");
  e->add_option("--progress", o.progress, "auto (a live line on a terminal), plain (a line per second), json (JSON lines on stdout; "
                                           "on stderr with -o -), none")
      ->check(CLI::IsMember({"auto", "plain", "json", "none"}))
      ->capture_default_str();
  e->add_flag("--passthrough", o.eq.passthrough, "decode and re-encode without equalizing (the floor for benchmarks)");
  e->add_option("--stats-json", o.stats_json, "write every frame's stage times and the summary to this JSON file (one input)");
  e->add_flag("-v,--verbose", o.verbose, "show FFmpeg's warnings");
  e->add_option("--start", o.start, "begin at this time: seconds or [HH:]MM:SS[.mmm], as ffmpeg's -ss (frame-exact)");
  e->add_option("--duration", o.duration, "export this long (seconds or [HH:]MM:SS[.mmm], as ffmpeg's -t)");
  e->add_option("--end", o.end, "stop at this time (as ffmpeg's -to); audio is cut to match, to the sample");
  e->add_option("--report", o.report, "write every file's result (frames, time, output size) to this JSON file");
  e->add_flag("--strict", o.strict, "an input that ends early (fewer frames than its container promises, or cut inside a "
                                    "packet) fails its file, nothing written; without it the file is written, a note "
                                    "says so and its result is \"short\"");
  e->add_option("-j,--jobs", o.jobs, "files exported at once (default: on each GPU of --device two per NVDEC engine, "
                                      "one with --hwdec none; on the CPU, cores / 4)")
      ->check(CLI::NonNegativeNumber);
  e->add_option("--device", o.devices, "CUDA devices to run pipelines on (decode with NVDEC and equalize), e.g. 0,1 (default: all; one export: the first)")
      ->delimiter(',')
      ->check(CLI::NonNegativeNumber);
  e->add_option("--ext", o.ext, "a batch's output extension, e.g. mkv (default: each input's own)");
  e->add_option("--index", o.index, "export only the I-th file (from 0) of the batch, in its listed order: one task of a job array")
      ->check(CLI::NonNegativeNumber);
  e->add_option("--shard", o.shard, "export only the files K, K+N, K+2N, ... (from 0) of the batch: a node's share when "
                                    "a job array runs one task a node over all its GPUs (K/N, e.g. $SLURM_ARRAY_TASK_ID/4)");
  add_encode_options(e, o);
  e->add_flag("--list", o.list, "print the batch's inputs and outputs (one pair a line, tab-separated, names escaped: "
                                "\\\\ for a backslash, \\xNN for a control byte or one that is not UTF-8) and export nothing");
}

namespace {

pipeline::BatchFileResult single_result(const ExportCliOptions& o, pipeline::BatchOutcome outcome, const std::string& message) {
  pipeline::BatchFileResult r;
  r.item = {o.inputs.front(), o.output};
  r.outcome = outcome;
  r.message = message;
  r.device = o.devices.empty() ? -1 : o.devices.front();
  return r;
}

int run_export_one(const ExportCliOptions& o, const video::TimeRange& range, const std::vector<std::string>& argv);

}  // namespace

namespace {

// A raw container (yuv4mpegpipe, rawvideo; by -f, --ext or the output's extension) holds only its
// own uncompressed video: its encoder replaces the default, unless -c named one (which the writer
// then refuses in one line).
std::string raw_container_default(const ExportCliOptions& o) {
  if (o.codec_opt != nullptr && o.codec_opt->count() > 0) return "";
  std::string name = o.format.empty() ? o.ext : o.format;
  if (name.empty()) {
    const size_t dot = o.output.find_last_of("./");
    if (dot != std::string::npos && o.output[dot] == '.') name = o.output.substr(dot + 1);
  }
  auto container = video::container_named(name);
  return container ? video::raw_container_codec(*container) : "";
}

}  // namespace

ProgressMode progress_mode(const std::string& progress) {
  if (progress == "auto") return isatty(STDERR_FILENO) ? ProgressMode::live : ProgressMode::lines;
  if (progress == "plain") return ProgressMode::lines;
  if (progress == "json") return ProgressMode::json;
  return ProgressMode::none;
}

pipeline::ExportOptions export_options(const ExportCliOptions& o, const video::TimeRange& range) {
  pipeline::ExportOptions eo;
  eo.overwrite = o.overwrite;
  eo.codec = o.codec;
  eo.crf = o.crf;
  eo.preset = o.preset;
  eo.range = range;
  eo.pipeline.equalizer = o.eq;
  eo.hwdec = hwdec_for(o.hwdec, o.eq);
  (void)parse_encode_args(o, eo);  // checked by run_export, before any work
  eo.format = o.format;
  eo.live = o.live;
  eo.strict = o.strict;
  if (const std::string raw = raw_container_default(o); !raw.empty()) eo.codec = raw;
  return eo;
}

int run_export(const ExportCliOptions& o, const std::vector<std::string>& argv) {
  auto range = video::parse_time_range(o.start, o.duration, o.end);
  if (!range) return fail(range.status().message(), 2);
  if (o.skip_existing + o.overwrite + o.resume > 1) return fail("-y, -n and --resume exclude one another: give one", 2);
  pipeline::ExportOptions checked;
  if (const Status s = parse_encode_args(o, checked); !s) return fail(s.message(), 2);
  // With -c named, its options are checked before any file is opened (a batch's too); otherwise
  // each export checks them against the encoder it picks.
  if (!o.codec.empty())
    if (const Status s = video::check_encoder_options(o.codec, checked.encoder_control.options); !s) return fail(s.message(), 2);
  const bool batch = o.inputs.size() > 1 || is_folder(o.inputs.front()) || (!o.output.empty() && o.output.back() == '/') ||
                     o.index >= 0 || !o.shard.empty() || o.list;
  if (batch && (is_stdout(o.output) || std::count(o.inputs.begin(), o.inputs.end(), "-") > 0))
    return fail("standard input and output (-) are for one export, not a batch", 2);
  if (batch) return run_export_batch(o, *range, argv);
  if (!o.ext.empty()) return fail("--ext names a batch's outputs; give the output file's own name instead", 2);
  if (o.resume) return fail("--resume is for a batch (-o DIR/); for one file, -n skips an output that exists", 2);
  return run_export_one(o, *range, argv);
}

namespace {

// Writes --report for the one file (when asked); 0, or fail()'s code when it cannot be written.
int report_one(const ExportCliOptions& o, const std::vector<std::string>& argv, Clock::time_point t_start,
               const pipeline::BatchFileResult& r) {
  if (o.report.empty()) return 0;
  const Status s = write_export_report(o.report, argv, {r}, std::chrono::duration<double>(Clock::now() - t_start).count(), 1);
  return s ? 0 : fail(s.to_string());
}

// The output of -n that exists: says so, as the progress mode wants, and gives the message; none when
// there is nothing to skip.
std::optional<std::string> skipped_existing(const ExportCliOptions& o, ProgressMode mode) {
  struct stat existing {};
  if (!o.skip_existing || is_stdout(o.output) || ::lstat(o.output.c_str(), &existing) != 0) return std::nullopt;
  const std::string msg = o.output + ": exists; skipped (-n)";
  if (mode == ProgressMode::json) print_json(named({{"event", "skipped"}, {"message", msg}}, "output", o.output));
  else if (mode != ProgressMode::none) std::fprintf(stderr, "histeq: %s\n", terminal_safe(msg).c_str());
  return msg;
}

// The plan's notes, then what is read, how, and into what: a JSON "start" event or the header lines.
void announce_plan(const ExportCliOptions& o, const video::TimeRange& range, const pipeline::ExportPlan& plan, ProgressMode mode) {
  const std::string& input = o.inputs.front();
  for (const auto& n : plan.notes) std::fprintf(stderr, "histeq: note: %s\n", n.c_str());
  if (mode == ProgressMode::json) {
    print_json(named(named({{"event", "start"},
                {"input_description", plan.input_description},
                {"output_description", plan.output_description},
                {"format", plan.format.describe()},
                {"equalizer", describe_equalizer(plan.equalizer)},
                {"decoder", plan.decoder},
                {"frames_expected", plan.frames_hint},
                {"notes", plan.notes}}, "input", input), "output", o.output));
  } else if (mode != ProgressMode::none) {
    std::fprintf(stderr, "histeq: %s -> %s\n  %s, decoded by %s\n  -> %s; %s\n", shown(input, "standard input").c_str(),
                 shown(o.output, "standard output").c_str(),
                 plan.input_description.c_str(), plan.decoder.c_str(), plan.output_description.c_str(),
                 describe_equalizer(plan.equalizer).c_str());
    if (range.trimmed())
      std::fprintf(stderr, "  from %s to %s (%s)\n", video::format_time(range.start_s).c_str(),
                   range.end_s > 0 ? video::format_time(range.end_s).c_str() : "the end", video::format_time(plan.duration_s).c_str());
  }
}

// Progress: %, fps and ETA from the frame count when the container gives it, else from the duration;
// a JSON line, a line a second, or one live line redrawn four times a second.
class ProgressShow {
 public:
  ProgressShow(const pipeline::ExportPlan& plan, ProgressMode mode)
      : plan_(plan), mode_(mode), period_(mode == ProgressMode::live ? std::chrono::milliseconds(250) : std::chrono::milliseconds(1000)) {}

  void update(const pipeline::ExportProgress& p) {
    latest_ = p;
    show(p, false);
  }
  // The final figures, whatever the period.
  void show_final() { show(latest_, true); }
  // Ends the live line, when there is one.
  void close() const {
    if (live_line_) std::fprintf(stderr, "\n");
  }

 private:
  void show(const pipeline::ExportProgress& p, bool force) {
    if (mode_ == ProgressMode::none) return;
    const auto now = Clock::now();
    if (!force && now - last_ < period_) return;
    last_ = now;
    const int64_t total_hint = plan_.frames_hint;
    const double fps = p.elapsed_s > 0 ? p.frames / p.elapsed_s : 0;
    // The container's count and duration are estimates (joined MPEG-TS parts, a missing index):
    // once the frames pass them, the total is unknown rather than over 100%.
    const int64_t total = total_hint > 0 && p.frames <= total_hint ? total_hint : 0;
    double frac = -1;
    if (total > 0) frac = std::min(1.0, static_cast<double>(p.frames) / total);
    else if (total_hint <= 0 && plan_.duration_s > 0 && p.media_s <= plan_.duration_s) frac = p.media_s / plan_.duration_s;
    const double eta = frac > 0 ? p.elapsed_s * (1 - frac) / frac : NAN;
    const double speed = p.elapsed_s > 0 ? p.media_s / p.elapsed_s : 0;
    if (mode_ == ProgressMode::json) print_json_line(p, total, frac, eta, fps, speed);
    else print_text_line(p, total, frac, eta, fps, speed);
  }

  static void print_json_line(const pipeline::ExportProgress& p, int64_t total, double frac, double eta, double fps, double speed) {
    json j = {{"event", "progress"}, {"frame", p.frames}, {"fps", std::round(fps * 10) / 10}, {"speed", std::round(speed * 100) / 100},
              {"media_s", p.media_s}, {"elapsed_s", p.elapsed_s}};
    if (total > 0) j["frames_expected"] = total;
    if (frac >= 0) {
      j["percent"] = std::round(frac * 1000) / 10;
      j["eta_s"] = std::round(eta * 10) / 10;
    }
    print_json(j);
  }

  void print_text_line(const pipeline::ExportProgress& p, int64_t total, double frac, double eta, double fps, double speed) {
    char b[200];
    std::snprintf(b, sizeof(b), "histeq: frame %lld%s%s  %.1f fps  %.2fx  ETA %s", static_cast<long long>(p.frames),
                  total > 0 ? ("/" + std::to_string(total)).c_str() : "",
                  frac >= 0 ? (" (" + std::to_string(static_cast<int>(frac * 1000) / 10) + "." +
                               std::to_string(static_cast<int>(frac * 1000) % 10) + "%)").c_str() : "",
                  fps, speed, frac > 0 ? clock_string(eta).c_str() : "?");
    if (mode_ == ProgressMode::live) {
      std::fprintf(stderr, "\r%s\033[K", b);
      live_line_ = true;
    } else {
      std::fprintf(stderr, "%s\n", b);
    }
    std::fflush(stderr);
  }

  const pipeline::ExportPlan& plan_;
  const ProgressMode mode_;
  const std::chrono::milliseconds period_;
  Clock::time_point last_ = Clock::now();  // the first line after one period, once the figures mean something
  bool live_line_ = false;
  pipeline::ExportProgress latest_;
};

// The damaged-input and short-input lines, then the JSON "done" event or the "wrote" line.
void announce_done(const ExportCliOptions& o, const pipeline::ExportReport& r, double open_s, ProgressMode mode) {
  const auto& sc = r.source;
  if (!r.short_input.empty())
    std::fprintf(stderr, "histeq: note: %s: %s; written as far as it goes (result \"short\"; --strict fails it)\n",
                 escape_name(o.inputs.front()).c_str(), r.short_input.c_str());
  if (sc.corrupt_packets > 0 || sc.damaged_frames > 0 || sc.repaired_timestamps > 0) {
    std::fprintf(stderr, "histeq: %s: damaged input decoded past: %lld corrupt packets skipped, %lld damaged frames kept "
                         "(concealed by the decoder), %lld timestamps repaired\n",
                 escape_name(o.inputs.front()).c_str(), static_cast<long long>(sc.corrupt_packets), static_cast<long long>(sc.damaged_frames),
                 static_cast<long long>(sc.repaired_timestamps));
  }
  if (r.dropped_source > 0)
    std::fprintf(stderr, "histeq: %s: %lld frames dropped: the live input ran ahead of the pipeline (--live)\n",
                 escape_name(o.inputs.front()).c_str(), static_cast<long long>(r.dropped_source));
  if (mode == ProgressMode::json) {
    print_json(named({{"event", "done"},
                {"result", r.short_input.empty() ? "ok" : "short"},
                {"frames_expected", r.frames_expected},
                {"frames_in", r.frames_in},
                {"frames_out", r.frames_out},
                {"corrupt_packets", sc.corrupt_packets},
                {"damaged_frames", sc.damaged_frames},
                {"repaired_timestamps", sc.repaired_timestamps},
                {"copied_packets", r.copied_packets},
                {"dropped_frames", r.dropped_source},
                {"elapsed_s", r.elapsed_s},
                {"open_s", open_s},
                {"fps", r.elapsed_s > 0 ? r.frames_out / r.elapsed_s : 0}}, "output", o.output));
  } else if (mode != ProgressMode::none) {
    std::fprintf(stderr, "histeq: wrote %s: %lld frames in, %lld out, %lld packets copied, %.2f s (%.1f fps)\n",
                 shown(o.output, "standard output").c_str(),
                 static_cast<long long>(r.frames_in), static_cast<long long>(r.frames_out),
                 static_cast<long long>(r.copied_packets), r.elapsed_s, r.elapsed_s > 0 ? r.frames_out / r.elapsed_s : 0.0);
  }
}

Status write_one_stats(const ExportCliOptions& o, const std::vector<std::string>& argv, const pipeline::ExportPlan& plan,
                       const pipeline::RunStats& stats, const pipeline::ExportReport& r) {
  const auto& sc = r.source;
  video::SourceInfo si;
  si.name = o.inputs.front();
  si.description = plan.input_description;
  si.format = plan.format;
  return write_stats_json(o.stats_json, argv, si, plan.equalizer, stats, plan.stages, r.elapsed_s,
                          {{"frames_expected", r.frames_expected},
                           {"short_input", r.short_input.empty() ? 0 : 1},
                           {"frames_in", r.frames_in},
                           {"frames_out", r.frames_out},
                           {"corrupt_packets", sc.corrupt_packets},
                           {"damaged_frames", sc.damaged_frames},
                           {"repaired_timestamps", sc.repaired_timestamps}});
}

// The finished export's --report entry: failed when the encoder dropped frames.
pipeline::BatchFileResult finished_result(const ExportCliOptions& o, const pipeline::ExportPlan& plan, const pipeline::ExportReport& r) {
  pipeline::BatchFileResult result = single_result(o, pipeline::BatchOutcome::ok, "");
  result.notes = plan.notes;
  result.frames_in = r.frames_in;
  result.frames_out = r.frames_out;
  result.frames_expected = r.frames_expected;
  result.source = r.source;
  result.elapsed_s = r.elapsed_s;
  struct stat st {};
  if (!is_stdout(o.output) && ::stat(o.output.c_str(), &st) == 0) result.output_bytes = static_cast<int64_t>(st.st_size);
  if (r.frames_in != r.frames_out) {
    result.outcome = pipeline::BatchOutcome::failed;
    result.message = o.output + ": " + std::to_string(r.frames_in) + " frames in but " + std::to_string(r.frames_out) +
                     " out (the encoder dropped frames)";
  } else if (!r.short_input.empty()) {
    result.outcome = pipeline::BatchOutcome::short_input;
    result.message = o.inputs.front() + ": " + r.short_input;
  }
  return result;
}

int run_export_one(const ExportCliOptions& o, const video::TimeRange& range, const std::vector<std::string>& argv) {
  const std::atomic<bool>& stop = install_stop_signals();
  const std::string& input = o.inputs.front();
  const auto t_start = Clock::now();
  forward_ffmpeg_log(o.verbose);
  const ProgressMode mode = progress_mode(o.progress);
  g_json_out = is_stdout(o.output) ? stderr : stdout;
  if (const auto skipped = skipped_existing(o, mode))
    return report_one(o, argv, t_start, single_result(o, pipeline::BatchOutcome::skipped, *skipped));
  const std::future<void> gpu_warm_up = start_gpu_warm_up(o.eq);
  pipeline::ExportOptions eo = export_options(o, range);
  eo.input = input;
  eo.output = o.output;
  if (!o.devices.empty()) eo.pipeline.equalizer.device = o.devices.front();
  const auto open_t0 = Clock::now();
  auto ex = pipeline::Exporter::open(eo);
  const double open_s = std::chrono::duration<double>(Clock::now() - open_t0).count();
  if (!ex) {
    if (mode == ProgressMode::json) print_json(named({{"event", "error"}, {"message", ex.status().to_string()}}, "input", input));
    const int code = fail(ex.status().to_string());
    (void)report_one(o, argv, t_start, single_result(o, pipeline::BatchOutcome::failed, ex.status().to_string()));
    return code;
  }
  const pipeline::ExportPlan& plan = (*ex)->plan();
  announce_plan(o, range, plan, mode);

  ProgressShow progress(plan, mode);
  pipeline::RunStats stats(600, !o.stats_json.empty());
  set_signal_cleanup((*ex)->temp_path());
  auto rep = (*ex)->run(stop, &stats, [&](const pipeline::ExportProgress& p) { progress.update(p); });
  set_signal_cleanup("");
  if (rep) progress.show_final();
  progress.close();
  if (!rep) {
    const bool interrupted = rep.status().code() == Code::cancelled;
    const std::string msg = !interrupted ? rep.status().to_string()
                            : is_stdout(o.output) ? "standard output: interrupted; the output is incomplete"
                                                  : o.output + ": interrupted; nothing written";
    if (mode == ProgressMode::json)
      print_json(named({{"event", interrupted ? "interrupted" : "error"}, {"message", msg}}, "input", input));
    const int code = fail(msg, interrupted ? stop_exit_code() : 1);
    (void)report_one(o, argv, t_start, single_result(o, interrupted ? pipeline::BatchOutcome::cancelled : pipeline::BatchOutcome::failed, msg));
    return code;
  }
  const pipeline::ExportReport& r = rep.value();
  announce_done(o, r, open_s, mode);
  // --stats-json and --report are both written whatever becomes of the other: a report of an
  // earlier run never stays at its path looking like this one's.
  pipeline::BatchFileResult result = finished_result(o, plan, r);
  const Status js = o.stats_json.empty() ? Status::ok() : write_one_stats(o, argv, plan, stats, r);
  if (!js) result.notes.push_back("--stats-json: " + js.message());
  const int report_rc = report_one(o, argv, t_start, result);
  if (!js) return fail(js.to_string());
  if (result.outcome == pipeline::BatchOutcome::failed) return fail(result.message);
  return report_rc;
}

}  // namespace

}  // namespace histeq::app
