// Escaping of log values. Names, app names, client metadata and error texts reach the log from
// clients; raw, a newline in one would start a forged log line and an escape sequence would
// drive the reader's terminal. Every value is written with control characters escaped:
//   \n \r \t, a backslash as \\, other C0 controls and DEL as \u00XX, C1 controls and the
//   Unicode line, paragraph and bidirectional-override characters as \uXXXX, and each byte
//   that is not part of valid UTF-8 as \xNN (in JSON as \\xNN, which reads back as \xNN).
// Text without such a byte is passed through: the scan is the whole cost of a clean value.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace docguard::log {

enum class Escaping {
  kText,        // a text log value: quotes stay as they are
  kQuotedText,  // inside "..." in a text log: a quote is \" too
  kJson,        // inside a JSON string: a quote is \", invalid UTF-8 is \\xNN
};

// Where the first byte that `escaping` would change is, or s.size() when there is none.
size_t first_byte_to_escape(std::string_view s, Escaping escaping);

// Appends s to out, escaped.
void append_escaped(std::string& out, std::string_view s, Escaping escaping);

// s itself when nothing in it needs escaping, otherwise its escaped form, kept in `scratch`.
std::string_view escaped(std::string_view s, std::string& scratch, Escaping escaping);

}  // namespace docguard::log
