// What a command means: its name, namespace and the documents and statements it carries,
// whether they came in the body or in kind-1 sequences. Views into the message buffer.
#pragma once

#include <string_view>
#include <utility>
#include <vector>

#include "docguard/codec/bson_view.h"
#include "docguard/codec/op_msg.h"

namespace docguard::codec {

enum class CommandKind {
  kInsert,
  kUpdate,
  kDelete,
  kFindAndModify,
  kFind,
  kAggregate,
  kCount,
  kDistinct,
  kGetMore,
  kBulkWrite,  // 8.0 bulkWrite on admin
  kCreate,     // may define a view (viewOn + pipeline)
  kExplain,    // the explained command is described by `explained`
  kHello,      // hello / isMaster / ismaster
  kOther,
};

enum class PayloadSource { kNone, kBody, kSequence };

// The key of a document that is exactly one field equal to a fixed-size scalar ({_id:
// <ObjectId>}, {n: 5}), read from its bytes without a walk; empty for any other document. The
// commonest filter of all: the guardrail passes {_id: ...} on it before it looks for the
// namespace's indexes, and the workload ledger hashes it from it.
std::string_view single_scalar_equality(const BsonView& doc);

struct CommandView {
  std::string_view name;  // first key of the body, as sent
  codec::BsonView body;   // the whole command document
  CommandKind kind = CommandKind::kOther;
  std::string_view database;    // $db
  std::string_view collection;  // value of the first key when it is a string
  bool ordered = true;          // `ordered` field, default true
  // `bypassDocumentValidation`: the server then skips its validator (insert, update,
  // findAndModify, bulkWrite, ...); docguard's json_schema rules do the same unless told not to.
  bool bypass_document_validation = false;
  bool more_to_come = false;  // unacknowledged request: the server sends no reply

  // The message's kind-3 trace context (empty without one), and its W3C `otel.traceparent`
  // when that is a string: for log lines and tracing, never judged. A view of client bytes of
  // any length: bound it before logging it.
  codec::BsonView trace_context;
  std::string_view traceparent;

  // The write payload (insert `documents`, update `updates`, delete `deletes`,
  // bulkWrite `ops`) and where it came from. payload_field names the array / sequence.
  codec::BsonViews statements;
  PayloadSource payload_source = PayloadSource::kNone;
  std::string_view payload_field;
  // The outline parse() took of the first statement from a sequence (see OpMsg); a reader uses
  // it only for the document it describes().
  codec::DocumentOutline first_statement;

  // bulkWrite: `nsInfo` entries ({ns: "db.coll", ...}), from the body or a sequence.
  codec::BsonViews ns_info;

  // findAndModify: `query`, `update` (document or pipeline array), flags.
  codec::BsonView query;
  // find and findAndModify: `sort`, and `projection` (findAndModify: `fields`).
  codec::BsonView sort;
  codec::BsonView projection;
  codec::BsonView update;
  bool update_is_pipeline = false;
  bool upsert = false;
  bool remove = false;

  // aggregate `pipeline`, or create's view `pipeline` (an array; may be empty).
  codec::BsonView pipeline;
  // The rest of what decides a read's plan: `hint` (a name, or a key pattern / {$natural: 1}),
  // `collation`, find's `tailable`; and whether the command carries `maxTimeMS`.
  std::string_view hint_name;
  codec::BsonView hint;
  codec::BsonView collation;
  bool tailable = false;
  // A hint of any kind, a tailable cursor or a {$natural: ...} sort: something beside the filter
  // decides the plan, so no fast path of the query guardrail may take the command.
  bool plan_forced = false;
  bool has_max_time = false;
  // explain: the inner command's name (e.g. "aggregate"); its pipeline goes to `pipeline`
  // and its collection to `collection`.
  std::string_view explained;

  // single_scalar_equality(query), worked out by the first reader that asks: the guardrail and
  // then the workload ledger ask it of the same command.
  std::string_view query_scalar_key() const {
    if (!query_scalar_key_known) {
      query_scalar_key_cache = single_scalar_equality(query);
      query_scalar_key_known = true;
    }
    return query_scalar_key_cache;
  }
  mutable std::string_view query_scalar_key_cache;
  mutable bool query_scalar_key_known = false;

  bool is_write() const {
    return kind == CommandKind::kInsert || kind == CommandKind::kUpdate ||
           kind == CommandKind::kDelete || kind == CommandKind::kFindAndModify ||
           kind == CommandKind::kBulkWrite;
  }
  bool is_read() const {
    return kind == CommandKind::kFind || kind == CommandKind::kAggregate ||
           kind == CommandKind::kCount || kind == CommandKind::kDistinct;
  }
};

// Describes an OP_MSG request. Never throws for unusual or malformed command shapes: the
// fields it cannot make sense of stay empty and the upstream server judges the command.
CommandView describe(const codec::OpMsg& msg);

CommandKind kind_of(std::string_view command_name);

// True for hello / isMaster / ismaster command documents.
bool is_hello_command(const BsonView& command);

// "db.collection" into its database and collection at the first dot (a collection's name may
// hold more dots); both empty when there is no dot.
inline std::pair<std::string_view, std::string_view> split_namespace(std::string_view ns) {
  const size_t dot = ns.find('.');
  if (dot == std::string_view::npos) return {};
  return {ns.substr(0, dot), ns.substr(dot + 1)};
}

}  // namespace docguard::codec
