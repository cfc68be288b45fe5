// The query guardrail's refusal: the error the server gives under notablescan (code 291
// NoQueryExecutionPlans, "No indexed plans available, and running with 'notablescan'", from the
// server's query planner), followed by docguard's reason, and an errInfo naming the rule, the
// shape (what an `allow` entry takes) and the index that would serve it.
#include <bson/bson.h>
#include <fmt/format.h>

#include <string>

#include "error_documents.h"

namespace docguard::conversation::detail {

namespace {

constexpr const char* kNotablescanMessage =
    "No indexed plans available, and running with 'notablescan'";

}  // namespace

std::string guardrail_message(const rules::Violation& v) {
  return fmt::format(
      "{} (docguard: design rule require_index, rule \"{}\": no index serves {}; an index that "
      "would: {})",
      kNotablescanMessage, v.rule_id, v.shape, rules::index_keys_text(v.suggested_index));
}

void append_guardrail_err_info(bson_t* parent, const rules::Violation& v) {
  bson_t info, index;
  BSON_APPEND_DOCUMENT_BEGIN(parent, "errInfo", &info);
  BSON_APPEND_UTF8(&info, "rule", v.rule_id.c_str());
  BSON_APPEND_UTF8(&info, "shape", v.shape.c_str());
  BSON_APPEND_DOCUMENT_BEGIN(&info, "index", &index);
  for (const auto& [field, type] : v.suggested_index) {
    const int direction = rules::index_key_direction(type);
    if (direction != 0) {
      bson_append_int32(&index, field.data(), static_cast<int>(field.size()), direction);
    } else {
      bson_append_utf8(&index, field.data(), static_cast<int>(field.size()), type.data(),
                       static_cast<int>(type.size()));
    }
  }
  bson_append_document_end(&info, &index);
  BSON_APPEND_UTF8(&info, "match", v.rule_match.c_str());
  if (v.rule_line > 0) BSON_APPEND_INT32(&info, "ruleLine", v.rule_line);
  bson_append_document_end(parent, &info);
}

}  // namespace docguard::conversation::detail
