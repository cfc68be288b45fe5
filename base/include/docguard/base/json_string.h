// JSON strings for reports, /status and the admin API. Their text comes from clients and
// clusters (names, app names, error texts), so it is escaped as the JSON log escapes it
// (log_escape.h): control characters, hidden Unicode controls and invalid UTF-8 never reach a
// reader raw, and every string written is valid JSON.
#pragma once

#include <string>
#include <string_view>
#include <utility>

#include "docguard/base/log_escape.h"

namespace docguard::json {

// Appends s escaped for the inside of a JSON string, without the quotes.
inline void append_escaped(std::string& out, std::string_view s) {
  log::append_escaped(out, s, log::Escaping::kJson);
}

// Appends s as a JSON string, quotes included.
inline void append_string(std::string& out, std::string_view s) {
  out.push_back('"');
  append_escaped(out, s);
  out.push_back('"');
}

// s as a JSON string, quotes included.
inline std::string quoted(std::string_view s) {
  std::string out;
  append_string(out, s);
  return out;
}

}  // namespace docguard::json
