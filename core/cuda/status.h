// Status: the error type of histeq's core. Nothing in core/ prints or exits; every fallible call
// returns a Status (or a Result<T>) and app/ decides what the user sees.
//
// A failing CUDA call is captured with the text of the call, the file and the line, as CUB does,
// so that "cudaMalloc(&p, bytes) failed: out of memory (core/cuda/buffer.cpp:41)" reaches the user.
#pragma once

#include <string>
#include <utility>
#include <variant>

namespace histeq {

enum class Code {
  ok = 0,
  invalid_argument,  // the caller passed something the contract forbids
  unsupported,       // valid request, but this kernel/device cannot serve it
  not_found,         // unknown kernel name, missing file, ...
  no_device,         // a GPU kernel was asked for and there is no usable CUDA device
  cuda_error,        // a CUDA runtime/driver call failed
  io_error,          // file or codec problem
  out_of_memory,
  internal,
  cancelled,         // stopped on request (a signal, a stop flag): not a failure of the input
};

const char* code_name(Code c) noexcept;

// [[nodiscard]]: a Status that nobody looks at is a bug; `(void)call()` says "ignored on purpose".
class [[nodiscard]] Status {
 public:
  Status() = default;  // ok
  Status(Code code, std::string message, const char* file = nullptr, int line = 0)
      : code_(code), message_(std::move(message)), file_(file), line_(line) {}

  static Status ok() { return {}; }
  bool is_ok() const noexcept { return code_ == Code::ok; }
  explicit operator bool() const noexcept { return is_ok(); }
  Code code() const noexcept { return code_; }
  const std::string& message() const noexcept { return message_; }
  const char* file() const noexcept { return file_; }
  int line() const noexcept { return line_; }

  // "message (file:line)" for faults (CUDA errors, out of memory, internal errors) that carry a
  // location; just "message" for the caller's own mistakes (bad argument, unknown name, no file).
  std::string to_string() const;

 private:
  Code code_ = Code::ok;
  std::string message_;
  const char* file_ = nullptr;
  int line_ = 0;
};

// Result<T>: a value or the Status that explains its absence.
template <class T>
class [[nodiscard]] Result {
 public:
  Result(T value) : v_(std::move(value)) {}          // NOLINT(google-explicit-constructor)
  Result(Status status) : v_(std::move(status)) {}   // NOLINT(google-explicit-constructor)
  bool is_ok() const noexcept { return std::holds_alternative<T>(v_); }
  explicit operator bool() const noexcept { return is_ok(); }
  const Status& status() const {
    static const Status ok_status;
    return is_ok() ? ok_status : std::get<Status>(v_);
  }
  T& value() & { return std::get<T>(v_); }
  const T& value() const& { return std::get<T>(v_); }
  T&& value() && { return std::get<T>(std::move(v_)); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T&& operator*() && { return std::move(*this).value(); }

 private:
  std::variant<T, Status> v_;
};

}  // namespace histeq

#define HISTEQ_ERROR(code, msg) ::histeq::Status((code), (msg), __FILE__, __LINE__)

// Propagate a non-ok Status from the current function.
#define HISTEQ_TRY(expr)                                   \
  do {                                                     \
    ::histeq::Status histeq_try_status_ = (expr);          \
    if (!histeq_try_status_.is_ok()) return histeq_try_status_; \
  } while (0)
