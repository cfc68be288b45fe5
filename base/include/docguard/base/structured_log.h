// Log lines with fields: the producer (e.g. the rules engine) attaches key/value pairs to a
// message, and the process's log formatter renders them as JSON members (--log-format json) or
// as key=value pairs (text). Producers stay independent of the output format. Values are
// escaped here (docguard/base/log_escape.h): they may come from clients.
#pragma once

#include <cmath>
#include <cstdint>
#include <string>
#include <string_view>

#include "docguard/base/bounded_text.h"
#include "docguard/base/log_escape.h"

namespace docguard::log {

// A payload with fields is RS "text" RS json-members RS key=value-pairs. Only
// Fields::message() starts a payload with RS: every other log call's format string starts with
// its own words, so client text inside a plain message is never taken for fields.
constexpr char kFieldsSeparator = '\x1e';

class Fields {
 public:
  // A value's bound before escaping: values come from clients (names, shapes, errors), and a
  // name of megabytes must not make a log line of megabytes. Longer values are cut and marked
  // (base/bounded_text.h).
  static constexpr size_t kMaxValueBytes = 1024;

  Fields& add(std::string_view key, std::string_view value) {
    std::string cut;
    if (value.size() > kMaxValueBytes) {
      cut = base::bounded(value, kMaxValueBytes);
      value = cut;
    }
    begin(key);
    json_.push_back('"');
    append_escaped(json_, value, Escaping::kJson);
    json_.push_back('"');
    if (value.empty()) {
      text_.push_back('-');
    } else if (value.find_first_of(" \"") == std::string_view::npos) {
      append_escaped(text_, value, Escaping::kText);
    } else {
      // Quoted, so a value cannot pose as more key=value pairs.
      text_.push_back('"');
      append_escaped(text_, value, Escaping::kQuotedText);
      text_.push_back('"');
    }
    return *this;
  }
  Fields& add(std::string_view key, const char* value) { return add(key, std::string_view(value)); }
  Fields& add(std::string_view key, double value) {
    begin(key);
    std::string number;
    if (std::isfinite(value) && value == std::floor(value) && std::fabs(value) < 9e15) {
      number = std::to_string(static_cast<int64_t>(value));
    } else if (std::isfinite(value)) {
      number = std::to_string(value);
      while (number.size() > 1 && number.back() == '0') number.pop_back();
      if (number.back() == '.') number.pop_back();
    } else {
      number = "null";
    }
    json_ += number;
    text_ += number;
    return *this;
  }
  Fields& add(std::string_view key, int64_t value) { return add(key, static_cast<double>(value)); }

  // The payload to hand to spdlog, e.g. spdlog::warn("{}", fields.message("..."))
  std::string message(std::string_view text) const {
    std::string out(1, kFieldsSeparator);
    out.append(text);
    out.push_back(kFieldsSeparator);
    out += json_;
    out.push_back(kFieldsSeparator);
    out += text_;
    return out;
  }

 private:
  void begin(std::string_view key) {
    if (!json_.empty()) {
      json_.push_back(',');
      text_.push_back(' ');
    }
    json_.push_back('"');
    json_.append(key);
    json_ += "\":";
    text_.append(key);
    text_.push_back('=');
  }

  std::string json_;
  std::string text_;
};

}  // namespace docguard::log
