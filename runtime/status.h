// status.h: Status and Result<T>, the error values of the thin runtime.
//
// Library code in runtime/ never exits or aborts on bad input (a malformed file, an
// unknown flag, a shape mismatch): it returns a Status whose message names what
// failed and why, and the caller (in the end, the executable's main) decides what to
// do. Result<T> carries either a value or such an error.
#ifndef VOUCH_RUNTIME_STATUS_H_
#define VOUCH_RUNTIME_STATUS_H_

#include <optional>
#include <string>
#include <utility>

namespace vouch::rt {

class Status {
 public:
  static Status Ok() { return Status(); }
  static Status Error(std::string message) { return Status(false, std::move(message)); }

  bool ok() const { return ok_; }
  // Empty for Ok(); the reason for an error.
  const std::string& message() const { return message_; }

 private:
  Status() = default;
  Status(bool ok, std::string message) : ok_(ok), message_(std::move(message)) {}

  bool ok_ = true;
  std::string message_;
};

// Either a T or an error Status. Implicitly built from both, so a function returning
// Result<T> can `return value;` or `return Status::Error("...");`.
template <class T>
class Result {
 public:
  Result(T value) : value_(std::move(value)) {}
  Result(Status status) : status_(std::move(status)) {
    // An OK status carries no value: that would be a Result without anything in it.
    if (status_.ok()) status_ = Status::Error("internal: Result built from an OK status");
  }

  bool ok() const { return value_.has_value(); }
  const Status& status() const { return status_; }
  // Precondition: ok(). (std::bad_optional_access otherwise, never undefined behaviour.)
  T& value() & { return value_.value(); }
  const T& value() const& { return value_.value(); }
  T&& value() && { return std::move(value_.value()); }

 private:
  std::optional<T> value_;
  Status status_ = Status::Ok();
};

}  // namespace vouch::rt

#endif  // VOUCH_RUNTIME_STATUS_H_
