#include "docguard/conversation/enforcement.h"

#include <bson/bson.h>
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <string>

namespace docguard::conversation {

using codec::CommandKind;
using rules::Action;
using rules::Violation;

namespace {

// RAII for a heap-free bson_t built in place.
struct OwnedBson {
  bson_t b = BSON_INITIALIZER;
  OwnedBson() = default;
  OwnedBson(const OwnedBson&) = delete;
  OwnedBson& operator=(const OwnedBson&) = delete;
  ~OwnedBson() { bson_destroy(&b); }
  bson_t* get() { return &b; }
  codec::Bytes bytes() const { return {bson_get_data(&b), b.len}; }
};

void append_number(bson_t* doc, const char* key, double value) {
  if (std::isfinite(value) && value == std::floor(value) && std::fabs(value) < 9e15) {
    BSON_APPEND_INT64(doc, key, static_cast<int64_t>(value));
  } else {
    BSON_APPEND_DOUBLE(doc, key, value);
  }
}

// errInfo: {rule, match, fieldPath, measured, bound, failingDocumentId?}
void append_err_info(bson_t* parent, const Violation& v) {
  bson_t info;
  BSON_APPEND_DOCUMENT_BEGIN(parent, "errInfo", &info);
  BSON_APPEND_UTF8(&info, "rule", v.rule.c_str());
  BSON_APPEND_UTF8(&info, "match", v.rule_match.c_str());
  BSON_APPEND_UTF8(&info, "fieldPath", v.field_path.c_str());
  append_number(&info, "measured", v.measured);
  append_number(&info, "bound", v.bound);
  if (!v.failing_id.empty()) {
    bson_t id;
    bson_iter_t it;
    if (bson_init_static(&id, v.failing_id.data(), v.failing_id.size()) &&
        bson_iter_init_find(&it, &id, "_id")) {
      bson_append_value(&info, "failingDocumentId", -1, bson_iter_value(&it));
    }
  }
  bson_append_document_end(parent, &info);
}

// code, codeName, errmsg and errInfo: what server-side validation reports for a document.
void append_validation_failure(bson_t* doc, const Violation& v) {
  BSON_APPEND_INT32(doc, "code", kDocumentValidationFailure);
  BSON_APPEND_UTF8(doc, "codeName", "DocumentValidationFailure");
  BSON_APPEND_UTF8(doc, "errmsg", violation_message(v).c_str());
  append_err_info(doc, v);
}

// A writeErrors entry: {index, code, codeName, errmsg, errInfo}.
std::vector<uint8_t> write_error(int32_t index, const Violation& v) {
  OwnedBson e;
  BSON_APPEND_INT32(e.get(), "index", index);
  append_validation_failure(e.get(), v);
  auto b = e.bytes();
  return {b.begin(), b.end()};
}

// A bulkWrite per-op result for a refused op: {ok: 0, idx, code, codeName, errmsg, errInfo}.
std::vector<uint8_t> bulk_write_error(int32_t index, const Violation& v) {
  OwnedBson e;
  BSON_APPEND_DOUBLE(e.get(), "ok", 0.0);
  BSON_APPEND_INT32(e.get(), "idx", index);
  append_validation_failure(e.get(), v);
  auto b = e.bytes();
  return {b.begin(), b.end()};
}

void append_documents(bson_t* parent, const char* key,
                      const std::vector<std::vector<uint8_t>>& docs) {
  bson_t array;
  bson_append_array_begin(parent, key, -1, &array);
  char key_buf[16];
  for (size_t i = 0; i < docs.size(); ++i) {
    const char* k = nullptr;
    bson_uint32_to_string(static_cast<uint32_t>(i), &k, key_buf, sizeof key_buf);
    bson_t doc;
    if (bson_init_static(&doc, docs[i].data(), docs[i].size()))
      bson_append_document(&array, k, -1, &doc);
  }
  bson_append_array_end(parent, &array);
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
                                   int32_t reply_request_id) {
  const Violation* v = blocking_violation(verdict, -1);
  OwnedBson body;
  BSON_APPEND_DOUBLE(body.get(), "ok", 0.0);
  BSON_APPEND_UTF8(
      body.get(), "errmsg",
      v != nullptr ? violation_message(*v).c_str() : "docguard: blocked by a design rule");
  BSON_APPEND_INT32(body.get(), "code", kDocumentValidationFailure);
  BSON_APPEND_UTF8(body.get(), "codeName", "DocumentValidationFailure");
  if (v != nullptr) append_err_info(body.get(), *v);
  return codec::OpMsgBuilder(reply_request_id, request.header.request_id)
      .body(body.bytes())
      .finish();
}

void append_write_errors(bson_t* body, const std::vector<std::vector<uint8_t>>& errors) {
  bson_t array;
  BSON_APPEND_ARRAY_BEGIN(body, "writeErrors", &array);
  char key_buf[16];
  for (size_t i = 0; i < errors.size(); ++i) {
    const char* key = nullptr;
    bson_uint32_to_string(static_cast<uint32_t>(i), &key, key_buf, sizeof key_buf);
    bson_t doc;
    if (bson_init_static(&doc, errors[i].data(), errors[i].size())) {
      bson_append_document(&array, key, -1, &doc);
    }
  }
  bson_append_array_end(body, &array);
}

// The request with only the `keep` statements, in the same place (body array or kind-1
// sequence) they came from; no checksum.
std::vector<uint8_t> rewrite_request(const codec::OpMsg& request, const codec::CommandView& cmd,
                                     const std::vector<int32_t>& keep) {
  std::vector<codec::BsonView> kept;
  kept.reserve(keep.size());
  for (int32_t i : keep) kept.push_back(cmd.statements[static_cast<size_t>(i)]);

  codec::OpMsgBuilder builder(request.header.request_id, request.header.response_to,
                              request.flags & ~codec::op_msg_flags::kChecksumPresent);
  OwnedBson body;
  if (cmd.payload_source == codec::PayloadSource::kBody) {
    bson_iter_t it;
    if (bson_iter_init_from_data(&it, request.body.data, request.body.size)) {
      while (bson_iter_next(&it)) {
        if (cmd.payload_field != bson_iter_key(&it)) {
          bson_append_iter(body.get(), nullptr, 0, &it);
          continue;
        }
        bson_t array;
        bson_append_array_begin(body.get(), bson_iter_key(&it), -1, &array);
        char key_buf[16];
        for (size_t i = 0; i < kept.size(); ++i) {
          const char* key = nullptr;
          bson_uint32_to_string(static_cast<uint32_t>(i), &key, key_buf, sizeof key_buf);
          bson_t doc;
          if (bson_init_static(&doc, kept[i].data, kept[i].size)) {
            bson_append_document(&array, key, -1, &doc);
          }
        }
        bson_append_array_end(body.get(), &array);
      }
    }
    builder.body(body.bytes());
  } else {
    builder.body(request.body.bytes());
  }
  for (const auto& seq : request.sequences) {
    if (cmd.payload_source == codec::PayloadSource::kSequence &&
        seq.identifier == cmd.payload_field) {
      builder.sequence(seq.identifier, kept);
    } else {
      builder.sequence(seq.identifier, seq.documents);
    }
  }
  return builder.finish();
}

}  // namespace

std::string violation_message(const Violation& v) {
  std::string what;
  if (v.rule == "max_document_bytes") {
    what = fmt::format("document is {} bytes, bound {}", v.measured, v.bound);
  } else if (v.rule == "max_array_length" || v.rule == "array_length") {
    what =
        fmt::format("array '{}' reaches {} elements, bound {}", v.field_path, v.measured, v.bound);
  } else if (v.rule == "tracked_array_length") {
    what = fmt::format("array '{}' of this document would reach {} elements, bound {}",
                       v.field_path, v.measured, v.bound);
  } else if (v.rule == "require_push_slice") {
    what = fmt::format("'{}' grows without $slice ({} elements added); cap it with $slice",
                       v.field_path, v.measured);
  } else if (v.rule == "max_nesting_depth") {
    what = fmt::format("document nests {} levels, bound {}", v.measured, v.bound);
  } else if (v.rule == "max_lookup_ratio") {
    what = fmt::format("{:.0f}% of recent reads on this collection use $lookup, bound {:.0f}%",
                       v.measured * 100, v.bound * 100);
  } else {
    what = fmt::format("measured {}, bound {}", v.measured, v.bound);
  }
  return fmt::format("docguard: design rule {} (match \"{}\") violated: {}", v.rule, v.rule_match,
                     what);
}

RequestPlan plan_request(const codec::OpMsg& request, const codec::CommandView& cmd,
                         const rules::Verdict& verdict, int32_t reply_request_id) {
  RequestPlan plan;
  if (!verdict.any_block()) return plan;

  const bool splittable =
      (cmd.kind == CommandKind::kInsert || cmd.kind == CommandKind::kUpdate ||
       cmd.kind == CommandKind::kDelete || cmd.kind == CommandKind::kBulkWrite) &&
      cmd.payload_source != codec::PayloadSource::kNone;
  if (verdict.block_command || !splittable) {
    if (cmd.more_to_come) {
      plan.kind = RequestPlan::Kind::kDrop;
    } else {
      plan.kind = RequestPlan::Kind::kReplyNow;
      plan.message = command_error(request, verdict, reply_request_id);
    }
    return plan;
  }

  // Which statements go upstream, and which of ours the client hears about.
  const auto& blocked = verdict.blocked_statements;  // sorted, unique
  const auto n = static_cast<int32_t>(cmd.statements.size());
  std::vector<int32_t> keep;
  std::vector<int32_t> reported;
  if (cmd.ordered) {
    const int32_t first = blocked.empty() ? n : std::min(blocked.front(), n);
    for (int32_t i = 0; i < first; ++i) keep.push_back(i);
    if (first < n) reported.push_back(first);  // the server stops at its first error
  } else {
    size_t b = 0;
    for (int32_t i = 0; i < n; ++i) {
      while (b < blocked.size() && blocked[b] < i) ++b;
      if (b < blocked.size() && blocked[b] == i) {
        reported.push_back(i);
      } else {
        keep.push_back(i);
      }
    }
  }
  if (reported.empty()) return plan;  // blocked indices outside the batch: nothing to do

  if (cmd.more_to_come) {
    if (keep.empty()) {
      plan.kind = RequestPlan::Kind::kDrop;
    } else {
      plan.kind = RequestPlan::Kind::kForwardRewritten;
      plan.message = rewrite_request(request, cmd, keep);
    }
    return plan;
  }

  auto merge = std::make_shared<PendingMerge>();
  merge->kind = cmd.kind;
  merge->ordered = cmd.ordered;
  merge->forwarded = keep;
  for (int32_t index : reported) {
    const Violation* v = blocking_violation(verdict, index);
    Violation fallback;
    fallback.rule = "blocked";
    const Violation& reason = v != nullptr ? *v : fallback;
    merge->errors.push_back({index, cmd.kind == CommandKind::kBulkWrite
                                        ? bulk_write_error(index, reason)
                                        : write_error(index, reason)});
  }

  if (keep.empty() && cmd.kind == CommandKind::kBulkWrite) {
    // What the server answers when every op failed: the results in an exhausted cursor.
    OwnedBson body;
    BSON_APPEND_DOUBLE(body.get(), "ok", 1.0);
    bson_t cursor;
    BSON_APPEND_DOCUMENT_BEGIN(body.get(), "cursor", &cursor);
    BSON_APPEND_INT64(&cursor, "id", 0);
    std::vector<std::vector<uint8_t>> results;
    for (auto& e : merge->errors) results.push_back(std::move(e.document));
    append_documents(&cursor, "firstBatch", results);
    BSON_APPEND_UTF8(&cursor, "ns", "admin.$cmd.bulkWrite");
    bson_append_document_end(body.get(), &cursor);
    BSON_APPEND_INT32(body.get(), "nErrors", static_cast<int32_t>(results.size()));
    for (const char* counter : {"nInserted", "nMatched", "nModified", "nUpserted", "nDeleted"}) {
      BSON_APPEND_INT32(body.get(), counter, 0);
    }
    plan.kind = RequestPlan::Kind::kReplyNow;
    plan.message = codec::OpMsgBuilder(reply_request_id, request.header.request_id)
                       .body(body.bytes())
                       .finish();
    return plan;
  }

  if (keep.empty()) {
    OwnedBson body;
    BSON_APPEND_DOUBLE(body.get(), "ok", 1.0);
    BSON_APPEND_INT32(body.get(), "n", 0);
    if (cmd.kind == CommandKind::kUpdate) BSON_APPEND_INT32(body.get(), "nModified", 0);
    std::vector<std::vector<uint8_t>> errors;
    for (auto& e : merge->errors) errors.push_back(std::move(e.document));
    append_write_errors(body.get(), errors);
    plan.kind = RequestPlan::Kind::kReplyNow;
    plan.message = codec::OpMsgBuilder(reply_request_id, request.header.request_id)
                       .body(body.bytes())
                       .finish();
    return plan;
  }

  plan.kind = RequestPlan::Kind::kForwardRewritten;
  plan.message = rewrite_request(request, cmd, keep);
  plan.merge = std::move(merge);
  return plan;
}

namespace {

int32_t client_index(const PendingMerge& merge, int64_t forwarded_index) {
  if (forwarded_index < 0 || static_cast<size_t>(forwarded_index) >= merge.forwarded.size()) {
    return static_cast<int32_t>(forwarded_index);
  }
  return merge.forwarded[static_cast<size_t>(forwarded_index)];
}

// Copies a document, replacing its `index` field with the client's index.
std::vector<uint8_t> with_client_index(const PendingMerge& merge, const bson_iter_t& entry,
                                       int32_t* index_out) {
  OwnedBson out;
  bson_iter_t it;
  *index_out = -1;
  if (BSON_ITER_HOLDS_DOCUMENT(&entry) && bson_iter_recurse(&entry, &it)) {
    while (bson_iter_next(&it)) {
      if (std::string_view(bson_iter_key(&it)) == "index" && BSON_ITER_HOLDS_NUMBER(&it)) {
        *index_out = client_index(merge, bson_iter_as_int64(&it));
        BSON_APPEND_INT32(out.get(), "index", *index_out);
      } else {
        bson_append_iter(out.get(), nullptr, 0, &it);
      }
    }
  }
  auto b = out.bytes();
  return {b.begin(), b.end()};
}

}  // namespace

namespace {

// bulkWrite: remaps `idx` in cursor.firstBatch, adds docguard's per-op errors in idx order
// (unless an ordered batch already stopped at an upstream error) and counts them in nErrors.
std::vector<uint8_t> merge_bulk_write_reply(const PendingMerge& merge,
                                            const codec::OpMsg& upstream_reply,
                                            int32_t response_to) {
  const codec::BsonView& in = upstream_reply.body;
  bson_iter_t it;
  if (!bson_iter_init_from_data(&it, in.data, in.size)) return {};

  struct Result {
    int32_t idx;
    std::vector<uint8_t> document;
  };
  std::vector<Result> results;
  bool upstream_error = false;
  bson_iter_t cursor_it;
  bool have_cursor = false;
  {
    bson_iter_t c = it;
    bson_iter_t batch;
    if (bson_iter_find(&c, "cursor") && BSON_ITER_HOLDS_DOCUMENT(&c)) {
      cursor_it = c;
      have_cursor = true;
      if (bson_iter_recurse(&c, &batch) && bson_iter_find(&batch, "firstBatch") &&
          BSON_ITER_HOLDS_ARRAY(&batch)) {
        bson_iter_t entry;
        if (bson_iter_recurse(&batch, &entry)) {
          while (bson_iter_next(&entry)) {
            if (!BSON_ITER_HOLDS_DOCUMENT(&entry)) continue;
            OwnedBson out;
            int32_t idx = -1;
            bson_iter_t f;
            if (bson_iter_recurse(&entry, &f)) {
              while (bson_iter_next(&f)) {
                const std::string_view key = bson_iter_key(&f);
                if (key == "idx" && BSON_ITER_HOLDS_NUMBER(&f)) {
                  idx = client_index(merge, bson_iter_as_int64(&f));
                  BSON_APPEND_INT32(out.get(), "idx", idx);
                } else {
                  if (key == "ok" && bson_iter_as_double(&f) != 1.0) upstream_error = true;
                  bson_append_iter(out.get(), nullptr, 0, &f);
                }
              }
            }
            auto b = out.bytes();
            results.push_back({idx, {b.begin(), b.end()}});
          }
        }
      }
    }
  }
  if (!have_cursor) return {};
  int32_t added = 0;
  if (!(merge.ordered && upstream_error)) {
    for (const auto& e : merge.errors) {
      results.push_back({e.index, e.document});
      ++added;
    }
  }
  std::stable_sort(results.begin(), results.end(),
                   [](const Result& a, const Result& b) { return a.idx < b.idx; });
  std::vector<std::vector<uint8_t>> docs;
  for (auto& r : results) docs.push_back(std::move(r.document));

  OwnedBson body;
  while (bson_iter_next(&it)) {
    const std::string_view key = bson_iter_key(&it);
    if (key == "cursor") {
      bson_t cursor;
      BSON_APPEND_DOCUMENT_BEGIN(body.get(), "cursor", &cursor);
      bson_iter_t c;
      if (bson_iter_recurse(&cursor_it, &c)) {
        while (bson_iter_next(&c)) {
          if (std::string_view(bson_iter_key(&c)) == "firstBatch") {
            append_documents(&cursor, "firstBatch", docs);
          } else {
            bson_append_iter(&cursor, nullptr, 0, &c);
          }
        }
      }
      bson_append_document_end(body.get(), &cursor);
    } else if (key == "nErrors" && BSON_ITER_HOLDS_NUMBER(&it)) {
      BSON_APPEND_INT32(body.get(), "nErrors",
                        static_cast<int32_t>(bson_iter_as_int64(&it)) + added);
    } else {
      bson_append_iter(body.get(), nullptr, 0, &it);
    }
  }
  codec::OpMsgBuilder builder(upstream_reply.header.request_id, response_to,
                              upstream_reply.flags & ~codec::op_msg_flags::kChecksumPresent);
  builder.body(body.bytes());
  return builder.finish();
}

}  // namespace

std::vector<uint8_t> merge_reply(const PendingMerge& merge, const codec::OpMsg& upstream_reply,
                                 int32_t response_to) {
  const codec::BsonView& in = upstream_reply.body;
  bson_iter_t it;
  if (in.empty() || !bson_iter_init_from_data(&it, in.data, in.size)) return {};
  {
    bson_iter_t ok = it;
    if (!bson_iter_find(&ok, "ok") || bson_iter_as_double(&ok) != 1.0) return {};
  }
  if (merge.kind == CommandKind::kBulkWrite) {
    return merge_bulk_write_reply(merge, upstream_reply, response_to);
  }

  // Upstream writeErrors, remapped; ours are added unless an ordered batch already stopped.
  struct Entry {
    int32_t index;
    std::vector<uint8_t> document;
  };
  std::vector<Entry> errors;
  bool upstream_errors = false;
  {
    bson_iter_t we = it;
    bson_iter_t child;
    if (bson_iter_find(&we, "writeErrors") && BSON_ITER_HOLDS_ARRAY(&we) &&
        bson_iter_recurse(&we, &child)) {
      while (bson_iter_next(&child)) {
        int32_t index = -1;
        auto doc = with_client_index(merge, child, &index);
        errors.push_back({index, std::move(doc)});
        upstream_errors = true;
      }
    }
  }
  if (!(merge.ordered && upstream_errors)) {
    for (const auto& e : merge.errors) errors.push_back({e.index, e.document});
  }
  std::stable_sort(errors.begin(), errors.end(),
                   [](const Entry& a, const Entry& b) { return a.index < b.index; });
  std::vector<std::vector<uint8_t>> error_docs;
  error_docs.reserve(errors.size());
  for (auto& e : errors) error_docs.push_back(std::move(e.document));

  OwnedBson body;
  bool wrote_errors = false;
  while (bson_iter_next(&it)) {
    const std::string_view key = bson_iter_key(&it);
    if (key == "writeErrors") {
      if (!wrote_errors && !error_docs.empty()) append_write_errors(body.get(), error_docs);
      wrote_errors = true;
    } else if (key == "upserted" && BSON_ITER_HOLDS_ARRAY(&it)) {
      bson_t array;
      bson_append_array_begin(body.get(), "upserted", -1, &array);
      bson_iter_t child;
      if (bson_iter_recurse(&it, &child)) {
        while (bson_iter_next(&child)) {
          int32_t index = -1;
          auto doc = with_client_index(merge, child, &index);
          bson_t d;
          if (bson_init_static(&d, doc.data(), doc.size())) {
            bson_append_document(&array, bson_iter_key(&child), -1, &d);
          }
        }
      }
      bson_append_array_end(body.get(), &array);
    } else if ((key.starts_with("$") || key == "operationTime" || key == "opTime" ||
                key == "electionId") &&
               !wrote_errors && !error_docs.empty()) {
      // Drivers don't care about field order, but keep writeErrors beside n / nModified.
      append_write_errors(body.get(), error_docs);
      wrote_errors = true;
      bson_append_iter(body.get(), nullptr, 0, &it);
    } else {
      bson_append_iter(body.get(), nullptr, 0, &it);
    }
  }
  if (!wrote_errors && !error_docs.empty()) append_write_errors(body.get(), error_docs);

  codec::OpMsgBuilder builder(upstream_reply.header.request_id, response_to,
                              upstream_reply.flags & ~codec::op_msg_flags::kChecksumPresent);
  builder.body(body.bytes());
  for (const auto& seq : upstream_reply.sequences) builder.sequence(seq.identifier, seq.documents);
  return builder.finish();
}

}  // namespace docguard::conversation
