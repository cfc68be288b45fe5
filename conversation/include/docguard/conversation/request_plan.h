// Turns a rules::Verdict into what happens to a request, keeping MongoDB's batch semantics:
//   * ordered batch: statements before the first blocked one are forwarded, none after it;
//   * unordered batch: every statement that is not blocked is forwarded;
//   * nothing left to forward: docguard answers itself, as server-side validation would
//     (writeErrors with code 121 DocumentValidationFailure);
//   * moreToCome (w:0): the same selection is forwarded, and nothing is answered;
//   * 8.0 bulkWrite: the same per-op semantics; its per-op results come back in a cursor
//     (`firstBatch` entries {ok, idx, ...}), whose `idx` values and `nErrors` are merged the
//     same way. Results the server defers to later getMore batches (only when the results
//     exceed one batch) are relayed as the server sent them;
//   * findAndModify and whole-command blocks: a command error with code 121.
// A rewritten request keeps the client's requestID, so the upstream reply comes back with the
// client's responseTo; merge_reply() (reply_merge.h) then restores the client's statement indices.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "docguard/codec/command_view.h"
#include "docguard/codec/op_msg.h"
#include "docguard/rules/engine.h"

namespace docguard::conversation {

// What a refusal tells the client about the rule behind it. Always: the rule's kind, the field
// path, the measured value and the bound (what the server's own validation details would say).
// Only with reveal_rule_source (errors.reveal_rule_source): the operator's configuration, the
// rule's `match` glob, its line in the config file and a guardrail rule's id.
struct RefusalOptions {
  bool reveal_rule_source = false;
};

// What merge_reply needs to know about a rewritten request.
struct PendingMerge {
  codec::CommandKind kind = codec::CommandKind::kInsert;
  bool ordered = true;
  // forwarded[i] = the client's index of the i-th forwarded statement.
  std::vector<int32_t> forwarded;
  // docguard's own writeErrors entries (BSON documents, index = the client's), index order.
  struct Error {
    int32_t index = 0;
    std::vector<uint8_t> document;
  };
  std::vector<Error> errors;
};

struct RequestPlan {
  enum class Kind {
    kForwardOriginal,   // nothing blocked: forward the client's bytes
    kForwardRewritten,  // forward `message`; merge the reply with `merge` (unless moreToCome)
    kReplyNow,          // send `message` to the client, forward nothing
    kDrop,              // moreToCome request with nothing left to forward: forward nothing
  };
  Kind kind = Kind::kForwardOriginal;
  std::vector<uint8_t> message;  // rewritten request or synthetic reply
  std::shared_ptr<PendingMerge> merge;
};

// `reply_request_id` is the requestID of a synthetic reply (kReplyNow).
RequestPlan plan_request(const codec::OpMsg& request, const codec::CommandView& cmd,
                         const rules::Verdict& verdict, int32_t reply_request_id,
                         RefusalOptions options = {});

// "docguard: ..." message for a violation (numbers and names only, never document values).
std::string violation_message(const rules::Violation& v, RefusalOptions options = {});

}  // namespace docguard::conversation
