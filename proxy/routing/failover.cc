#include "docguard/proxy/failover.h"

#include <algorithm>

namespace docguard::proxy {

bool must_leave_server(const cluster::Topology& topology, std::string_view server,
                       uint64_t pinned_generation) {
  // Only a cluster has somewhere else to go: in front of a single server, connections stay
  // (a missed heartbeat must not close every client connection).
  const auto type = topology.type;
  if (type != cluster::TopologyType::kReplicaSetNoPrimary &&
      type != cluster::TopologyType::kReplicaSetWithPrimary &&
      type != cluster::TopologyType::kSharded) {
    return false;
  }
  return topology.primary_generation != pinned_generation && !topology.is_writable(server);
}

std::string pick_server(const cluster::Topology& topology, uint64_t spread,
                        const std::vector<std::string>& excluded) {
  const auto& c = topology.candidates;
  for (size_t i = 0; i < c.size(); ++i) {
    const auto& server = c[(spread + i) % c.size()];
    if (std::find(excluded.begin(), excluded.end(), server) == excluded.end()) return server;
  }
  return {};
}

bool may_dial_seed(const cluster::Topology& topology, size_t seed_count, bool is_srv,
                   bool has_replica_set) {
  if (seed_count != 1 || is_srv || has_replica_set) return false;
  return topology.type == cluster::TopologyType::kUnknown ||
         topology.type == cluster::TopologyType::kSingle;
}

}  // namespace docguard::proxy
