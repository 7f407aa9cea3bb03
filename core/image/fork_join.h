// ForkJoin: a small pool of CPU threads for data-parallel loops over an image (the cpu_parallel
// histogram kernel, the CPU equalizer's LUT and apply stages, the synthetic source's rows).
// run(n, f) calls f(0..n-1), f(0) on the caller and the rest on the workers, and returns when all
// are done. The threads live as long as the pool, so a video frame does not pay for thread
// creation.
//
// Waking a sleeping thread costs tens of microseconds, as much as a 1080p frame's whole apply on 16
// cores. A pool made with spin_us > 0 keeps its workers (and the caller waiting for them) polling
// for that long after each job before they sleep, so the forks of one frame (histogram, LUT, apply)
// and of frames that follow each other closely find them awake.
//
// Thread: run() may be called from any thread; calls from different threads take turns (a mutex),
// and a run() from inside one of the pool's own jobs runs its parts on the calling thread.
#pragma once

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

namespace histeq::image {

class ForkJoin {
 public:
  // `workers` threads besides the caller; they poll for spin_us microseconds before sleeping.
  explicit ForkJoin(int workers, int spin_us = 0);
  ~ForkJoin();
  ForkJoin(const ForkJoin&) = delete;
  ForkJoin& operator=(const ForkJoin&) = delete;
  int size() const { return static_cast<int>(slots_.size()) + 1; }

  // f(0..n-1); n is at most size() (more is an error of the caller's: the extra parts run on the caller).
  void run(int n, const std::function<void(int)>& f);

 private:
  // One worker's mailbox, on its own cache line: the caller writes job then bumps posted.
  struct alignas(64) Slot {
    std::atomic<uint64_t> posted{0};
    const std::function<void(int)>* job = nullptr;
    std::atomic<bool> sleeping{false};
    std::mutex mu;
    std::condition_variable cv;
  };
  void loop(Slot& s, int index);
  uint64_t wait_posted(Slot& s, uint64_t seen);
  void wait_done();

  std::vector<std::unique_ptr<Slot>> slots_;
  std::vector<std::thread> threads_;
  const int spin_us_;
  std::mutex run_mu_;                  // one run() at a time
  alignas(64) std::atomic<int> pending_{0};
  std::atomic<bool> caller_sleeping_{false};
  std::mutex done_mu_;
  std::condition_variable done_cv_;
  std::atomic<bool> quit_{false};
};

// The cores this process may run on: its CPU affinity mask's count (taskset, cgroups' cpusets), at
// least 1; hardware_concurrency() where the mask cannot be read. hardware_concurrency() alone counts
// the machine's cores, and polling workers beyond the cores a process has take them from its own
// threads.
int usable_cores() noexcept;

// The process's pool for the CPU equalizer (histogram, LUT, apply): usable_cores() - 1
// workers that poll for 50 us between jobs; null on a one-core machine (the loops then run on the
// caller). Made at the first call and never destroyed (its threads sleep until the process ends);
// a forked child gets a pool of its own.
ForkJoin* shared_pool();

// Items [0, n) in contiguous parts of at least min_per_part over the pool's threads: f(begin, end)
// for each part; all on the caller without a pool.
template <class F>
void for_parts(ForkJoin* pool, int n, int min_per_part, const F& f) {
  const int parts = pool == nullptr ? 1 : std::max(1, std::min(n / std::max(1, min_per_part), pool->size()));
  if (parts == 1) return f(0, n);
  pool->run(parts, [&](int i) {
    f(static_cast<int>(int64_t{n} * i / parts), static_cast<int>(int64_t{n} * (i + 1) / parts));
  });
}

// Rows [0, rows) in parts of at least 16 rows (a part's start-up against its work).
template <class F>
void for_rows(ForkJoin* pool, int rows, const F& f) {
  for_parts(pool, rows, 16, f);
}

}  // namespace histeq::image
