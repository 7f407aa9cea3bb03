// BoundedQueue: a fixed-capacity FIFO between two pipeline threads.
//   push() blocks while full; pop() blocks while empty. close() lets the consumer drain what is
//   left and then see the end; abort() wakes everyone and makes push/pop fail at once (on errors
//   and stops). pop_for() gives the consumer a way to look at a stop flag while it waits.
// Thread-safe: any number of producers and consumers.
#pragma once

#include <chrono>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <optional>

namespace histeq::pipeline {

template <class T>
class BoundedQueue {
 public:
  explicit BoundedQueue(size_t capacity) : cap_(capacity > 0 ? capacity : 1) {}

  // False when aborted or closed (the item is then dropped).
  bool push(T item) {
    std::unique_lock<std::mutex> l(mu_);
    not_full_.wait(l, [&] { return aborted_ || closed_ || q_.size() < cap_; });
    if (aborted_ || closed_) return false;
    q_.push_back(std::move(item));
    not_empty_.notify_one();
    return true;
  }

  // Never blocks: false when full (the item is left in `item`), aborted or closed.
  bool try_push(T& item) {
    std::lock_guard<std::mutex> l(mu_);
    if (aborted_ || closed_ || q_.size() >= cap_) return false;
    q_.push_back(std::move(item));
    not_empty_.notify_one();
    return true;
  }

  enum class Pop { item, end, timeout };

  // Waits up to `timeout` for an item. `end`: closed and drained, or aborted.
  template <class Rep, class Period>
  Pop pop_for(T& out, std::chrono::duration<Rep, Period> timeout) {
    std::unique_lock<std::mutex> l(mu_);
    if (!not_empty_.wait_for(l, timeout, [&] { return aborted_ || closed_ || !q_.empty(); })) return Pop::timeout;
    return take(out);
  }

  // Blocks until an item comes (true) or the queue ends (false).
  bool pop(T& out) {
    std::unique_lock<std::mutex> l(mu_);
    not_empty_.wait(l, [&] { return aborted_ || closed_ || !q_.empty(); });
    return take(out) == Pop::item;
  }

  void close() {
    std::lock_guard<std::mutex> l(mu_);
    closed_ = true;
    not_empty_.notify_all();
    not_full_.notify_all();
  }
  void abort() {
    std::lock_guard<std::mutex> l(mu_);
    aborted_ = true;
    q_.clear();
    not_empty_.notify_all();
    not_full_.notify_all();
  }
  bool aborted() const {
    std::lock_guard<std::mutex> l(mu_);
    return aborted_;
  }
  size_t size() const {
    std::lock_guard<std::mutex> l(mu_);
    return q_.size();
  }
  size_t capacity() const noexcept { return cap_; }

 private:
  Pop take(T& out) {
    if (aborted_ || q_.empty()) return Pop::end;
    out = std::move(q_.front());
    q_.pop_front();
    not_full_.notify_one();
    return Pop::item;
  }

  const size_t cap_;
  mutable std::mutex mu_;
  std::condition_variable not_empty_, not_full_;
  std::deque<T> q_;
  bool closed_ = false, aborted_ = false;
};

}  // namespace histeq::pipeline
