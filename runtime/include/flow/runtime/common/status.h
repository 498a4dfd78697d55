#pragma once
// Status and Result<T>: how runtime code reports errors. Every fallible call returns one of these;
// they are [[nodiscard]], so ignoring an error has to be written out (`.IgnoreError()`), which
// keeps swallowed errors searchable. Exceptions are not used for expected failures.

#include <cassert>
#include <optional>
#include <string>
#include <utility>
#include <variant>

namespace flow::rt {

enum class StatusCode {
  kOk = 0,
  kInvalidArgument,  // bad flag, bad parameter value, malformed input
  kNotFound,
  kIoError,      // file system or network failure
  kCorruption,   // a checksum or format check failed
  kUnavailable,  // a remote service (e.g. a Kafka broker) cannot be reached right now
  kFenced,       // another instance of this job took over
  kTimedOut,
  kAborted,
  kCancelled,
  kInternal,  // our own bug
  // Work moved between instances of a job (a Kafka consumer-group rebalance took partitions
  // from this one): the run stops and restarts at once from the last commit; not a failure.
  kReassigned,
  // A service refused our credentials (a schema registry's HTTP 401/403): a configuration error,
  // not the fault of the record being read, and not cured by retrying.
  kPermissionDenied,
  // The system is not in a state the operation needs, and retrying will not change that (a
  // partition whose state is in another instance's checkpoint): fix the setup, then restart.
  kFailedPrecondition,
};

const char* StatusCodeName(StatusCode code);

class [[nodiscard]] Status {
 public:
  Status() = default;
  Status(StatusCode code, std::string message) : code_(code), message_(std::move(message)) {}

  static Status Ok() { return Status(); }
  static Status InvalidArgument(std::string m) {
    return {StatusCode::kInvalidArgument, std::move(m)};
  }
  static Status NotFound(std::string m) { return {StatusCode::kNotFound, std::move(m)}; }
  static Status IoError(std::string m) { return {StatusCode::kIoError, std::move(m)}; }
  static Status Corruption(std::string m) { return {StatusCode::kCorruption, std::move(m)}; }
  static Status Unavailable(std::string m) { return {StatusCode::kUnavailable, std::move(m)}; }
  static Status Fenced(std::string m) { return {StatusCode::kFenced, std::move(m)}; }
  static Status TimedOut(std::string m) { return {StatusCode::kTimedOut, std::move(m)}; }
  static Status Aborted(std::string m) { return {StatusCode::kAborted, std::move(m)}; }
  static Status Cancelled(std::string m) { return {StatusCode::kCancelled, std::move(m)}; }
  static Status Internal(std::string m) { return {StatusCode::kInternal, std::move(m)}; }
  static Status Reassigned(std::string m) { return {StatusCode::kReassigned, std::move(m)}; }
  static Status FailedPrecondition(std::string m) {
    return {StatusCode::kFailedPrecondition, std::move(m)};
  }
  static Status PermissionDenied(std::string m) {
    return {StatusCode::kPermissionDenied, std::move(m)};
  }

  bool ok() const { return code_ == StatusCode::kOk; }
  StatusCode code() const { return code_; }
  const std::string& message() const { return message_; }
  // "IoError: cannot open 'x'"; "OK" when ok.
  std::string ToString() const;
  // Explicitly drops an error; use only where losing it is correct and say why next to the call.
  void IgnoreError() const {}

 private:
  StatusCode code_ = StatusCode::kOk;
  std::string message_;
};

// Result<T>: a value or an error Status (never an ok Status without a value).
template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : value_(std::move(value)) {}         // NOLINT: implicit by design
  Result(Status status) : status_(std::move(status)) {  // NOLINT: implicit by design
    assert(!status_.ok() && "Result constructed from an ok Status without a value");
  }

  bool ok() const { return value_.has_value(); }
  const Status& status() const { return status_; }
  T& value() & {
    assert(ok() && "Result::value() called on an error");
    return *value_;
  }
  const T& value() const& {
    assert(ok() && "Result::value() called on an error");
    return *value_;
  }
  T&& value() && {
    assert(ok() && "Result::value() called on an error");
    return std::move(*value_);
  }
  T* operator->() { return &value(); }
  T& operator*() { return value(); }

 private:
  std::optional<T> value_;
  Status status_;
};

}  // namespace flow::rt

// Returns early from the enclosing function when `expr` yields a non-ok Status.
#define FLOW_RETURN_IF_ERROR(expr)               \
  do {                                           \
    ::flow::rt::Status flow_status_ = (expr);    \
    if (!flow_status_.ok()) return flow_status_; \
  } while (0)
