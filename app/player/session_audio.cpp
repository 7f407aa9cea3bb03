// The session's sound (a file's track, through the AudioOpener) and the run's summary.
#include <algorithm>
#include <cstdio>

#include <nlohmann/json.hpp>

#include "app/common/run_common.h"
#include "app/player/session.h"

namespace histeq::app::player {

// The callbacks of a sound about to close join the log, in media time (--stats-json).
void Session::keep_audio_log() {
  if (!audio_ || o_.stats_json.empty()) return;
  for (auto c : audio_->callback_log()) {
    if (audio_log_.size() >= kMaxAudioLog) {  // bounded, as the device's own log
      ++audio_log_lost_;
      continue;
    }
    c.start_s -= origin_s_;
    audio_log_.push_back(c);
  }
  audio_log_lost_ += audio_->callbacks_not_logged();
}

void Session::open_audio() {
  keep_audio_log();
  audio_.reset();
  need_audio_start_ = true;
  av_offset_ms_ = NAN;
  const bool file = is_file();
  if (o_.no_audio) audio_note_ = "off (--no-audio)";
  else if (!file) audio_note_ = "none (not a file)";
  else if (o_.max_speed) audio_note_ = "off (--max-speed plays as fast as it can)";
  else if (!audio_opener_) audio_note_ = "none (no sound output)";
  else if (audio_choice_ == 0) audio_note_ = "off (audio track: none)";
  if (o_.no_audio || !file || o_.max_speed || !audio_opener_ || audio_choice_ == 0) return;
  AudioOutOptions ao;
  ao.volume = volume_;
  ao.muted = muted_;
  ao.log_callbacks = !o_.stats_json.empty();
  ao.track = std::max(0, audio_choice_);
  auto a = audio_opener_(info_.name, ao);
  if (!a) {
    audio_tracks_ = 0;
    if (a.status().code() == Code::not_found) {
      audio_note_ = "none (no audio track)";
    } else {
      audio_note_ = "none: " + a.status().message();
      std::fprintf(stderr, "histeq: note: %s; playing without sound\n", a.status().message().c_str());
    }
    return;
  }
  audio_ = std::move(a.value());
  audio_tracks_ = audio_->tracks();
  audio_note_.clear();
  std::printf("histeq play: sound %s\n", audio_->description().c_str());
  std::fflush(stdout);
}

void Session::set_audio_track(int track) {
  if (track == audio_choice_ || (track > 0 && audio_ && track == audio_->track())) return;
  audio_choice_ = track;
  open_audio();  // the sound starts again with the next frame shown
  pacer_.reset();
}

void Session::drop_audio(const std::string& why) {
  say(why + ": playing on without sound", true);
  std::fprintf(stderr, "histeq: %s; playing on without sound\n", why.c_str());
  audio_.reset();
  audio_note_ = "none: " + why;
  pacer_.reset();
}

double Session::audio_now() const { return audio_ ? audio_->clock_s() - origin_s_ : NAN; }

// The summary line and stage table, and --stats-json; returns the exit code.
int Session::finish(double wall, const std::vector<std::string>& argv) {
  const auto sc = source_->counters();
  const auto pc = pipe_->counters();
  std::printf("histeq play: %s %.2f s: %s\n%s", signalled_ ? "interrupted after" : frontend_->ended_word().c_str(), wall,
              counters_line(stats_->frames(), wall, *stats_, pc.dropped_source, sc).c_str(),
              format_stage_table(stats_->total(), pipe_->stages(), false).c_str());
  std::fflush(stdout);
  // Stopped by a signal: 128 + its number (SIGINT 130, SIGTERM 143, SIGHUP 129), as export, so
  // that a supervisor does not read a killed player as a success.
  const int code = exit_code_ != 0 ? exit_code_ : signalled_ ? stop_exit_code() : 0;
  if (o_.stats_json.empty()) return code;
  // The sound: every device callback (when, which samples, their media time), so that the sync
  // can be measured against what the device played (SDL's disk driver writes it to a file).
  auto audio_section = [&](nlohmann::json& j) {
    keep_audio_log();
    nlohmann::json a = {{"playing", audio_ != nullptr}, {"note", audio_note_}, {"volume", volume_}, {"muted", muted_}};
    if (audio_) {
      a["track"] = audio_->description();
      a["driver"] = audio_->driver();
      a["rate"] = audio_->rate();
      a["channels"] = audio_->channels();
      a["sample_format"] = "f32";
      a["latency_s"] = audio_->latency_s();
      a["underruns"] = audio_->underruns();
      a["device_samples"] = audio_->device_samples();
    }
    nlohmann::json cbs = nlohmann::json::array();
    for (const auto& c : audio_log_) cbs.push_back({c.ns, c.first_sample, c.frames, c.timed, c.start_s});
    a["callbacks_columns"] = {"steady_ns", "first_sample", "frames", "timed_frames", "media_s"};
    a["callbacks"] = std::move(cbs);
    if (audio_log_lost_ > 0) a["callbacks_lost"] = audio_log_lost_;  // past the log's bound (an endless input)
    a["held_frames"] = view_.held_frames();
    j["audio"] = std::move(a);
  };
  Status js = write_stats_json(o_.stats_json, argv, info_, eq_, *stats_, pipe_->stages(), wall,
                               {{"dropped_source", pc.dropped_source},
                                {"corrupt_packets", sc.corrupt_packets},
                                {"damaged_frames", sc.damaged_frames},
                                {"repaired_timestamps", sc.repaired_timestamps}},
                               audio_section);
  if (!js) return fail(js.to_string());
  return code;
}

}  // namespace histeq::app::player
