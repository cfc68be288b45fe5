// A small expected-like result (C++20 has no std::expected): a value or the error saying why
// there is none, the base Error unless a reader needs more (a dump reader's byte offset).
// Expected<void> is a success or an error, for what has nothing to return. Truthy means success,
// everywhere: no optional error whose presence means failure.
#pragma once

#include <utility>
#include <variant>

#include "docguard/base/error.h"

namespace docguard::base {

template <class T, class E = Error>
class Expected {
 public:
  Expected(T value) : v_(std::move(value)) {}  // NOLINT(google-explicit-constructor)
  Expected(E error) : v_(std::move(error)) {}  // NOLINT(google-explicit-constructor)

  bool ok() const { return v_.index() == 0; }
  explicit operator bool() const { return ok(); }
  T& value() & { return std::get<0>(v_); }
  const T& value() const& { return std::get<0>(v_); }
  T&& value() && { return std::get<0>(std::move(v_)); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  const E& error() const { return std::get<1>(v_); }

 private:
  std::variant<T, E> v_;
};

template <class E>
class Expected<void, E> {
 public:
  Expected() = default;
  Expected(E error)
      : error_(std::move(error)), ok_(false) {}  // NOLINT(google-explicit-constructor)

  bool ok() const { return ok_; }
  explicit operator bool() const { return ok_; }
  const E& error() const { return error_; }

 private:
  E error_;
  bool ok_ = true;
};

}  // namespace docguard::base
