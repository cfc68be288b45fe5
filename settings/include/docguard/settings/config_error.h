// What every layer may know of the settings reader without seeing YAML: its one error type, and
// the scalar spellings (sizes, durations, booleans) the file and the flags share.
#pragma once

#include <chrono>
#include <optional>
#include <stdexcept>
#include <string_view>

#include "docguard/base/error.h"

namespace docguard::settings {

// A configuration error. what() reads "FILE:LINE:COLUMN: key 'rules[0].max_array_length': ...".
// Thrown, since the readers nest deeply and any key may fail; error() is the same failure as
// base's Error, for code that reports errors of every layer alike.
class ConfigError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;

  // Kind and source kConfiguration, what() as the message; retrying cannot help.
  base::Error error() const {
    return base::Error{base::ErrorKind::kConfiguration, base::ErrorSource::kConfiguration, what()};
  }
};

// "2MiB", "512 KB", "1048576" -> bytes; nullopt when malformed.
std::optional<double> parse_byte_size(std::string_view text);
// "500ms", "10s", "5m", "1h" -> milliseconds. The unit is required: a bare number is refused
// (nullopt), since "90" would read as seconds to some and milliseconds to others.
std::optional<std::chrono::milliseconds> parse_duration(std::string_view text);
inline constexpr std::string_view kDurationUnits = "ms, s, m, h or d";
// true/yes/on, false/no/off; nullopt otherwise.
std::optional<bool> parse_boolean(std::string_view text);

}  // namespace docguard::settings
