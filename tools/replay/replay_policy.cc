// What a replay sends and what it skips (replay_policy.h).
#include "replay_policy.h"

#include <algorithm>
#include <array>

#include "docguard/codec/bson_elements.h"
#include "docguard/codec/command_view.h"
#include "docguard/codec/op_msg.h"
#include "docguard/codec/recording_redaction.h"
#include "docguard/codec/request_identity.h"
#include "docguard/tools/replay_request.h"

namespace docguard::tools {

namespace {

template <size_t N>
bool among(const std::array<std::string_view, N>& names, std::string_view name) {
  return std::find(names.begin(), names.end(), name) != names.end();
}

// Reads and cursors: replayed under --read-only too.
constexpr std::array<std::string_view, 13> kReads = {
    "find",         "count",       "distinct",        "aggregate",
    "getMore",      "killCursors", "listCollections", "listIndexes",
    "dbStats",      "collStats",   "explain",         "ping",
    "listDatabases"};
// Writes and the catalog commands a workload needs: not under --read-only.
constexpr std::array<std::string_view, 10> kWrites = {
    "insert", "update",        "delete", "findAndModify", "findandmodify",
    "create", "createIndexes", "drop",   "dropIndexes",   "bulkWrite"};
// A transaction's end: replayed with its transaction (a read-only replay sends no write in it,
// and the end then commits or aborts nothing).
constexpr std::array<std::string_view, 2> kTransactionEnds = {"commitTransaction",
                                                              "abortTransaction"};
// Answers that vary between runs: statistics and plans.
constexpr std::array<std::string_view, 3> kVaryingCommands = {"dbStats", "collStats", "explain"};
// What in a command makes its result unrepeatable, and why.
constexpr std::array<std::pair<std::string_view, std::string_view>, 9> kUnrepeatable = {{
    {"$sample", "$sample picks documents at random"},
    {"$rand", "$rand draws a new number each run"},
    {"$$NOW", "$$NOW is the time of the run"},
    {"$$CLUSTER_TIME", "$$CLUSTER_TIME is the time of the run"},
    {"$currentDate", "$currentDate writes the time of the run"},
    {"$changeStream", "a change stream's events and tokens are the cluster's own"},
    {"$currentOp", "$currentOp lists the operations running now"},
    {"$indexStats", "$indexStats counts the cluster's own use"},
    {"$collStats", "$collStats measures the cluster's own storage"},
}};

bool holds(codec::Bytes bytes, std::string_view text) {
  const std::string_view all(reinterpret_cast<const char*>(bytes.data()), bytes.size());
  return all.find(text) != std::string_view::npos;
}

}  // namespace

const char* skip_reason_name(SkipReason reason) {
  switch (reason) {
    case SkipReason::kNone:
      return "none";
    case SkipReason::kHandshake:
      return "handshake";
    case SkipReason::kMarker:
      return "unrecorded_marker";
    case SkipReason::kRedacted:
      return "redacted";
    case SkipReason::kNotAllowed:
      return "not_allowed";
    case SkipReason::kWritesOut:
      return "writes_out";
    case SkipReason::kReadOnly:
      return "read_only";
    case SkipReason::kLegacy:
      return "legacy";
    case SkipReason::kLegacyCommand:
      return "legacy_op_query_command";
    case SkipReason::kInvalid:
      return "invalid_request";
    case SkipReason::kMalformed:
      return "malformed";
    case SkipReason::kRefusedWhenRecorded:
      return "refused_when_recorded";
    case SkipReason::kAnsweredByDocguard:
      return "answered_by_docguard";
    case SkipReason::kSecretNamespace:
      return "secret_namespace";
  }
  return "unknown";
}

RequestClass classify_request(codec::Bytes message, bool answered_by_docguard,
                              const ReplayPolicy& policy, int32_t recorded_refusal) {
  RequestClass out;
  const codec::RequestIdentity id = codec::identify_request(message);
  out.name = std::string(id.command);
  switch (id.form) {
    case codec::RequestForm::kMalformed:
      out.skip = SkipReason::kMalformed;
      return out;
    case codec::RequestForm::kOther:
    case codec::RequestForm::kLegacyQuery:
      out.skip = SkipReason::kLegacy;
      return out;
    case codec::RequestForm::kLegacyCommand:
      // The handshake is libmongoc's own; every other legacy command the server refuses (352),
      // and a file could hold one that a replay would turn into an OP_MSG the target runs.
      out.skip =
          is_handshake_command(out.name) ? SkipReason::kHandshake : SkipReason::kLegacyCommand;
      return out;
    case codec::RequestForm::kMsg:
      break;
  }
  if (out.name == codec::kUnrecordedKey) {
    out.skip = SkipReason::kMarker;
    return out;
  }
  if (!id.accepted()) {
    out.skip = SkipReason::kInvalid;
    return out;
  }
  out.more_to_come = (static_cast<uint32_t>(codec::load_le32(message.data() + codec::kHeaderSize)) &
                      codec::op_msg_flags::kMoreToCome) != 0;
  const codec::BsonView command = id.command_document;
  if (is_handshake_command(out.name)) {
    out.skip = SkipReason::kHandshake;
    return out;
  }
  const bool read = among(kReads, out.name);
  const bool write = among(kWrites, out.name);
  const bool transaction_end = among(kTransactionEnds, out.name);
  if (!read && !write && !transaction_end) {
    out.skip = SkipReason::kNotAllowed;
    return out;
  }
  // The marker stands where a password or a secret document was: sending it would write it.
  if (holds(message, codec::kRedactedMarker)) {
    out.skip = SkipReason::kRedacted;
    return out;
  }
  // A command on a secret namespace (the users and roles collections, mongorestore's staging
  // ones, the key vault), here or inside a stage: a recording holds none unredacted, and a file
  // written otherwise must not make a replay write users or keys.
  if (codec::redact_request(message, codec::kDefaultMaxMessageBytes).sensitive) {
    out.skip = SkipReason::kSecretNamespace;
    return out;
  }
  // An aggregation's 2, 9, 14 or 72 may have come after a $merge or $out wrote: it is replayed
  // like any request whose recorded reply failed (codec::may_follow_work).
  if (recorded_refusal != 0 && !codec::may_follow_work(out.name, recorded_refusal)) {
    out.skip = SkipReason::kRefusedWhenRecorded;
    return out;
  }
  if (answered_by_docguard && !policy.as_sent_by_client) {
    out.skip = SkipReason::kAnsweredByDocguard;
    return out;
  }
  const codec::Bytes body = command.bytes();
  // An explain of such a pipeline too: whether the server runs its stages depends on verbosity.
  const bool writes_out = (out.name == "aggregate" || out.name == "explain") &&
                          (holds(body, "$out") || holds(body, "$merge"));
  out.is_write = write || writes_out;
  if (writes_out && !policy.allow_writes_out) {
    out.skip = SkipReason::kWritesOut;
    return out;
  }
  if (out.is_write && policy.read_only) {
    out.skip = SkipReason::kReadOnly;
    return out;
  }
  if (among(kVaryingCommands, out.name)) {
    out.not_comparable = out.name + " answers with the cluster's own statistics or plans";
  }
  for (const auto& [text, why] : kUnrepeatable) {
    if (out.not_comparable.empty() && holds(body, text)) out.not_comparable = std::string(why);
  }
  return out;
}

int32_t recorded_refusal_code(codec::Bytes reply) {
  const codec::BsonView doc = reply_document(reply);
  if (doc.empty()) return 0;
  codec::BsonElements ok(doc);
  if (!ok.find("ok") || !ok.holds_number() || ok.as_double() != 0) return 0;
  codec::BsonElements code(doc);
  if (!code.find("code") || !code.holds_number()) return 0;
  const auto value = static_cast<int32_t>(code.as_int64());
  constexpr int32_t kUnauthorized = 13;
  return value == kUnauthorized || codec::is_form_refusal_code(value) ? value : 0;
}

}  // namespace docguard::tools
