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

namespace {

// One run's plumbing: the two queues between its three threads, and the source, whose blocking
// read is interrupted when the run stops.
struct RunQueues {
  RunQueues(video::Source& src, size_t capacity) : source(src), decoded(capacity), equalized(capacity) {}
  // Any thread: every thread of the run wakes and ends (a full or empty queue, a blocked read).
  void abort_all() {
    decoded.abort();
    equalized.abort();
    source.interrupt();
  }
  video::Source& source;
  BoundedQueue<FramePtr> decoded;
  BoundedQueue<PipelineFrame> equalized;
};

// What became of a decoded frame handed to the equalize thread.
enum class Enqueued { taken, dropped, stopped };

// How the caller's thread ended the run: the input went through, or `stop`, or an error.
enum class RunEnd { drained, cancelled, failed };

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
  // The first error of a run wins; every thread then stops.
  void fail(Status s, RunQueues& q) {
    set_error(std::move(s));
    q.abort_all();
  }

  // run()'s steps, in order: begin, the three loops (decode and equalize on threads of their own,
  // deliver on the caller's), finish.
  void begin(const video::Source& source);
  void on_device() const;
  void decode_loop(RunQueues& q);
  Enqueued enqueue_decoded(FramePtr f, bool live, RunQueues& q);
  void equalize_loop(RunQueues& q);
  bool forward(std::vector<PipelineFrame>& done, RunQueues& q);
  RunEnd deliver_loop(RunQueues& q, Sink& sink, const std::atomic<bool>& stop, RunStats* stats);
  Status deliver(PipelineFrame f, Sink& sink, RunStats* stats);
  Status finish(RunEnd end);
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
  m.begin(source);
  RunQueues q(source, static_cast<size_t>(m.opts.queue_frames));
  m.out_queue = &q.equalized;
  std::thread decode_thread([&] { m.decode_loop(q); });
  std::thread equalize_thread([&] { m.equalize_loop(q); });
  const RunEnd end = m.deliver_loop(q, sink, stop, stats);
  // Both threads end on their own at the end of the input, or woken by the abort of a stop or an
  // error: the queues they fill outlive them.
  decode_thread.join();
  equalize_thread.join();
  m.out_queue = nullptr;
  return m.finish(end);
}

// Clears the last run's outcome, and the equalizer's memory of earlier frames unless this run's
// frames follow the last run's (same source, its input not stopped or sought in between).
void Pipeline::Impl::begin(const video::Source& source) {
  {
    std::lock_guard<std::mutex> l(err_mu);
    first_error = Status::ok();  // a previous run's stop
  }
  if (!continuous || (last_source != nullptr && last_source != &source)) eq->reset();
  last_source = &source;
  continuous = false;  // until this run ends at the end of its input
}

// Each of the run's threads works on the pipeline's device (create() checked it), where the
// equalizer's memory and NVDEC's frames are.
void Pipeline::Impl::on_device() const {
  if (opts.equalizer.device >= 0) (void)cuda::use_device(opts.equalizer.device);
}

// The decode thread: frames from the source until its end or max_seconds, then the queue closes
// (an abort leaves it without closing: the run is over anyway).
void Pipeline::Impl::decode_loop(RunQueues& q) {
  on_device();
  const bool live = q.source.info().live;
  for (;;) {
    auto r = q.source.next(*pool);
    if (!r) return fail(r.status(), q);
    FramePtr f = std::move(r.value());
    if (!f) break;
    if (opts.max_seconds > 0 && f->time_s >= opts.max_seconds) break;
    const Enqueued e = enqueue_decoded(std::move(f), live, q);
    if (e == Enqueued::stopped) return;
    if (e == Enqueued::taken) ++frames_in;
  }
  q.decoded.close();
}

