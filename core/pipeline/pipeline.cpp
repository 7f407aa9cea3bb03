#include "core/pipeline/pipeline.h"

#include <chrono>
#include <mutex>
#include <thread>

#include "core/cuda/device.h"
#include "core/pipeline/queue.h"

namespace histeq::pipeline {
namespace {

using video::FramePtr;

int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

}  // namespace

struct Pipeline::Impl {
  PipelineOptions opts;
  std::unique_ptr<Equalizer> eq;
  std::unique_ptr<video::FramePool> pool;
  std::atomic<int64_t> frames_in{0}, frames_out{0}, dropped_source{0};
  const video::Source* last_source = nullptr;  // the source of the last run
  bool continuous = true;                       // the next frame follows the last one the equalizer took
  const BoundedQueue<PipelineFrame>* out_queue = nullptr;  // during run(): the equalized frames (ready())

  std::mutex err_mu;
  Status first_error;
  void set_error(Status s) {
    std::lock_guard<std::mutex> l(err_mu);
    if (first_error.is_ok()) first_error = std::move(s);
  }
};

Pipeline::Pipeline() : impl_(std::make_unique<Impl>()) {}
Pipeline::~Pipeline() = default;

Result<std::unique_ptr<Pipeline>> Pipeline::create(const PipelineOptions& opts, const video::SourceInfo& source) {
  if (opts.equalizer.device >= 0) HISTEQ_TRY(cuda::use_device(opts.equalizer.device));
  std::unique_ptr<Pipeline> p(new Pipeline());
  p->impl_->opts = opts;
  auto eq = Equalizer::create(opts.equalizer, source.format);
  if (!eq) return eq.status();
  p->impl_->eq = std::move(eq.value());
  auto pool = video::FramePool::create(source.format, p->impl_->eq->input_memory());
  if (!pool) return pool.status();
  p->impl_->pool = std::move(pool.value());
  return p;
}

const EqualizerInfo& Pipeline::equalizer() const { return impl_->eq->info(); }

std::vector<video::StageId> Pipeline::stages() const {
  std::vector<video::StageId> v = {video::stage::decode, video::stage::convert};
  for (video::StageId id : impl_->eq->stages()) v.push_back(id);
  v.push_back(video::stage::encode);
  v.push_back(video::stage::present);
  v.push_back(video::stage::glass);
  return v;
}

Status Pipeline::seek(video::Source& source, double time_s) {
  HISTEQ_TRY(source.seek(time_s));
  impl_->continuous = false;
  return Status::ok();
}

Status Pipeline::set_kernel(const std::string& name) { return impl_->eq->set_kernel(name); }
Status Pipeline::set_strength(double strength) { return impl_->eq->set_strength(strength); }
Status Pipeline::set_quality(const eq::Quality& quality) { return impl_->eq->set_quality(quality); }
Status Pipeline::set_compare(const Compare& compare) { return impl_->eq->set_compare(compare); }

size_t Pipeline::ready() const {
  const BoundedQueue<PipelineFrame>* q = impl_->out_queue;
  return q != nullptr ? q->size() : 0;
}

PipelineCounters Pipeline::counters() const {
  PipelineCounters c;
  c.frames_in = impl_->frames_in.load();
  c.frames_out = impl_->frames_out.load();
  c.dropped_source = impl_->dropped_source.load();
  return c;
}

Status Pipeline::run(video::Source& source, Sink& sink, const std::atomic<bool>& stop, RunStats* stats) {
  Impl& m = *impl_;
  if (source.info().format != m.pool->format())
    return HISTEQ_ERROR(Code::invalid_argument, "the source's format changed after the pipeline was made");
  {
    std::lock_guard<std::mutex> l(m.err_mu);
    m.first_error = Status::ok();  // a previous run's stop
  }
  if (!m.continuous || (m.last_source != nullptr && m.last_source != &source)) m.eq->reset();
  m.last_source = &source;
  m.continuous = false;  // until this run ends at the end of its input
  BoundedQueue<FramePtr> decoded(static_cast<size_t>(m.opts.queue_frames));
  BoundedQueue<PipelineFrame> equalized(static_cast<size_t>(m.opts.queue_frames));
  m.out_queue = &equalized;
  const bool live = source.info().live;
  auto abort_all = [&] {
    decoded.abort();
    equalized.abort();
    source.interrupt();
  };

  const int device = m.opts.equalizer.device;  // current on each thread (checked by create()): equalizer, NVDEC
  auto on_device = [device] {
    if (device >= 0) (void)cuda::use_device(device);
  };
  std::thread decode_thread([&] {
    on_device();
    for (;;) {
      auto r = source.next(*m.pool);
      if (!r) {
        m.set_error(r.status());
        abort_all();
        return;
      }
      FramePtr f = std::move(r.value());
      if (!f) break;
      if (m.opts.max_seconds > 0 && f->time_s >= m.opts.max_seconds) break;
      if (live) {
        if (!decoded.try_push(f)) {
          if (decoded.aborted()) return;
          ++m.dropped_source;  // full: a camera does not wait; the frame goes back to the pool
          continue;
        }
      } else if (!decoded.push(std::move(f))) {
        return;  // aborted
      }
      ++m.frames_in;
    }
    decoded.close();
  });

  std::thread equalize_thread([&] {
    on_device();
    std::vector<PipelineFrame> done;
    FramePtr f;
    auto forward = [&]() -> bool {
      for (auto& d : done)
        if (!equalized.push(std::move(d))) return false;
      done.clear();
      return true;
    };
    while (decoded.pop(f)) {
      Status s = m.eq->submit(std::move(f), done);
      if (!s) {
        m.set_error(s);
        abort_all();
        return;
      }
      if (!forward()) return;
    }
    Status s = m.eq->flush(done);
    if (!s) {
      m.set_error(s);
      abort_all();
      return;
    }
    if (!forward()) return;
    equalized.close();
  });

  bool cancelled = false;
  for (;;) {
    PipelineFrame f;
    const auto got = equalized.pop_for(f, std::chrono::milliseconds(20));
    if (stop.load()) {
      cancelled = true;
      abort_all();
      break;
    }
    if (got == BoundedQueue<PipelineFrame>::Pop::timeout) {
      if (Status s = sink.idle(); !s) {
        m.set_error(s);
        abort_all();
        break;
      }
      continue;
    }
    if (got == BoundedQueue<PipelineFrame>::Pop::end) break;
    FrameRecord rec;
    rec.index = f.frame->index;
    rec.time_s = f.frame->time_s;
    rec.damaged = f.frame->damaged;
    rec.timing = f.frame->timing;
    rec.kernel = f.side.kernel;
    const int64_t start = f.frame->timing.start_ns;
    Status s = sink.consume(std::move(f), rec);
    if (!s) {
      m.set_error(s);
      abort_all();
      break;
    }
    const int64_t end = now_ns() - rec.paused_ns;  // a pause is the viewer's, not the pipeline's delay
    rec.timing.latency_ms = static_cast<float>((end - start) / 1e6);
    if (rec.timing.capture_ns > 0) rec.timing.set(video::stage::glass, (end - rec.timing.capture_ns) / 1e6);
    ++m.frames_out;
    if (stats != nullptr) stats->add(rec);
  }
  decode_thread.join();
  equalize_thread.join();
  m.out_queue = nullptr;
  {
    std::lock_guard<std::mutex> l(m.err_mu);
    // The whole input went through: a run after this one continues from where it ended.
    if (!cancelled && m.first_error.is_ok()) m.continuous = true;
    // A source interrupted by our own abort reports "cancelled": the first real error wins.
    if (!m.first_error.is_ok() && !(cancelled && m.first_error.code() == Code::cancelled)) return m.first_error;
  }
  if (cancelled) return HISTEQ_ERROR(Code::cancelled, "stopped");
  return Status::ok();
}

}  // namespace histeq::pipeline
