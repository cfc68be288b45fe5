// Routing decisions of a session in front of a cluster, kept free of sockets so they can be
// unit-tested: when a pinned session must leave its server, which server a new connection goes
// to, and whether a session may dial the URI's seed itself. Which replies mean the pinned
// server lost its role is the conversation's to read (conversation/reply_signals.h).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "docguard/cluster/topology.h"

namespace docguard::proxy {

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

}  // namespace docguard::proxy
