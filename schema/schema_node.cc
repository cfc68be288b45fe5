// Compiled patterns and the property table's lookup.
#include "schema_node.h"

#include <algorithm>
#include <array>
#include <stdexcept>
#include <string>

namespace docguard::schema {

namespace {

// The server's heap limit for one regex match (100 MiB): a match that needs more fails.
constexpr uint32_t kHeapLimitKib = 100 * 1024;

}  // namespace

Regex::Regex(std::string source, Mode mode) : source_(std::move(source)) {
  int code = 0;
  PCRE2_SIZE offset = 0;
  struct CompileContext {
    pcre2_compile_context* context = pcre2_compile_context_create(nullptr);
    ~CompileContext() { pcre2_compile_context_free(context); }
  } compile;
  pcre2_set_max_pattern_length(compile.context, kMaxLength);
  code_ = pcre2_compile(reinterpret_cast<PCRE2_SPTR>(source_.data()), source_.size(),
                        mode == kValue ? PCRE2_UTF : 0, &code, &offset, compile.context);
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
    pcre2_match_context* context = pcre2_match_context_create(nullptr);
    MatchData() { pcre2_set_heap_limit(context, kHeapLimitKib); }
    ~MatchData() {
      pcre2_match_context_free(context);
      pcre2_match_data_free(data);
    }
  };
  thread_local MatchData md;
  // PCRE2_NO_UTF_CHECK is not passed: a document's strings need not be valid UTF-8, and an
  // invalid one then simply does not match.
  const auto* subject = reinterpret_cast<PCRE2_SPTR>(text.data());
  int rc = pcre2_match(code_, subject, text.size(), 0, 0, md.data, md.context);
  if (rc == PCRE2_ERROR_JIT_STACKLIMIT) {
    // The JIT's fixed stack (32 KiB) runs out on long subjects of a repeated group, a limit
    // the server does not have: the interpreter works from the heap, up to the heap limit.
    rc = pcre2_match(code_, subject, text.size(), 0, PCRE2_NO_JIT, md.data, md.context);
  }
  return rc >= 0;
}

namespace {

bool field_of(const Value& object, std::string_view name, Value* out) {
  for (codec::BsonElements e(object.data, object.size); e.next();) {
    if (e.key == name) {
      *out = Value::of(e);
      return true;
    }
  }
  return false;
}

bool is_position(std::string_view segment) {
  if (segment.empty() || segment.size() > 9) return false;
  return std::all_of(segment.begin(), segment.end(), [](char c) { return c >= '0' && c <= '9'; });
}

}  // namespace

bool path_exists(const Value& object, std::string_view name) {
  const size_t dot = name.find('.');
  Value v;
  if (!field_of(object, name.substr(0, dot), &v)) return false;
  if (dot == std::string_view::npos) return true;
  const std::string_view rest = name.substr(dot + 1);
  if (v.is_document()) return path_exists(v, rest);
  if (!v.is_array()) return false;
  // An array: its elements that are documents, or the element at a numeric position.
  const std::string_view next = rest.substr(0, rest.find('.'));
  uint32_t index = 0;
  for (codec::BsonElements e(v.data, v.size); e.next(); ++index) {
    const Value element = Value::of(e);
    if (element.is_document() && path_exists(element, rest)) return true;
    if (is_position(next) && std::to_string(index) == next) {
      const size_t more = rest.find('.');
      if (more == std::string_view::npos) return true;
      if (element.is_document() && path_exists(element, rest.substr(more + 1))) return true;
    }
  }
  return false;
}

At value_at(const Value& object, std::string_view name, Value* out) {
  Value v = object;
  size_t start = 0;
  while (true) {
    const size_t dot = name.find('.', start);
    const std::string_view segment =
        name.substr(start, dot == std::string_view::npos ? std::string_view::npos : dot - start);
    Value field;
    if (!field_of(v, segment, &field)) return At::kAbsent;
    if (dot == std::string_view::npos) {
      *out = field;
      return At::kFound;
    }
    if (field.is_array()) return At::kUncertain;
    if (!field.is_document()) return At::kAbsent;
    v = field;
    start = dot + 1;
  }
}

const Property* Node::property(std::string_view name) const {
  auto it = std::lower_bound(properties.begin(), properties.end(), name,
                             [](const Property& p, std::string_view n) { return p.name < n; });
  return it != properties.end() && it->name == name ? &*it : nullptr;
}

}  // namespace docguard::schema
