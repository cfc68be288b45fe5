// Compiled patterns and the property table's lookup.
#include "schema_node.h"

#include <algorithm>
#include <array>
#include <stdexcept>
#include <string>

namespace docguard::rules {

namespace schema {

Regex::Regex(std::string source) : source_(std::move(source)) {
  int code = 0;
  PCRE2_SIZE offset = 0;
  code_ = pcre2_compile(reinterpret_cast<PCRE2_SPTR>(source_.data()), source_.size(), PCRE2_UTF,
                        &code, &offset, nullptr);
  if (code_ == nullptr) {
    std::array<PCRE2_UCHAR, 256> message{};
    pcre2_get_error_message(code, message.data(), message.size());
    throw std::invalid_argument(std::string(reinterpret_cast<const char*>(message.data())) +
                                " at offset " + std::to_string(offset));
  }
  // JIT is an optimisation: without it (unsupported platform) matching still works.
  (void)pcre2_jit_compile(code_, PCRE2_JIT_COMPLETE);
}

Regex::~Regex() { pcre2_code_free(code_); }

bool Regex::matches(std::string_view text) const {
  // One match-data block per thread, sized for the whole match only: judging needs whether it
  // matches, not the groups (PCRE2 then reports 0, still a match).
  struct MatchData {
    pcre2_match_data* data = pcre2_match_data_create(1, nullptr);
    ~MatchData() { pcre2_match_data_free(data); }
  };
  thread_local MatchData md;
  // PCRE2_NO_UTF_CHECK is not passed: a document's strings need not be valid UTF-8, and an
  // invalid one then simply does not match.
  const int rc = pcre2_match(code_, reinterpret_cast<PCRE2_SPTR>(text.data()), text.size(), 0, 0,
                             md.data, nullptr);
  return rc >= 0;
}

const Property* Node::property(std::string_view name) const {
  auto it = std::lower_bound(properties.begin(), properties.end(), name,
                             [](const Property& p, std::string_view n) { return p.name < n; });
  return it != properties.end() && it->name == name ? &*it : nullptr;
}

}  // namespace schema

}  // namespace docguard::rules
