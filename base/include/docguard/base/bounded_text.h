// Text from clients cut to a bound before docguard keeps, logs or sends it: a field name or an
// operator name may be megabytes long, and a copy of it in a set, a log line or an error
// message must not be. A cut ends on a UTF-8 character boundary (no half character reaches a
// reader) and is marked, so a reader knows the text goes on.
#pragma once

#include <cstddef>
#include <cstring>
#include <string>
#include <string_view>

namespace docguard::base {

// Appended where a text was cut.
inline constexpr std::string_view kCutMarker = "...(cut)";

// The length of the longest prefix of s of at most max bytes that does not end inside a
// multi-byte UTF-8 character.
size_t utf8_prefix_length(std::string_view s, size_t max);

// Appends s to out when it is at most max bytes; otherwise its first bytes, cut at a character
// boundary, and kCutMarker, max bytes in all (the marker included). Returns whether it cut.
bool append_bounded(std::string& out, std::string_view s, size_t max);

// s, or its bounded form as append_bounded writes it.
std::string bounded(std::string_view s, size_t max);

// A text of at most kMax bytes kept in place, set as append_bounded would write it into an
// empty string. For a text set on every message (a command's name for its log line): a
// std::string's append costs a call and its capacity checks each time, this a copy of a few
// bytes.
template <size_t kMax>
class BoundedText {
 public:
  void assign(std::string_view s) {
    if (s.size() <= kMax) {
      copy(s.data(), s.size());
      size_ = s.size();
      return;
    }
    const std::string cut = bounded(s, kMax);
    std::memcpy(text_, cut.data(), cut.size());
    size_ = cut.size();
  }
  void clear() { size_ = 0; }
  std::string_view view() const { return {text_, size_}; }

 private:
  // A command's name is a few bytes: two overlapping copies of a size the compiler knows, not
  // a call to memcpy.
  void copy(const char* from, size_t n) {
    if (n >= 8 && n <= 16) {
      std::memcpy(text_, from, 8);
      std::memcpy(text_ + n - 8, from + n - 8, 8);
    } else if (n >= 4 && n < 8) {
      std::memcpy(text_, from, 4);
      std::memcpy(text_ + n - 4, from + n - 4, 4);
    } else {
      std::memcpy(text_, from, n);
    }
  }

  char text_[kMax];
  size_t size_ = 0;
};

}  // namespace docguard::base
