// The error documents docguard answers with: code 121 for a refused write, and the errors a
// session answers with when it has no upstream to forward to; and the message of each violation.
#include "error_documents.h"

#include <bson/bson.h>
#include <fmt/format.h>

#include <cmath>
#include <string>

#include "docguard/base/bounded_text.h"
#include "docguard/codec/bson_elements.h"
#include "docguard/codec/op_query.h"
#include "docguard/codec/server_errors.h"

namespace docguard::conversation {

using codec::OwnedBson;
using codec::ServerError;
using rules::Action;
using rules::RefusalStyle;
using rules::Violation;

namespace {

// A refusal is no larger than the server's own error would be: a few KiB of errmsg, an errInfo
// of bounded parts. What comes from the client (field paths, shapes, ids) is cut to these, at a
// UTF-8 character boundary and marked (base/bounded_text.h).
constexpr size_t kMaxErrmsgBytes = 4096;
constexpr size_t kMaxFieldPathBytes = 512;
// A failing document's _id larger than this is left out of errInfo rather than repeated.
constexpr size_t kMaxFailingIdBytes = 1024;

std::string unbounded_violation_message(const Violation& v, std::string_view field_path,
                                        RefusalOptions options) {
  const rules::RuleKindRow& row = rules::rule_kind(v.kind);
  switch (row.refusal) {
    case RefusalStyle::kDocumentValidation:
      // What the server says for a document its validator refuses; errInfo.details says why.
      return "Document failed validation";
    case RefusalStyle::kNoIndex:
      return detail::guardrail_message(v, options);
    case RefusalStyle::kDesignRule:
      break;
  }
  if (!options.reveal_rule_source) {
    return fmt::format("docguard: design rule {} violated: {}", row.name,
                       row.describe(v, field_path));
  }
  return fmt::format("docguard: design rule {} (match \"{}\") violated: {}", row.name, v.rule_match,
                     row.describe(v, field_path));
}

}  // namespace

std::string violation_message(const Violation& v, RefusalOptions options) {
  std::string path_scratch;
  std::string_view field_path = v.field_path;
  if (field_path.size() > kMaxFieldPathBytes) {
    path_scratch = base::bounded(field_path, kMaxFieldPathBytes);
    field_path = path_scratch;
  }
  std::string message = unbounded_violation_message(v, field_path, options);
  if (message.size() > kMaxErrmsgBytes) message = base::bounded(message, kMaxErrmsgBytes);
  return message;
}

namespace detail {

namespace {

// The errmsg of a refusal the verdict gives no violation for.
constexpr const char* kBlockedWithoutViolation = "docguard: blocked by a design rule";

// code and codeName, from the one table of server errors.
void append_code(bson_t* doc, ServerError code) {
  BSON_APPEND_INT32(doc, "code", codec::code_of(code));
  BSON_APPEND_UTF8(doc, "codeName", codec::code_name(code));
}

void append_number(bson_t* doc, const char* key, double value) {
  if (std::isfinite(value) && value == std::floor(value) && std::fabs(value) < 9e15) {
    BSON_APPEND_INT64(doc, key, static_cast<int64_t>(value));
  } else {
    BSON_APPEND_DOUBLE(doc, key, value);
  }
}

// A $jsonSchema refusal's errInfo as the server writes it: {failingDocumentId, details}. The
// server always names the document's _id; null when docguard cannot know it (an operator
// update or a replacement whose query does not name the _id).
void append_schema_err_info(bson_t* parent, const Violation& v) {
  bson_t info;
  BSON_APPEND_DOCUMENT_BEGIN(parent, "errInfo", &info);
  codec::BsonElements id(v.failing_id.data(), static_cast<uint32_t>(v.failing_id.size()));
  if (!v.failing_id.empty() && id.find("_id")) {
    id.append_to(&info, "failingDocumentId");
  } else {
    bson_append_null(&info, "failingDocumentId", -1);
  }
  // The server's size rule: a truncated error says so; one too large even then is a note.
  const rules::Violation::SchemaDetails& schema = v.schema_details();
  if (schema.size == schema::DetailsSize::kTooLarge) {
    BSON_APPEND_UTF8(&info, "note", "detailed error was too large");
    bson_append_document_end(parent, &info);
    return;
  }
  if (schema.size == schema::DetailsSize::kTruncated) BSON_APPEND_BOOL(&info, "truncated", true);
  bson_t details;
  if (bson_init_static(&details, schema.details.data(), schema.details.size())) {
    bson_append_document(&info, "details", -1, &details);
  }
  bson_append_document_end(parent, &info);
}

// errInfo: {rule, match?, ruleLine?, fieldPath, measured, bound, failingDocumentId?}; match and
// ruleLine only when the options reveal the rule's source.
void append_err_info(bson_t* parent, const Violation& v, RefusalOptions options) {
  if (rules::rule_kind(v.kind).refusal == RefusalStyle::kDocumentValidation) {
    append_schema_err_info(parent, v);
    return;
  }
  bson_t info;
  BSON_APPEND_DOCUMENT_BEGIN(parent, "errInfo", &info);
  BSON_APPEND_UTF8(&info, "rule", rules::rule_name(v.kind));
  if (options.reveal_rule_source) {
    BSON_APPEND_UTF8(&info, "match", v.rule_match.c_str());
    if (v.rule_line > 0) BSON_APPEND_INT32(&info, "ruleLine", v.rule_line);
  }
  BSON_APPEND_UTF8(&info, "fieldPath", base::bounded(v.field_path, kMaxFieldPathBytes).c_str());
  append_number(&info, "measured", v.measured);
  append_number(&info, "bound", v.bound);
  if (!v.failing_id.empty() && v.failing_id.size() <= kMaxFailingIdBytes) {
    codec::BsonElements id(v.failing_id.data(), static_cast<uint32_t>(v.failing_id.size()));
    if (id.find("_id")) id.append_to(&info, "failingDocumentId");
  }
  bson_append_document_end(parent, &info);
}

// A refusal's code: what the server reports for the same thing (notablescan's 291 for the
// query guardrail, validation's 121 for the design rules on documents).
ServerError refusal_code(const Violation* v) {
  return v != nullptr && rules::rule_kind(v->kind).refusal == RefusalStyle::kNoIndex
             ? ServerError::kNoQueryExecutionPlans
             : ServerError::kDocumentValidationFailure;
}

void append_refusal_info(bson_t* doc, const Violation& v, RefusalOptions options) {
  if (rules::rule_kind(v.kind).refusal == RefusalStyle::kNoIndex) {
    append_guardrail_err_info(doc, v, options);
  } else {
    append_err_info(doc, v, options);
  }
}

// code, codeName, errmsg and errInfo: what server-side validation reports for a document.
// Without a violation, code, codeName and errmsg only, as for a whole command.
void append_validation_failure(bson_t* doc, const Violation* v, RefusalOptions options) {
  append_code(doc, refusal_code(v));
  BSON_APPEND_UTF8(
      doc, "errmsg",
      v != nullptr ? violation_message(*v, options).c_str() : kBlockedWithoutViolation);
  if (v != nullptr) append_refusal_info(doc, *v, options);
}

}  // namespace

// A writeErrors entry: {index, code, codeName, errmsg, errInfo}.
std::vector<uint8_t> write_error(int32_t index, const Violation* v, RefusalOptions options) {
  OwnedBson e;
  BSON_APPEND_INT32(e.get(), "index", index);
  append_validation_failure(e.get(), v, options);
  auto b = e.bytes();
  return {b.begin(), b.end()};
}

// A bulkWrite per-op result for a refused op: {ok: 0, idx, code, codeName, errmsg, errInfo}.
std::vector<uint8_t> bulk_write_error(int32_t index, const Violation* v, RefusalOptions options) {
  OwnedBson e;
  BSON_APPEND_DOUBLE(e.get(), "ok", 0.0);
  BSON_APPEND_INT32(e.get(), "idx", index);
  append_validation_failure(e.get(), v, options);
  auto b = e.bytes();
  return {b.begin(), b.end()};
}

void append_documents(bson_t* parent, const char* key,
                      const std::vector<std::vector<uint8_t>>& docs) {
  std::vector<codec::BsonView> views;
  views.reserve(docs.size());
  for (const auto& d : docs) views.push_back({d.data(), static_cast<uint32_t>(d.size())});
  codec::append_document_array(parent, key, views);
}

// The violation reported for a blocked statement: its first blocking one.
const Violation* blocking_violation(const rules::Verdict& verdict, int32_t index) {
  const Violation* any = nullptr;
  for (const Violation& v : verdict.violations) {
    if (v.action != Action::kBlock) continue;
    if (v.statement_index == index) return &v;
    if (any == nullptr) any = &v;
  }
  return index < 0 ? any : nullptr;
}

std::vector<uint8_t> command_error(const codec::OpMsg& request, const rules::Verdict& verdict,
                                   int32_t reply_request_id, RefusalOptions options) {
  const Violation* v = blocking_violation(verdict, -1);
  OwnedBson body;
  BSON_APPEND_DOUBLE(body.get(), "ok", 0.0);
  BSON_APPEND_UTF8(
      body.get(), "errmsg",
      v != nullptr ? violation_message(*v, options).c_str() : kBlockedWithoutViolation);
  append_code(body.get(), refusal_code(v));
  if (v != nullptr) append_refusal_info(body.get(), *v, options);
  return codec::OpMsgBuilder(reply_request_id, request.header.request_id)
      .body(body.bytes())
      .finish();
}

std::vector<uint8_t> error_reply(codec::Bytes request, int32_t reply_request_id, ServerError code,
                                 const std::string& errmsg) {
  if (request.size() < codec::kHeaderSize) return {};
  const auto header = codec::read_header(request.data());
  // A compressed request is answered as an OP_MSG without being decompressed for its flags:
  // drivers compress OP_MSG only, and a request refused needs no more reading than that.
  if (header.op_code == codec::OpCode::kMsg && request.size() >= codec::kHeaderSize + 4 &&
      (static_cast<uint32_t>(codec::load_le32(request.data() + codec::kHeaderSize)) &
       codec::op_msg_flags::kMoreToCome) != 0) {
    return {};
  }
  OwnedBson doc;
  BSON_APPEND_DOUBLE(doc.get(), "ok", 0.0);
  BSON_APPEND_UTF8(doc.get(), "errmsg", base::bounded(errmsg, kMaxErrmsgBytes).c_str());
  append_code(doc.get(), code);
  if (header.op_code == codec::OpCode::kQuery) {
    return codec::build_op_reply(reply_request_id, header.request_id, doc.view().bytes());
  }
  return codec::OpMsgBuilder(reply_request_id, header.request_id).body(doc.get()).finish();
}

}  // namespace detail
}  // namespace docguard::conversation
