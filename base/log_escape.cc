#include "docguard/base/log_escape.h"

#include <cstdint>

namespace docguard::log {
namespace {

constexpr char kHex[] = "0123456789abcdef";

struct CodePoint {
  uint32_t value = 0;
  size_t length = 0;  // 0: the byte at the position does not start valid UTF-8
};

bool is_continuation(unsigned char c) { return (c & 0xC0) == 0x80; }

// Decodes the UTF-8 sequence at s[i] (s[i] >= 0x80). Overlong forms, surrogates and values past
// U+10FFFF are invalid, as in RFC 3629.
CodePoint decode_utf8(std::string_view s, size_t i) {
  const auto byte = [&](size_t k) { return static_cast<unsigned char>(s[i + k]); };
  const unsigned char lead = byte(0);
  size_t length = 0;
  uint32_t value = 0;
  unsigned char second_min = 0x80, second_max = 0xBF;
  if (lead >= 0xC2 && lead <= 0xDF) {
    length = 2;
    value = lead & 0x1Fu;
  } else if (lead >= 0xE0 && lead <= 0xEF) {
    length = 3;
    value = lead & 0x0Fu;
    if (lead == 0xE0) second_min = 0xA0;  // overlong
    if (lead == 0xED) second_max = 0x9F;  // surrogates
  } else if (lead >= 0xF0 && lead <= 0xF4) {
    length = 4;
    value = lead & 0x07u;
    if (lead == 0xF0) second_min = 0x90;  // overlong
    if (lead == 0xF4) second_max = 0x8F;  // past U+10FFFF
  } else {
    return {};
  }
  if (s.size() - i < length || byte(1) < second_min || byte(1) > second_max) return {};
  for (size_t k = 1; k < length; ++k) {
    if (!is_continuation(byte(k))) return {};
    value = (value << 6) | (byte(k) & 0x3Fu);
  }
  return {value, length};
}

// Code points that break a line or reorder what a reader sees: C1 controls (NEL among them),
// the line and paragraph separators, and the bidirectional embeddings, overrides and isolates.
bool is_hidden_control(uint32_t cp) {
  return (cp >= 0x80 && cp <= 0x9F) || (cp >= 0x2028 && cp <= 0x202E) ||
         (cp >= 0x2066 && cp <= 0x2069);
}

bool passes_as_is(unsigned char c, Escaping escaping) {
  if (c < 0x20 || c >= 0x7F || c == '\\') return false;
  return c != '"' || escaping == Escaping::kText;
}

void append_code_point_escape(std::string& out, uint32_t cp) {
  out += "\\u";
  for (int shift = 12; shift >= 0; shift -= 4) out.push_back(kHex[(cp >> shift) & 0xF]);
}

}  // namespace

size_t first_byte_to_escape(std::string_view s, Escaping escaping) {
  size_t i = 0;
  while (i < s.size()) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (passes_as_is(c, escaping)) {
      ++i;
      continue;
    }
    if (c < 0x80) return i;
    const CodePoint cp = decode_utf8(s, i);
    if (cp.length == 0 || is_hidden_control(cp.value)) return i;
    i += cp.length;
  }
  return s.size();
}

namespace {

// Appends s to out, escaped; nothing before `i` needs escaping.
void append_escaped_from(std::string& out, std::string_view s, size_t i, Escaping escaping) {
  out.append(s.substr(0, i));
  while (i < s.size()) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (passes_as_is(c, escaping)) {
      out.push_back(static_cast<char>(c));
      ++i;
      continue;
    }
    if (c >= 0x80) {
      const CodePoint cp = decode_utf8(s, i);
      if (cp.length == 0) {
        // A byte of invalid UTF-8, shown as its value (a JSON string cannot hold it raw).
        out += escaping == Escaping::kJson ? "\\\\x" : "\\x";
        out.push_back(kHex[c >> 4]);
        out.push_back(kHex[c & 0xF]);
        ++i;
      } else {
        if (is_hidden_control(cp.value)) {
          append_code_point_escape(out, cp.value);
        } else {
          out.append(s.substr(i, cp.length));
        }
        i += cp.length;
      }
      continue;
    }
    switch (c) {
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '"':
        out += "\\\"";
        break;
      default:
        append_code_point_escape(out, c);
    }
    ++i;
  }
}

}  // namespace

void append_escaped(std::string& out, std::string_view s, Escaping escaping) {
  append_escaped_from(out, s, first_byte_to_escape(s, escaping), escaping);
}

std::string_view escaped(std::string_view s, std::string& scratch, Escaping escaping) {
  const size_t first = first_byte_to_escape(s, escaping);
  if (first == s.size()) return s;
  scratch.clear();
  append_escaped_from(scratch, s, first, escaping);
  return scratch;
}

}  // namespace docguard::log