// Hands a decoded frame on. A file's decoder waits for room; a camera does not wait: when the
// queue is full its frame is dropped (counted) and goes back to the pool.
Enqueued Pipeline::Impl::enqueue_decoded(FramePtr f, bool live, RunQueues& q) {
  if (!live) return q.decoded.push(std::move(f)) ? Enqueued::taken : Enqueued::stopped;
  if (q.decoded.try_push(f)) return Enqueued::taken;
  if (q.decoded.aborted()) return Enqueued::stopped;
  ++dropped_source;
  return Enqueued::dropped;
}

// The equalize thread: each decoded frame into the equalizer, which returns those it finished
// (later, with frames in flight on the GPU); at the end of the input the frames still in flight
// are flushed out before the queue closes.
void Pipeline::Impl::equalize_loop(RunQueues& q) {
  on_device();
  std::vector<PipelineFrame> done;
  FramePtr f;
  while (q.decoded.pop(f)) {
    if (Status s = eq->submit(std::move(f), done); !s) return fail(s, q);
    if (!forward(done, q)) return;
  }
  if (Status s = eq->flush(done); !s) return fail(s, q);
  if (!forward(done, q)) return;
  q.equalized.close();
}

// The finished frames to the caller's thread, in order; false when the queue aborted.
bool Pipeline::Impl::forward(std::vector<PipelineFrame>& done, RunQueues& q) {
  for (auto& d : done)
    if (!q.equalized.push(std::move(d))) return false;
  done.clear();
  return true;
}

// The caller's thread: equalized frames to the sink until the end of the input, `stop` or an
// error. `stop` is looked at every 20 ms, frame or not, and wins over a frame just taken; while
// no frame comes the sink is kept alive with idle().
RunEnd Pipeline::Impl::deliver_loop(RunQueues& q, Sink& sink, const std::atomic<bool>& stop, RunStats* stats) {
  using Pop = BoundedQueue<PipelineFrame>::Pop;
  for (;;) {
    PipelineFrame f;
    const Pop got = q.equalized.pop_for(f, std::chrono::milliseconds(20));
    if (stop.load()) {
      q.abort_all();
      return RunEnd::cancelled;
    }
    if (got == Pop::end) return RunEnd::drained;  // closed, or aborted by another thread's error
    Status s = got == Pop::timeout ? sink.idle() : deliver(std::move(f), sink, stats);
    if (!s) {
      fail(s, q);
      return RunEnd::failed;
    }
  }
}

// One frame to the sink, its timing record completed: the latency runs from the decode's start
// to the end of the sink's work, less the time the sink was paused (the viewer's delay, not the
// pipeline's).
Status Pipeline::Impl::deliver(PipelineFrame f, Sink& sink, RunStats* stats) {
  FrameRecord rec;
  rec.index = f.frame->index;
  rec.time_s = f.frame->time_s;
  rec.damaged = f.frame->damaged;
  rec.timing = f.frame->timing;
  rec.kernel = f.side.kernel;
  const int64_t start = f.frame->timing.start_ns;
  HISTEQ_TRY(sink.consume(std::move(f), rec));
  const int64_t end = now_ns() - rec.paused_ns;
  rec.timing.latency_ms = static_cast<float>((end - start) / 1e6);
  if (rec.timing.capture_ns > 0) rec.timing.set(video::stage::glass, (end - rec.timing.capture_ns) / 1e6);
  ++frames_out;
  if (stats != nullptr) stats->add(rec);
  return Status::ok();
}

// The run's result, once its threads have ended: its first error, or cancelled, or ok.
Status Pipeline::Impl::finish(RunEnd end) {
  const bool cancelled = end == RunEnd::cancelled;
  std::lock_guard<std::mutex> l(err_mu);
  // The whole input went through: a run after this one continues from where it ended.
  if (!cancelled && first_error.is_ok()) continuous = true;
  // A source interrupted by our own abort reports "cancelled": the first real error wins.
  if (!first_error.is_ok() && !(cancelled && first_error.code() == Code::cancelled)) return first_error;
  if (cancelled) return HISTEQ_ERROR(Code::cancelled, "stopped");
  return Status::ok();
}

}  // namespace histeq::pipeline
