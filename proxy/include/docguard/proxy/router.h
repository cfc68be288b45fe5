// Which upstream server each new client connection goes to, from libmongoc's view of the cluster
// (cluster::TopologyMonitor), plus what sessions learn first-hand: a server that refused a
// connection or answered "not primary" is avoided until the monitor has re-checked it.
#pragma once

#include <atomic>
#include <chrono>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "docguard/cluster/topology.h"
#include "docguard/cluster/topology_monitor.h"
#include "docguard/cluster/upstream_uri.h"

namespace docguard::proxy {

class Router {
 public:
  // `monitor` may be null (unit tests): then every selection finds nothing.
  Router(cluster::UpstreamUri uri, std::unique_ptr<cluster::TopologyMonitor> monitor,
         std::chrono::milliseconds suspect_for = std::chrono::milliseconds(2000));
  ~Router();

  const cluster::UpstreamUri& uri() const { return uri_; }
  cluster::TopologyMonitor* monitor() const { return monitor_.get(); }
  std::shared_ptr<const cluster::Topology> snapshot() const;

  struct Choice {
    std::string server;  // host:port; empty when no writable server is selectable now
    uint64_t generation = 0;
    bool seed_fallback = false;  // the URI's only seed, dialled while nothing is known
  };
  // Thread-safe; spreads successive connections across the candidates.
  Choice select();

  // A session found `server` dead or no longer primary: avoid it for new connections until the
  // writable set changes or `suspect_for` passes, and ask the monitor to re-check now.
  void suspect(const std::string& server);
  void request_check();
  // The upstream is a replica set or sharded cluster (somewhere else to go), not one server.
  bool in_cluster() const;

 private:
  std::vector<std::string> suspects(uint64_t generation);

  cluster::UpstreamUri uri_;
  std::unique_ptr<cluster::TopologyMonitor> monitor_;
  std::chrono::milliseconds suspect_for_;
  std::atomic<uint64_t> counter_{0};
  std::mutex mutex_;
  struct Suspect {
    std::chrono::steady_clock::time_point until;
    uint64_t generation = 0;
  };
  std::unordered_map<std::string, Suspect> suspects_;
};

}  // namespace docguard::proxy
