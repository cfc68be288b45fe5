// The query guardrail's refusal: the error the server gives under notablescan (code 291
// NoQueryExecutionPlans, "No indexed plans available, and running with 'notablescan'", from the
// server's query planner), followed by docguard's reason, and an errInfo naming the rule, the
// shape (what an `allow` entry takes) and the index that would serve it.
#include <bson/bson.h>
#include <fmt/format.h>

#include <string>

#include "docguard/base/bounded_text.h"
#include "error_documents.h"

namespace docguard::conversation::detail {

namespace {

// The server's texts: its planner's when no index serves, and when a $natural hint or sort (the
// server turns the sort into the hint) or a tailable cursor asks for a collection scan.
constexpr const char* kNotablescanMessage =
    "No indexed plans available, and running with 'notablescan'";
constexpr const char* kCollectionScanRefused =
    "not allowed to output a collection scan because 'notablescan' is enabled";

std::string server_message(rules::ScanReason reason) {
  switch (reason) {
    case rules::ScanReason::kNaturalHint:
    case rules::ScanReason::kNaturalSort:
      return fmt::format(
          "could not force a collection scan with a $natural hint :: caused by :: {}",
          kCollectionScanRefused);
    case rules::ScanReason::kTailable:
      return fmt::format("query is tailable so must do a collection scan :: caused by :: {}",
                         kCollectionScanRefused);
    case rules::ScanReason::kNoIndex:
      break;
  }
  return kNotablescanMessage;
}

// The shape text and the suggested index's fields come bounded from the rules (shape_text.cc,
// query_shape.cc); these bounds hold whatever they hold, so the refusal stays a few KiB.
constexpr size_t kMaxMessageBytes = 4096;
constexpr size_t kMaxShapeBytes = 1024;
constexpr size_t kMaxIndexFieldBytes = 512;
constexpr size_t kMaxIndexFields = 32;

}  // namespace

std::string guardrail_message(const rules::Violation& v, RefusalOptions options) {
  const rules::Violation::UnindexedQuery& q = v.unindexed_query();
  if (!options.reveal_rule_source) {
    // The same texts without the rule's id: that is the operator's configuration.
    if (q.scan_reason != rules::ScanReason::kNoIndex) {
      return base::bounded(
          fmt::format("{} (docguard: design rule require_index: {} is a collection scan)",
                      server_message(q.scan_reason), base::bounded(q.shape, kMaxShapeBytes)),
          kMaxMessageBytes);
    }
    return base::bounded(
        fmt::format("{} (docguard: design rule require_index: no index serves {}; an index that "
                    "would: {})",
                    kNotablescanMessage, base::bounded(q.shape, kMaxShapeBytes),
                    rules::index_keys_text(q.suggested_index)),
        kMaxMessageBytes);
  }
  if (q.scan_reason != rules::ScanReason::kNoIndex) {
    return base::bounded(
        fmt::format(
            "{} (docguard: design rule require_index, rule \"{}\": {} is a collection scan)",
            server_message(q.scan_reason), q.rule_id, base::bounded(q.shape, kMaxShapeBytes)),
        kMaxMessageBytes);
  }
  return base::bounded(
      fmt::format("{} (docguard: design rule require_index, rule \"{}\": no index serves {}; an "
                  "index that would: {})",
                  kNotablescanMessage, q.rule_id, base::bounded(q.shape, kMaxShapeBytes),
                  rules::index_keys_text(q.suggested_index)),
      kMaxMessageBytes);
}

void append_guardrail_err_info(bson_t* parent, const rules::Violation& v, RefusalOptions options) {
  const rules::Violation::UnindexedQuery& q = v.unindexed_query();
  bson_t info, index;
  BSON_APPEND_DOCUMENT_BEGIN(parent, "errInfo", &info);
  // The rule's kind, as a design rule's errInfo names it; its id only when revealed.
  BSON_APPEND_UTF8(&info, "rule",
                   options.reveal_rule_source ? q.rule_id.c_str() : rules::rule_name(v.kind));
  BSON_APPEND_UTF8(&info, "shape", base::bounded(q.shape, kMaxShapeBytes).c_str());
  BSON_APPEND_DOCUMENT_BEGIN(&info, "index", &index);
  size_t fields = 0;
  for (const auto& [whole_field, type] : q.suggested_index) {
    if (++fields > kMaxIndexFields) break;
    const std::string field = base::bounded(whole_field, kMaxIndexFieldBytes);
    const int direction = rules::index_key_direction(type);
    if (direction != 0) {
      bson_append_int32(&index, field.data(), static_cast<int>(field.size()), direction);
    } else {
      bson_append_utf8(&index, field.data(), static_cast<int>(field.size()), type.data(),
                       static_cast<int>(type.size()));
    }
  }
  bson_append_document_end(&info, &index);
  if (options.reveal_rule_source) {
    BSON_APPEND_UTF8(&info, "match", v.rule_match.c_str());
    if (v.rule_line > 0) BSON_APPEND_INT32(&info, "ruleLine", v.rule_line);
  }
  bson_append_document_end(parent, &info);
}

}  // namespace docguard::conversation::detail
