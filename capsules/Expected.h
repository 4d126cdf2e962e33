//===- Expected.h - a value or the reason there is none ---------*- C++ -*-===//
//
// capsules/ depends on nothing but the standard library (no LLVM), so it
// carries this small result type: either a value or an error message that
// is complete enough to show to a user as it is.
//
//===----------------------------------------------------------------------===//
#ifndef VOUCH_CAPSULES_EXPECTED_H
#define VOUCH_CAPSULES_EXPECTED_H

#include <cassert>
#include <optional>
#include <string>
#include <utility>

namespace vouch::capsules {

/// An error message, ready to print.
struct Error {
  std::string message;
};

template <class T> class Expected {
public:
  Expected(T value) : value_(std::move(value)) {}
  Expected(Error error) : error_(std::move(error.message)) {}

  explicit operator bool() const { return value_.has_value(); }
  bool ok() const { return value_.has_value(); }
  const T &operator*() const & { assert(ok()); return *value_; }
  T &operator*() & { assert(ok()); return *value_; }
  T &&operator*() && { assert(ok()); return std::move(*value_); }
  const T *operator->() const { assert(ok()); return &*value_; }
  T *operator->() { assert(ok()); return &*value_; }
  /// The message; empty when there is a value.
  const std::string &error() const { return error_; }

private:
  std::optional<T> value_;
  std::string error_;
};

/// Success or an error message.
class Status {
public:
  Status() = default;
  Status(Error error) : error_(std::move(error.message)), ok_(false) {}
  static Status success() { return Status(); }
  bool ok() const { return ok_; }
  explicit operator bool() const { return ok_; }
  const std::string &error() const { return error_; }

private:
  std::string error_;
  bool ok_ = true;
};

} // namespace vouch::capsules

#endif // VOUCH_CAPSULES_EXPECTED_H
