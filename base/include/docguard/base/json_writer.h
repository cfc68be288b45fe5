// docguard's one JSON writer, for every report, /status and the admin API: objects and arrays
// opened and closed by name, the commas between members and elements placed by the writer, every
// string through the escaper of json_string.h (control characters, hidden Unicode controls and
// invalid UTF-8 never reach a reader raw). A section another part of docguard wrote as JSON is
// added whole with raw(), never spliced into text already written.
#pragma once

#include <charconv>
#include <cmath>
#include <cstdint>
#include <string>
#include <string_view>
#include <type_traits>
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
  // A number as JSON has it, the shortest text that reads back as the same value ("3", "0.1");
  // NaN and the infinities, which JSON lacks, are written as null.
  template <class Number>
  requires(std::is_arithmetic_v<Number> && !std::is_same_v<Number, bool>) Writer& value(Number v) {
    if constexpr (std::is_floating_point_v<Number>) {
      if (!std::isfinite(v)) return null();
    }
    char text[32];
    const auto written = std::to_chars(text, text + sizeof text, v);
    return raw(std::string_view(text, static_cast<size_t>(written.ptr - text)));
  }
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

}  // namespace docguard::json
