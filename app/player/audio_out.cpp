#include "app/player/audio_out.h"

#include "app/player/audio_tempo.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>

namespace histeq::app::player {
namespace {

int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

constexpr double kRingSeconds = 0.5;    // decoded ahead of the device
constexpr double kPrefillSeconds = 0.25;  // start() waits for this much (or the end)
constexpr int kFeedFrames = 1024;       // the feeder's reads

}  // namespace

Result<std::unique_ptr<AudioOut>> AudioOut::open(const std::string& path, const AudioOutOptions& opts) {
  std::unique_ptr<AudioOut> a(new AudioOut());
  // The track first: a file without sound never touches the sound system.
  auto probe = video::AudioSource::open(path, video::AudioFormat{}, opts.track);
  if (!probe) return probe.status();
  probe.value().reset();
  if (SDL_InitSubSystem(SDL_INIT_AUDIO) != 0)
    return HISTEQ_ERROR(Code::unsupported, std::string("no sound: SDL cannot start its audio: ") + SDL_GetError());
  SDL_AudioSpec want{};
  want.freq = 48000;
  want.format = AUDIO_F32SYS;
  want.channels = 2;
  want.samples = 512;  // about 11 ms a period: the clock's steps
  want.callback = &AudioOut::sdl_callback;
  want.userdata = a.get();
  a->device_ = SDL_OpenAudioDevice(nullptr, 0, &want, &a->spec_, SDL_AUDIO_ALLOW_FREQUENCY_CHANGE | SDL_AUDIO_ALLOW_CHANNELS_CHANGE);
  if (a->device_ == 0) {
    const std::string why = SDL_GetError();
    SDL_QuitSubSystem(SDL_INIT_AUDIO);
    return HISTEQ_ERROR(Code::unsupported, "no sound device (" + why + ")");
  }
  // The device runs from here to the end: the callback gives silence until start() and while
  // paused, so that every sample the device takes passes through it (and its log).
  const char* drv = SDL_GetCurrentAudioDriver();
  a->driver_ = drv != nullptr ? drv : "?";
  // SDL's dummy and disk drivers take a period when it plays; a real device holds about one more.
  const bool virtual_device = a->driver_ == "dummy" || a->driver_ == "disk";
  a->clock_.configure(a->spec_.freq, virtual_device ? 0.0 : static_cast<double>(a->spec_.samples) / a->spec_.freq);
  auto src = video::AudioSource::open(path, video::AudioFormat{a->spec_.freq, a->spec_.channels}, opts.track);
  if (!src) return src.status();  // the destructor closes the device
  a->source_ = std::move(src.value());
  a->ring_.assign(static_cast<size_t>(std::ceil(kRingSeconds * a->spec_.freq)) * a->spec_.channels, 0.f);
  a->volume_ = std::clamp(opts.volume, 0.0, kMaxVolume);
  a->muted_ = opts.muted;
  a->log_ = opts.log_callbacks;
  if (a->log_) a->log_entries_.reserve(1 << 16);
  SDL_PauseAudioDevice(a->device_, 0);
  char b[96];
  std::snprintf(b, sizeof(b), " -> %s, %.4g kHz, %d ch", a->driver_.c_str(), a->spec_.freq / 1000.0, a->spec_.channels);
  a->description_ = a->source_->info().description + b;
  return a;
}

AudioOut::~AudioOut() {
  stop_feeder();
  if (device_ != 0) {
    SDL_CloseAudioDevice(device_);  // waits for a callback in progress
    SDL_QuitSubSystem(SDL_INIT_AUDIO);
  }
}

void AudioOut::sdl_callback(void* self, Uint8* stream, int len) {
  auto* a = static_cast<AudioOut*>(self);
  a->fill(reinterpret_cast<float*>(stream), len / static_cast<int>(sizeof(float) * a->spec_.channels));
}

void AudioOut::fill(float* out, int frames) {
  const int64_t now = now_ns();
  const size_t ch = static_cast<size_t>(spec_.channels);
  const float gain = muted_.load() ? 0.f : static_cast<float>(volume_.load());
  std::unique_lock<std::mutex> l(mu_);
  size_t n = 0;
  int64_t timed = 0;
  const bool playing = started_ && !paused_;
  if (playing) {
    n = std::min(fill_ / ch, static_cast<size_t>(frames));
    for (size_t i = 0; i < n * ch; ++i) {
      out[i] = std::clamp(ring_[head_] * gain, -1.f, 1.f);
      head_ = head_ + 1 == ring_.size() ? 0 : head_ + 1;
    }
    fill_ -= n * ch;
    // Silence after the end keeps the timeline going; silence of an underrun does not.
    const bool ended = feeder_done_ && fill_ == 0;
    timed = ended ? frames : static_cast<int64_t>(n);
    if (!ended && n < static_cast<size_t>(frames)) ++underruns_;
  }
  std::memset(out + n * ch, 0, (static_cast<size_t>(frames) - n) * ch * sizeof(float));
  const double start = timeline_s_;
  const double speed = speed_;
  timeline_s_ += static_cast<double>(timed) / spec_.freq * speed;
  if (log_ && log_entries_.size() < kMaxAudioLog) log_entries_.push_back({now, device_samples_, frames, static_cast<int32_t>(timed), start});
  else if (log_) ++not_logged_;
  device_samples_ += frames;
  const bool stamp = started_;
  l.unlock();
  room_.notify_one();
  if (stamp) clock_.on_callback(now, start, timed, speed);  // paused: the clock stands (nothing timed)
}

// The feeder: the track's samples (stretched at a speed other than 1x) into the ring, as room
// frees up, until the end or the budget.
void AudioOut::feed(std::unique_ptr<AudioTempo> tempo) {
  const size_t ch = static_cast<size_t>(spec_.channels);
  std::vector<float> buf;
  // Stretched sound comes in runs of another length than was read: what does not fit waits here.
  std::vector<float> pending;
  size_t pending_at = 0;
  bool end = false;
  for (;;) {
    {
      std::unique_lock<std::mutex> l(mu_);
      room_.wait(l, [&] { return stop_ || ring_.size() - fill_ >= kFeedFrames * ch; });
      if (stop_) return;
    }
    if (pending_at == pending.size() && !end) {
      int64_t want = kFeedFrames;
      if (budget_ >= 0) want = std::min<int64_t>(want, budget_);
      buf.clear();
      int64_t got = 0;
      if (want > 0) {
        auto r = source_->read(buf, want);
        got = r ? *r : 0;  // a read error ends the sound; the clock then runs on the silence
      }
      if (budget_ >= 0) budget_ -= got;
      end = got == 0;
      pending.clear();
      pending_at = 0;
      if (!tempo) {
        pending.swap(buf);
      } else if (!(end ? tempo->finish(pending) : tempo->push(buf.data(), got, pending))) {
        end = true;  // the filter failed: the sound ends here, as on a read error
      }
    }
    std::lock_guard<std::mutex> l(mu_);
    if (stop_) return;
    const size_t n = std::min(pending.size() - pending_at, ring_.size() - fill_);
    size_t tail = (head_ + fill_) % ring_.size();
    for (size_t i = 0; i < n; ++i) {
      ring_[tail] = pending[pending_at + i];
      tail = tail + 1 == ring_.size() ? 0 : tail + 1;
    }
    pending_at += n;
    fill_ += n;
    if (end && pending_at == pending.size()) {
      feeder_done_ = true;
      return;
    }
  }
}

void AudioOut::stop_feeder() {
  {
    std::lock_guard<std::mutex> l(mu_);
    stop_ = true;
  }
  room_.notify_all();
  if (source_) source_->interrupt();
  if (feeder_.joinable()) feeder_.join();
}

bool AudioOut::can_stretch() const { return AudioTempo::available(); }

Status AudioOut::start(double from_s, double until_s, bool paused, double speed) {
  halt();
  std::unique_ptr<AudioTempo> tempo;
  if (speed != 1.0) {
    auto t = AudioTempo::create(spec_.freq, spec_.channels, speed);
    if (!t) return t.status();
    tempo = std::move(t.value());
  }
  HISTEQ_TRY(source_->seek(from_s));
  {
    std::lock_guard<std::mutex> l(mu_);
    head_ = fill_ = 0;
    timeline_s_ = from_s;
    speed_ = speed;
    feeder_done_ = false;
    stop_ = false;
  }
  budget_ = until_s > from_s ? std::llround((until_s - from_s) * spec_.freq) : (until_s > 0 ? 0 : -1);
  feeder_ = std::thread([this, t = std::move(tempo)]() mutable { feed(std::move(t)); });
  // A quarter of a second in the ring before the sound starts, so that it does not begin on an
  // underrun (or less, when that is all there is).
  const size_t want = static_cast<size_t>(kPrefillSeconds * spec_.freq) * static_cast<size_t>(spec_.channels);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(2);
  std::unique_lock<std::mutex> l(mu_);
  while (fill_ < want && !feeder_done_ && std::chrono::steady_clock::now() < deadline) {
    l.unlock();
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
    l.lock();
  }
  paused_ = paused;
  started_ = true;
  return Status::ok();
}

void AudioOut::halt() {
  {
    std::lock_guard<std::mutex> l(mu_);  // the callback sees either the old run whole or none of it
    started_ = false;
  }
  stop_feeder();
  clock_.reset();
}

void AudioOut::set_paused(bool paused) {
  std::lock_guard<std::mutex> l(mu_);
  paused_ = paused;
}

double AudioOut::clock_s() const { return clock_.at(now_ns()); }  // NaN after halt() until the first run

bool AudioOut::drained() const {
  std::lock_guard<std::mutex> l(mu_);
  return feeder_done_ && fill_ == 0;
}

void AudioOut::set_volume(double v) { volume_ = std::clamp(v, 0.0, kMaxVolume); }

int64_t AudioOut::device_samples() const {
  std::lock_guard<std::mutex> l(mu_);
  return device_samples_;
}

std::vector<AudioOut::Callback> AudioOut::callback_log() const {
  std::lock_guard<std::mutex> l(mu_);
  return log_entries_;
}

int64_t AudioOut::callbacks_not_logged() const {
  std::lock_guard<std::mutex> l(mu_);
  return not_logged_;
}

}  // namespace histeq::app::player
