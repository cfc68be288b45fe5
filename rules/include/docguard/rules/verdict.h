// What one pass of the checks over a command decided (Verdict), each broken rule in it
// (Violation) and who sent the command (RequestContext): the engine's answer, which the
// conversation layer turns into forwarded, rewritten or answered requests.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "docguard/base/inline_vector.h"
#include "docguard/rules/collection_stats.h"
#include "docguard/rules/query_shape.h"
#include "docguard/rules/rule_hits.h"
#include "docguard/rules/rule_set.h"
#include "docguard/schema/json_schema.h"

namespace docguard::rules {

struct SketchEntry;
struct WorkloadTable;

// The shapes of one command's operations in the workload ledger, for its reply: each distinct
// shape with how many of the command's operations had it, and where it was counted (the entry
// holds `key` until a new shape replaces it; the reply checks).
struct WorkloadMark {
  uint64_t key = 0;
  SketchEntry* entry = nullptr;
  uint32_t ops = 0;
  uint32_t app = 0;  // the app's line in entry->stats.apps
};
struct WorkloadMarks {
  base::InlineVector<WorkloadMark, 2> marks;
  WorkloadTable* table = nullptr;  // the table of the thread that identified them
  uint32_t ops = 0;                // all the command's operations, those past kMaxMarks included
  // Distinct shapes remembered per command; the operations of further ones are counted but
  // their time goes to the overflow.
  static constexpr size_t kMaxMarks = 16;
  bool empty() const { return ops == 0; }
};

struct Violation {
  // The rule broken. Its text, what logs, metrics and errInfo call it, is rule_name(kind): a
  // table lookup, so no violation carries its own copy.
  RuleKind kind = RuleKind::kMaxDocumentBytes;
  std::string rule_match;          // the deciding rule's `match` glob
  int rule_line = 0;               // and its line in the config file (0: the built-in default)
  uint32_t rule_index = 0;         // and its index in its rule set
  std::shared_ptr<RuleHits> hits;  // and its hit counters (the engine counts the violation)
  std::string field_path;          // "" when not about a field
  double measured = 0;
  double bound = 0;
  Action action = Action::kWarn;
  int32_t statement_index = -1;     // index in the client's batch, -1 = whole command
  std::vector<uint8_t> failing_id;  // BSON bytes of {_id: <value>} when known, else empty

  // What only one kind carries.
  // json_schema: the server's errInfo.details ({operatorName: "$jsonSchema", ...}) as BSON,
  // and how much of them fit the server's size bound (empty when too large).
  struct SchemaDetails {
    std::vector<uint8_t> details;
    schema::DetailsSize size = schema::DetailsSize::kFull;
  };
  // require_index: the deciding rule's id (its match without one), the shape text refused, the
  // index that would serve it (ESR order) and which of the server's messages it is.
  struct UnindexedQuery {
    std::string rule_id;
    std::string shape;
    IndexKeys suggested_index;
    ScanReason scan_reason = ScanReason::kNoIndex;
  };
  std::variant<std::monostate, SchemaDetails, UnindexedQuery> specifics;

  // The kind's own part; an empty one for a violation of another kind (or one whose judge had
  // none to give), so readers need not ask which it holds.
  const SchemaDetails& schema_details() const;
  const UnindexedQuery& unindexed_query() const;
};

struct RequestContext {
  std::string_view app_name;
  std::string_view peer;
  std::string_view user = {};  // "name@db" once the connection authenticated, else empty
  // The connection's remembered scope; without one (tools, tests) it is found for each command.
  ConnectionScopeId* scope = nullptr;
  // When the request arrived (steady clock), if the caller read it: the pass's "now", so the
  // checks need no clock read of their own. The epoch (the default): read the clock.
  std::chrono::steady_clock::time_point received = {};
};

struct Verdict {
  std::vector<Violation> violations;
  // The whole command is refused (findAndModify, bulkWrite, or a read with an explicit
  // $lookup block).
  bool block_command = false;
  std::vector<int32_t> blocked_statements;  // sorted unique indices of statements to block
  // A guardrail rule's max_time_ms for a command that carries no maxTimeMS: the conversation
  // adds it to the forwarded command (0: nothing to add).
  int64_t max_time_ms = 0;
  // The shapes of the command's operations in the workload ledger: the reply's time is
  // recorded against them (WorkloadLedger::record).
  WorkloadMarks workload;
  bool any_block() const { return block_command || !blocked_statements.empty(); }
};

}  // namespace docguard::rules
