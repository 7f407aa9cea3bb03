#include "core/image/fork_join.h"

#include <sched.h>
#include <unistd.h>

#include <chrono>

namespace histeq::image {
namespace {

// How long the shared pool's threads poll between jobs: longer than the gaps between a frame's
// stages and between frames fed back to back, short enough that an idle player's threads sleep.
constexpr int kSharedSpinUs = 50;

// The pool whose job this thread is running (a nested run() goes inline instead of waiting on itself).
thread_local const ForkJoin* t_in_job = nullptr;

inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#endif
}

// Polls ready() for up to spin_us; true when it turned true. No yield: on a loaded machine a
// yielding thread hands its core to another process for a whole time slice (milliseconds), longer
// than any wait here.
template <class Ready>
bool spin(int spin_us, const Ready& ready) {
  if (spin_us <= 0) return ready();
  const auto end = std::chrono::steady_clock::now() + std::chrono::microseconds(spin_us);
  for (;;) {
    for (int i = 0; i < 64; ++i) {
      if (ready()) return true;
      cpu_relax();
    }
    if (std::chrono::steady_clock::now() > end) return ready();
  }
}

}  // namespace

ForkJoin::ForkJoin(int workers, int spin_us) : spin_us_(spin_us) {
  for (int i = 0; i < workers; ++i) slots_.push_back(std::make_unique<Slot>());
  for (int i = 0; i < workers; ++i) threads_.emplace_back([this, i] { loop(*slots_[i], i + 1); });
}

ForkJoin::~ForkJoin() {
  quit_.store(true);
  for (auto& s : slots_) {
    std::lock_guard<std::mutex> l(s->mu);
    s->posted.fetch_add(1);
    s->cv.notify_one();
  }
  for (auto& t : threads_) t.join();
}

// The sleeping flag and the posted counter are a Dekker pair (both sequentially consistent): a
// worker about to sleep sees the new post, or the poster sees it sleeping and wakes it under its
// mutex, which the worker holds from its last look until it waits.
uint64_t ForkJoin::wait_posted(Slot& s, uint64_t seen) {
  uint64_t g = seen;
  if (spin(spin_us_, [&] { return (g = s.posted.load(std::memory_order_acquire)) != seen; })) return g;
  std::unique_lock<std::mutex> l(s.mu);
  s.sleeping.store(true);
  while ((g = s.posted.load()) == seen) s.cv.wait(l);
  s.sleeping.store(false);
  return g;
}

void ForkJoin::loop(Slot& s, int index) {
  t_in_job = this;
  uint64_t seen = 0;
  for (;;) {
    seen = wait_posted(s, seen);
    if (quit_.load()) return;
    (*s.job)(index);
    if (pending_.fetch_sub(1) == 1 && caller_sleeping_.load()) {
      std::lock_guard<std::mutex> l(done_mu_);
      done_cv_.notify_one();
    }
  }
}

void ForkJoin::wait_done() {
  if (spin(spin_us_, [&] { return pending_.load(std::memory_order_acquire) == 0; })) return;
  std::unique_lock<std::mutex> l(done_mu_);
  caller_sleeping_.store(true);
  while (pending_.load() != 0) done_cv_.wait(l);
  caller_sleeping_.store(false);
}

void ForkJoin::run(int n, const std::function<void(int)>& f) {
  if (t_in_job == this || n <= 1) {
    for (int i = 0; i < n; ++i) f(i);
    return;
  }
  std::lock_guard<std::mutex> turn(run_mu_);
  const int workers = std::min(n, size()) - 1;
  pending_.store(workers);
  for (int i = 0; i < workers; ++i) {
    Slot& s = *slots_[i];
    s.job = &f;
    s.posted.fetch_add(1);
    if (s.sleeping.load()) {
      std::lock_guard<std::mutex> l(s.mu);
      s.cv.notify_one();
    }
  }
  const ForkJoin* outer = t_in_job;
  t_in_job = this;
  f(0);
  for (int i = workers + 1; i < n; ++i) f(i);
  t_in_job = outer;
  wait_done();
}

int usable_cores() noexcept {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof(set), &set) == 0 && CPU_COUNT(&set) > 0) return CPU_COUNT(&set);
  return static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
}

ForkJoin* shared_pool() {
  static std::mutex mu;
  static ForkJoin* pool = nullptr;
  static pid_t owner = 0;
  static const int cores = usable_cores();
  if (cores == 1) return nullptr;
  std::lock_guard<std::mutex> l(mu);
  // Leaked on purpose: destroyed at exit it could join threads under another static's destructor,
  // and a forked child has no threads behind the parent's pool.
  if (pool == nullptr || owner != getpid()) {
    pool = new ForkJoin(cores - 1, kSharedSpinUs);
    owner = getpid();
  }
  return pool;
}

}  // namespace histeq::image
