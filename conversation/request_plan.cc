// What to do with a request some of whose statements are refused: forward it, forward only the
// allowed statements, or answer at once.
#include "docguard/conversation/request_plan.h"

#include <bson/bson.h>

#include <algorithm>
#include <string>

#include "docguard/codec/bson_elements.h"
#include "error_documents.h"

namespace docguard::conversation {

using codec::CommandKind;
using codec::OwnedBson;
using rules::Violation;
using namespace detail;

namespace {

// The request with only the `keep` statements, in the same place (body array or kind-1
// sequence) they came from, and its trace context; no checksum.
std::vector<uint8_t> rewrite_request(const codec::OpMsg& request, const codec::CommandView& cmd,
                                     const std::vector<int32_t>& keep) {
  std::vector<codec::BsonView> kept;
  kept.reserve(keep.size());
  for (int32_t i : keep) kept.push_back(cmd.statements[static_cast<size_t>(i)]);

  codec::OpMsgBuilder builder(request.header.request_id, request.header.response_to,
                              request.flags & ~codec::op_msg_flags::kChecksumPresent);
  OwnedBson body;
  if (cmd.payload_source == codec::PayloadSource::kBody) {
    for (codec::BsonElements it(request.body); it.next();) {
      if (cmd.payload_field != it.key) {
        it.append_to(body.get(), it.key);
        continue;
      }
      // A key in BSON bytes ends with a NUL: its data() is a C string.
      codec::append_document_array(body.get(), it.key.data(), kept);
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
  builder.trace_context(request.trace_context);
  return builder.finish();
}

}  // namespace

RequestPlan plan_request(const codec::OpMsg& request, const codec::CommandView& cmd,
                         const rules::Verdict& verdict, int32_t reply_request_id,
                         RefusalOptions options) {
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
      plan.message = command_error(request, verdict, reply_request_id, options);
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
    const Violation* reason = blocking_violation(verdict, index);
    merge->errors.push_back({index, cmd.kind == CommandKind::kBulkWrite
                                        ? bulk_write_error(index, reason, options)
                                        : write_error(index, reason, options)});
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
    append_documents(body.get(), "writeErrors", errors);
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

}  // namespace docguard::conversation
