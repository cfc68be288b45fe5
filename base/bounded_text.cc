#include "docguard/base/bounded_text.h"

namespace docguard::base {

size_t utf8_prefix_length(std::string_view s, size_t max) {
  if (s.size() <= max) return s.size();
  // s[max] is the first byte left out: while it continues a character (10xxxxxx), the
  // character started before it and is left out whole. A character has at most 4 bytes.
  size_t end = max;
  for (int back = 0; back < 3 && end > 0; ++back) {
    if ((static_cast<unsigned char>(s[end]) & 0xC0) != 0x80) break;
    --end;
  }
  if ((static_cast<unsigned char>(s[end]) & 0xC0) == 0x80) return max;  // not UTF-8 there
  return end;
}

bool append_bounded(std::string& out, std::string_view s, size_t max) {
  if (s.size() <= max) {
    out.append(s);
    return false;
  }
  const size_t room = max > kCutMarker.size() ? max - kCutMarker.size() : 0;
  out.append(s.substr(0, utf8_prefix_length(s, room)));
  out.append(kCutMarker.substr(0, max - room));
  return true;
}

std::string bounded(std::string_view s, size_t max) {
  std::string out;
  append_bounded(out, s, max);
  return out;
}

}  // namespace docguard::base
