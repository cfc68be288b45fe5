// docguard's one JSON writer, for every report, /status and the admin API: objects and arrays
// opened and closed by name, the commas between members and elements placed by the writer, every
// string through the escaper of json_string.h (control characters, hidden Unicode controls and
// invalid UTF-8 never reach a reader raw). A section another part of docguard wrote as JSON is
// added whole with raw(), never spliced into text already written.
#pragma once

#include <algorithm>
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
  // Compact ({"a":1,"b":[1,2]}) for machines; indented for text a person reads or pastes into a
  // shell: one member per line, and a container holding no other container on one line when it
  // fits ({"bsonType": "string"}, ["_id", "name"]).
  enum class Layout : uint8_t { kCompact, kIndented };

  Writer() = default;
  explicit Writer(Layout layout) : indented_(layout == Layout::kIndented) {}

  Writer& begin_object() { return open('{'); }
  Writer& end_object() { return close('}'); }
  Writer& begin_array() { return open('['); }
  Writer& end_array() { return close(']'); }

  // A member's name inside an object; the value follows. Names are escaped too.
  Writer& key(std::string_view name) {
    separate();
    append_string(out_, name);
    out_ += indented_ ? ": " : ":";
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
    if (!open_.empty()) open_.back().holds_container = true;  // never folded onto one line
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
  struct Open {
    size_t at;  // where its bracket is in out_
    bool empty = true;
    bool holds_container = false;
  };
  static constexpr size_t kFoldedWidth = 100;

  Writer& open(char bracket) {
    separate();
    if (!open_.empty()) open_.back().holds_container = true;
    open_.push_back(Open{out_.size()});
    out_.push_back(bracket);
    return *this;
  }
  Writer& close(char bracket) {
    if (open_.empty()) {
      out_.push_back(bracket);
      return *this;
    }
    const Open closed = open_.back();
    open_.pop_back();
    if (indented_ && !closed.empty) {
      if (!closed.holds_container && fold(closed.at)) {
        out_.push_back(bracket);
        return *this;
      }
      new_line();
    }
    out_.push_back(bracket);
    return *this;
  }
  // The comma before every member or element but the first of its object or array; indented,
  // each on its own line.
  void separate() {
    if (after_key_) {
      after_key_ = false;
      return;
    }
    if (open_.empty()) return;
    if (!open_.back().empty) out_.push_back(',');
    open_.back().empty = false;
    if (indented_) new_line();
  }
  void new_line() {
    out_.push_back('\n');
    out_.append(2 * open_.size(), ' ');
  }
  // Puts the members written since `at` on one line ("[\n  1,\n  2" -> "[1, 2"), when that
  // line is short. Escaped strings hold no newline, so every newline here is the layout's.
  bool fold(size_t at) {
    const size_t width = kFoldedWidth - std::min(kFoldedWidth, 2 * open_.size());
    if (out_.size() - at > 4 * width) return false;  // too long folded too: no copy made
    std::string folded;
    for (size_t i = at; i < out_.size() && folded.size() <= width; ++i) {
      if (out_[i] != '\n') {
        folded.push_back(out_[i]);
        continue;
      }
      while (i + 1 < out_.size() && out_[i + 1] == ' ') ++i;
      if (folded.back() == ',') folded.push_back(' ');
    }
    if (folded.size() > width) return false;
    out_.replace(at, std::string::npos, folded);
    return true;
  }

  std::string out_;
  std::vector<Open> open_;
  bool indented_ = false;
  bool after_key_ = false;
};

}  // namespace docguard::json
