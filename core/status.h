// Status and Result<T>: how errors cross module boundaries in meridian.
//
// A Status is either OK or carries a code and a message that names the field,
// the value and the reason ("resources.gpus: \"-2\" must be \"auto\" or a whole
// number >= 0"). Result<T> holds a T or a non-OK Status. Both are values; they
// are cheap to move and safe to share between threads once built.
#pragma once

#include <cassert>
#include <string>
#include <utility>
#include <variant>

namespace meridian {

enum class StatusCode {
  kOk = 0,
  kInvalidArgument,  // bad input: a spec, a flag, a catalog file
  kNotFound,         // a named thing (GPU model, region) does not exist
  kUnschedulable,    // may fit later, or elsewhere
  kUnresolvable,     // can never fit as asked
  kInternal,         // a bug or an environment failure
};

class [[nodiscard]] Status {
 public:
  Status() = default;
  static Status Ok() { return Status(); }
  static Status Invalid(std::string msg) { return {StatusCode::kInvalidArgument, std::move(msg)}; }
  static Status NotFound(std::string msg) { return {StatusCode::kNotFound, std::move(msg)}; }
  static Status Internal(std::string msg) { return {StatusCode::kInternal, std::move(msg)}; }
  static Status Unschedulable(std::string msg) {
    return {StatusCode::kUnschedulable, std::move(msg)};
  }
  static Status Unresolvable(std::string msg) {
    return {StatusCode::kUnresolvable, std::move(msg)};
  }

  bool ok() const { return code_ == StatusCode::kOk; }
  StatusCode code() const { return code_; }
  const std::string& message() const { return message_; }
  // "invalid argument: <message>" style, for logs.
  std::string ToString() const;

  // Returns a copy whose message is prefixed by `context` and ": ".
  Status WithContext(const std::string& context) const;

 private:
  Status(StatusCode code, std::string msg) : code_(code), message_(std::move(msg)) {}
  StatusCode code_ = StatusCode::kOk;
  std::string message_;
};

// Holds a value or an error. Accessing value() of an error is a programmer bug.
template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : data_(std::move(value)) {}  // NOLINT: implicit by design
  Result(Status status) : data_(std::move(status)) {  // NOLINT: implicit by design
    assert(!std::get<Status>(data_).ok() && "Result built from an OK status");
  }

  bool ok() const { return std::holds_alternative<T>(data_); }
  explicit operator bool() const { return ok(); }

  const Status& status() const {
    static const Status kOkStatus;
    return ok() ? kOkStatus : std::get<Status>(data_);
  }
  const T& value() const& {
    assert(ok());
    return std::get<T>(data_);
  }
  T& value() & {
    assert(ok());
    return std::get<T>(data_);
  }
  T&& value() && {
    assert(ok());
    return std::get<T>(std::move(data_));
  }
  const T& operator*() const& { return value(); }
  T& operator*() & { return value(); }
  const T* operator->() const { return &value(); }
  T* operator->() { return &value(); }

 private:
  std::variant<T, Status> data_;
};

}  // namespace meridian

// Returns early from the enclosing function when `expr` is a non-OK Status.
#define MERIDIAN_RETURN_IF_ERROR(expr)    \
  do {                                    \
    ::meridian::Status _st = (expr);      \
    if (!_st.ok()) return _st;            \
  } while (0)
