// What the docguard process does beside serving connections: libmongoc's log lines in docguard's
// log, the upstream topology's metrics and log line, rules reloaded on SIGHUP, and memory handed
// back while idle. Each runs on the main io thread.
#pragma once

#include <boost/asio/awaitable.hpp>
#include <cstdint>
#include <memory>

#include "docguard/cluster/topology.h"
#include "docguard/proxy/runtime.h"

namespace docguard::proxy {

// libmongoc's log (the topology monitor's and introspection's) routed to spdlog: errors and
// warnings as such, informational lines at debug, failed heartbeats at trace; URIs redacted.
void route_libmongoc_log();

// Reports each new topology once: the topology-type gauge, primary changes, and one log line
// when the writable servers or the type change (not one per connection).
class TopologyReporter {
 public:
  explicit TopologyReporter(ProxyRuntime& runtime) : runtime_(runtime) {}
  // False for a snapshot older than the last one seen (notices can arrive out of order).
  bool report(const std::shared_ptr<const cluster::Topology>& topology);

 private:
  ProxyRuntime& runtime_;
  std::shared_ptr<const cluster::Topology> last_;
  uint64_t primary_changes_seen_ = 0;
};

// SIGHUP: the rules of the --config file again; the previous ones stay when the file is bad.
void reload_rules(ProxyRuntime& runtime);

// Every 5 s: the io thread's spare large receive block goes when unused; with `trim_heap`, free
// heap memory goes back to the system too (one thread does that for the process).
boost::asio::awaitable<void> release_spare_memory(bool trim_heap);

}  // namespace docguard::proxy
