#include "docguard/proxy/log_format.h"

#include <spdlog/pattern_formatter.h>

#include <string>
#include <string_view>

#include "docguard/base/log_escape.h"
#include "docguard/base/structured_log.h"

namespace docguard::proxy {
namespace {

// Log payloads may carry fields (docguard/base/structured_log.h): RS "text" RS json-members RS
// key=value-pairs. These two formatters render a payload as JSON members or as text. Log calls
// format client text (names, app names, error texts) into their messages, so the message is
// escaped here; field values were escaped when they were added.
struct Payload {
  std::string_view text, json_members, text_fields;
};

Payload split_payload(std::string_view payload) {
  using log::kFieldsSeparator;
  if (payload.empty() || payload.front() != kFieldsSeparator) return {payload, {}, {}};
  const auto first = payload.find(kFieldsSeparator, 1);
  if (first == std::string_view::npos) return {payload.substr(1), {}, {}};
  const auto second = payload.find(kFieldsSeparator, first + 1);
  if (second == std::string_view::npos) return {payload.substr(1, first - 1), {}, {}};
  return {payload.substr(1, first - 1), payload.substr(first + 1, second - first - 1),
          payload.substr(second + 1)};
}

// `"msg":"<escaped text>"` then `,<fields>`: every line is one valid JSON object.
class JsonMessageAndFields final : public spdlog::custom_flag_formatter {
 public:
  void format(const spdlog::details::log_msg& msg, const std::tm&,
              spdlog::memory_buf_t& dest) override {
    const Payload p = split_payload(std::string_view(msg.payload.data(), msg.payload.size()));
    std::string out = "\"msg\":\"";
    log::append_escaped(out, p.text, log::Escaping::kJson);
    out.push_back('"');
    if (!p.json_members.empty()) {
      out.push_back(',');
      out.append(p.json_members);
    }
    dest.append(out.data(), out.data() + out.size());
  }
  std::unique_ptr<custom_flag_formatter> clone() const override {
    return std::make_unique<JsonMessageAndFields>();
  }
};

// "text: key=value key=value", one line whatever the text holds.
class TextMessageAndFields final : public spdlog::custom_flag_formatter {
 public:
  void format(const spdlog::details::log_msg& msg, const std::tm&,
              spdlog::memory_buf_t& dest) override {
    const Payload p = split_payload(std::string_view(msg.payload.data(), msg.payload.size()));
    std::string scratch;
    const std::string_view text = log::escaped(p.text, scratch, log::Escaping::kText);
    dest.append(text.data(), text.data() + text.size());
    if (!p.text_fields.empty()) {
      dest.push_back(':');
      dest.push_back(' ');
      dest.append(p.text_fields.data(), p.text_fields.data() + p.text_fields.size());
    }
  }
  std::unique_ptr<custom_flag_formatter> clone() const override {
    return std::make_unique<TextMessageAndFields>();
  }
};

}  // namespace

std::unique_ptr<spdlog::formatter> make_log_formatter(LogFormat format) {
  auto formatter = std::make_unique<spdlog::pattern_formatter>(spdlog::pattern_time_type::utc);
  if (format == LogFormat::kJson) {
    formatter->add_flag<JsonMessageAndFields>('*').set_pattern(
        R"({"ts":"%Y-%m-%dT%H:%M:%S.%fZ","level":"%l",%*})");
  } else {
    formatter->add_flag<TextMessageAndFields>('*').set_pattern("%Y-%m-%dT%H:%M:%S.%e %^%l%$ %*");
  }
  return formatter;
}

}  // namespace docguard::proxy
