// A small expected-like result (C++20 has no std::expected): a value or an Error that names the
// URI option (or host) at fault, so `--check-config` can point the user at it, and, for a
// command the server refused, the server's error code, so callers can tell "not authorized"
// from "not implemented" from "timed out".
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <variant>

namespace docguard::cluster {

struct Error {
  std::string option;   // the offending option or host as written (empty when none applies)
  std::string message;  // a complete sentence for logs and --check-config
  // The server's error code (13 Unauthorized, 238 NotImplemented, 50 MaxTimeMSExpired, ...);
  // 18 for a failed authentication; 0 or one of ClusterReader's negative codes otherwise.
  int32_t code = 0;
};

template <class T>
class Expected {
 public:
  Expected(T value) : v_(std::move(value)) {}      // NOLINT(google-explicit-constructor)
  Expected(Error error) : v_(std::move(error)) {}  // NOLINT(google-explicit-constructor)

  bool ok() const { return v_.index() == 0; }
  explicit operator bool() const { return ok(); }
  T& value() & { return std::get<0>(v_); }
  const T& value() const& { return std::get<0>(v_); }
  T&& value() && { return std::get<0>(std::move(v_)); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  const Error& error() const { return std::get<1>(v_); }

 private:
  std::variant<T, Error> v_;
};

}  // namespace docguard::cluster
