#include "docguard/proxy/router.h"

#include "docguard/proxy/failover.h"

namespace docguard::proxy {

Router::Router(cluster::UpstreamUri uri, std::unique_ptr<cluster::TopologyMonitor> monitor,
               std::chrono::milliseconds suspect_for)
    : uri_(std::move(uri)), monitor_(std::move(monitor)), suspect_for_(suspect_for) {}

Router::~Router() = default;

std::shared_ptr<const cluster::Topology> Router::snapshot() const {
  if (monitor_) return monitor_->snapshot();
  static const auto empty = std::make_shared<const cluster::Topology>();
  return empty;
}

std::vector<std::string> Router::suspects(uint64_t generation) {
  std::vector<std::string> out;
  const auto now = std::chrono::steady_clock::now();
  std::lock_guard lock(mutex_);
  for (auto it = suspects_.begin(); it != suspects_.end();) {
    // A new writable set means the monitor re-checked: what it says now wins.
    if (now >= it->second.until || it->second.generation != generation) {
      it = suspects_.erase(it);
    } else {
      out.push_back(it->first);
      ++it;
    }
  }
  return out;
}

Router::Choice Router::select() {
  const auto topology = snapshot();
  Choice choice;
  choice.generation = topology->primary_generation;
  const auto avoid = suspects(topology->primary_generation);
  choice.server = pick_server(*topology, counter_.fetch_add(1, std::memory_order_relaxed), avoid);
  if (choice.server.empty() && !topology->has_writable() &&
      may_dial_seed(*topology, uri_.seeds.size(), uri_.is_srv, !uri_.replica_set.empty())) {
    choice.server = uri_.seeds.front();
    choice.seed_fallback = true;
  }
  return choice;
}

void Router::suspect(const std::string& server) {
  const auto generation = snapshot()->primary_generation;
  // A single server has no alternative: avoiding it would only delay new connections.
  if (in_cluster() && !server.empty()) {
    std::lock_guard lock(mutex_);
    suspects_[server] = Suspect{std::chrono::steady_clock::now() + suspect_for_, generation};
  }
  request_check();
}

bool Router::in_cluster() const {
  const auto type = snapshot()->type;
  return type == cluster::TopologyType::kReplicaSetNoPrimary ||
         type == cluster::TopologyType::kReplicaSetWithPrimary ||
         type == cluster::TopologyType::kSharded;
}

void Router::request_check() {
  if (monitor_) monitor_->request_check();
}

}  // namespace docguard::proxy
