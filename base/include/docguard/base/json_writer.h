// docguard's one JSON writer, for every report, /status and the admin API: objects and arrays
// opened and closed by name, the commas between members and elements placed by the writer, every
// string through the escaper of json_string.h (control characters, hidden Unicode controls and
// invalid UTF-8 never reach a reader raw). A section another part of docguard wrote as JSON is
// added whole with raw(), never spliced into text already written.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "docguard/base/json_string.h"

namespace docguard::json {

class Writer {
 public:
  Writer& begin_object() { return open('{'); }
  Writer& end_object() { return close('}'); }
  Writer& begin_array() { return open('['); }
  Writer& end_array() { return close(']'); }

  // A member's name inside an object; the value follows. Names are escaped too.
  Writer& key(std::string_view name) {
    separate();
    append_string(out_, name);
    out_.push_back(':');
    after_key_ = true;
    return *this;
  }

  Writer& value(std::string_view text) {
    separate();
    append_string(out_, text);
    return *this;
  }
  Writer& value(const char* text) { return value(std::string_view(text)); }
  Writer& value(const std::string& text) { return value(std::string_view(text)); }
  Writer& value(bool b) { return raw(b ? "true" : "false"); }
  Writer& value(int v) { return raw(std::to_string(v)); }
  Writer& value(long v) { return raw(std::to_string(v)); }
  Writer& value(long long v) { return raw(std::to_string(v)); }
  Writer& value(unsigned v) { return raw(std::to_string(v)); }
  Writer& value(unsigned long v) { return raw(std::to_string(v)); }
  Writer& value(unsigned long long v) { return raw(std::to_string(v)); }
  // A number as JSON has it: NaN and the infinities, which JSON lacks, are written as null.
  Writer& value(double v);
  Writer& null() { return raw("null"); }
  // A value already written as JSON by another part of docguard (a section, a nested report).
  Writer& raw(std::string_view json) {
    separate();
    out_ += json;
    return *this;
  }

  // key(name).value(v), for the common case.
  template <class T>
  Writer& member(std::string_view name, const T& v) {
    key(name);
    return value(v);
  }

  const std::string& text() const { return out_; }
  std::string take() { return std::move(out_); }

 private:
  Writer& open(char bracket) {
    separate();
    out_.push_back(bracket);
    first_.push_back(true);
    return *this;
  }
  Writer& close(char bracket) {
    out_.push_back(bracket);
    if (!first_.empty()) first_.pop_back();
    return *this;
  }
  // The comma before every member or element but the first of its object or array.
  void separate() {
    if (after_key_) {
      after_key_ = false;
      return;
    }
    if (first_.empty()) return;
    if (!first_.back()) out_.push_back(',');
    first_.back() = false;
  }

  std::string out_;
  std::vector<bool> first_;
  bool after_key_ = false;
};

inline Writer& Writer::value(double v) {
  if (!std::isfinite(v)) return null();
  // Integers as integers ("3", not "3.000000"); the rest with the shortest round trip.
  if (v == std::floor(v) && std::fabs(v) < 9.0e15) {
    return raw(std::to_string(static_cast<long long>(v)));
  }
  char text[32];
  for (int digits = 1; digits <= 17; ++digits) {
    std::snprintf(text, sizeof text, "%.*g", digits, v);
    if (std::strtod(text, nullptr) == v) break;
  }
  return raw(text);
}

}  // namespace docguard::json
