// ForkJoin: a small pool of CPU threads for data-parallel loops over an image (the cpu_parallel
// histogram kernel, the synthetic source's rows). run(n, f) calls f(0..n-1), f(0) on the caller and
// the rest on the workers, and returns when all are done. The threads live as long as the pool, so
// a video frame does not pay for thread creation.
// Thread: run() from one thread at a time.
#pragma once

#include <algorithm>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace histeq::image {

class ForkJoin {
 public:
  explicit ForkJoin(int workers) {
    for (int i = 0; i < workers; ++i) threads_.emplace_back([this, i] { loop(i + 1); });
  }
  ~ForkJoin() {
    {
      std::lock_guard<std::mutex> l(mu_);
      quit_ = true;
    }
    cv_.notify_all();
    for (auto& t : threads_) t.join();
  }
  int size() const { return static_cast<int>(threads_.size()) + 1; }

  void run(int n, const std::function<void(int)>& f) {
    {
      std::lock_guard<std::mutex> l(mu_);
      job_ = &f;
      jobs_ = n;
      pending_ = n - 1;
      ++generation_;
    }
    cv_.notify_all();
    f(0);
    std::unique_lock<std::mutex> l(mu_);
    done_cv_.wait(l, [&] { return pending_ == 0; });
    job_ = nullptr;
  }

 private:
  void loop(int index) {
    uint64_t seen = 0;
    for (;;) {
      const std::function<void(int)>* job;
      {
        std::unique_lock<std::mutex> l(mu_);
        cv_.wait(l, [&] { return quit_ || generation_ != seen; });
        if (quit_) return;
        seen = generation_;
        if (index >= jobs_) continue;
        job = job_;
      }
      (*job)(index);
      std::lock_guard<std::mutex> l(mu_);
      if (--pending_ == 0) done_cv_.notify_one();
    }
  }

  std::vector<std::thread> threads_;
  std::mutex mu_;
  std::condition_variable cv_, done_cv_;
  const std::function<void(int)>* job_ = nullptr;
  int jobs_ = 0;
  int pending_ = 0;
  uint64_t generation_ = 0;
  bool quit_ = false;
};

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
