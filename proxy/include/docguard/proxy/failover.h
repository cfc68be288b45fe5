// Routing decisions of a session in front of a cluster, kept free of sockets so they can be
// unit-tested: which replies mean the pinned server lost its role, when a pinned session must
// leave its server, which server a new connection goes to, and the error a request gets when
// no writable server can be selected.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "docguard/cluster/topology.h"
#include "docguard/codec/message.h"

namespace docguard::proxy {

// NotWritablePrimary (10107), NotPrimaryNoSecondaryOk (13435), NotPrimaryOrSecondary (13436),
// PrimarySteppedDown (189), ShutdownInProgress (91), InterruptedDueToReplStateChange (11602):
// the codes after which a driver considers the server's role changed (SDAM "not writable
// primary" and "node is recovering" errors).
bool is_state_change_code(int32_t code);

// The first state-change code in an upstream reply: the top-level `code`, then
// `writeConcernError.code`, then each `writeErrors[].code`, as drivers check them. OP_MSG,
// OP_REPLY and OP_COMPRESSED replies; 0 when there is none or the reply cannot be read (the
// conversation reports malformed replies; this check never throws).
int32_t state_change_code(codec::Bytes reply, uint32_t max_message_bytes);

// What one upstream reply says about the pinned server's role.
struct ReplySignals {
  int32_t state_change_code = 0;    // as state_change_code()
  bool hello_not_writable = false;  // a hello/isMaster reply with isWritablePrimary/ismaster false
};
// One read of the reply for both signals (it runs on every reply).
ReplySignals read_reply_signals(codec::Bytes reply, uint32_t max_message_bytes);

// After a topology notice: must a session pinned to `server` since `pinned_generation` close
// once its reply in flight is sent? Yes when the writable set changed and no longer holds it,
// in a replica set or sharded cluster (never in front of a single server).
bool must_leave_server(const cluster::Topology& topology, std::string_view server,
                       uint64_t pinned_generation);

// The server for a new connection: round-robin over `candidates` from `spread`, skipping
// `excluded` (servers a session just found dead or demoted, until the monitor has re-checked
// them); empty when none is left.
std::string pick_server(const cluster::Topology& topology, uint64_t spread,
                        const std::vector<std::string>& excluded);

// Whether a session may dial the URI's only seed itself while the monitor knows no writable
// server: a single plain host (no replicaSet, not SRV) whose topology is not (yet) a replica set
// or sharded cluster. That keeps a plain mongodb://host:port upstream working as before docguard
// followed topologies: a dead upstream is reported at once, not after serverSelectionTimeoutMS.
bool may_dial_seed(const cluster::Topology& topology, size_t seed_count, bool is_srv,
                   bool has_replica_set);

// The reply to a request while no writable server could be selected within
// serverSelectionTimeoutMS: in the request's family (OP_REPLY for OP_QUERY, OP_MSG otherwise),
// code 133 FailedToSatisfyReadPreference, as mongos answers when a shard has no primary.
// Empty for a request that expects no reply (OP_MSG moreToCome).
std::vector<uint8_t> no_writable_server_reply(codec::Bytes request, int32_t reply_id,
                                              const std::string& errmsg);

}  // namespace docguard::proxy
