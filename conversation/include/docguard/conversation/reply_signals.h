// What an upstream reply says about the role of the server that sent it: the proxy's failover
// acts on these (closing the pinned connection so the driver's retry reaches the new primary),
// while the reply itself still goes to the driver, which reaches the same conclusion.
#pragma once

#include <optional>

#include "docguard/codec/message.h"
#include "docguard/codec/server_errors.h"

namespace docguard::conversation {

struct ReplySignals {
  // The first state-change code (codec::is_state_change) where drivers look for one: the
  // top-level `code`, then `writeConcernError.code`, then each `writeErrors[].code`.
  std::optional<codec::ServerError> state_change;
  // A hello/isMaster reply with isWritablePrimary/ismaster false: a demoted primary answering
  // a heartbeat.
  bool hello_not_writable = false;
  // For the workload ledger, read only when asked (for_workload): the documents the reply names
  // (cursor.firstBatch's length, else `n`), and whether it failed (ok: 0, or writeErrors).
  uint64_t documents = 0;
  bool failed = false;
};

// Reads an uncompressed OP_MSG or OP_REPLY (header included). Never throws: a reply that cannot
// be read signals nothing (the conversation reports malformed replies where it must read them).
// `for_workload`: also documents and failed (a reply the workload ledger waits for).
ReplySignals read_reply_signals(codec::Bytes plain, bool for_workload = false);

}  // namespace docguard::conversation
