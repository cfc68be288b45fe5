// Follows the upstream topology with libmongoc's server discovery and monitoring (SDAM).
//
// A mongoc_client_pool_t is kept for monitoring only: its background threads send hello
// heartbeats to every server; docguard never runs an application command through it (its own Asio
// connections carry the traffic). Each topology-changed event becomes a new immutable Topology
// snapshot, published atomically and pushed to subscribers.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>

#include "docguard/cluster/expected.h"
#include "docguard/cluster/topology.h"
#include "docguard/cluster/upstream_uri.h"

namespace docguard::cluster {

struct MonitorOptions {
  // Sent as the hello `client.application.name` of the monitoring connections (server logs),
  // unless the URI has appName.
  std::string app_name = "docguard-monitor";
  // While no writable server is known, keep a server selection pending on the monitor's thread.
  // In pooled mode that makes libmongoc's monitors re-check every 500 ms (minHeartbeatFrequencyMS)
  // instead of every heartbeatFrequencyMS, as a driver does while an application waits; without
  // it a returning server is noticed only at the next regular heartbeat (10 s by default).
  bool select_while_unwritable = true;
};

struct MonitorCounters {
  uint64_t topology_events = 0;  // topology-changed events received
  // Changes to a new, non-empty set of writable servers different from the last non-empty one
  // (a failover), as opposed to primary_generation which also counts losing the primary.
  uint64_t primary_changes = 0;
  // Each serverSelectionTimeoutMS spent with no writable server: what a request waiting that long
  // would have failed with.
  uint64_t selection_failures = 0;
};

class TopologyMonitor {
 public:
  using Callback = std::function<void(std::shared_ptr<const Topology>)>;

  // Creates the pool (a mongodb+srv:// string is resolved here: a DNS failure is an Error, not an
  // exception) and starts monitoring. Returns before anything is discovered: the first snapshot is
  // Unknown. Blocking (SRV lookup): call it at startup, not on an Asio thread.
  static Expected<std::unique_ptr<TopologyMonitor>> start(const UpstreamUri& uri,
                                                          MonitorOptions options = {});

  // Stops monitoring and joins libmongoc's threads: no callback runs after it returns. Must not
  // be called from a subscriber callback. Takes up to ~1 s (a pending selection finishing).
  ~TopologyMonitor();
  TopologyMonitor(const TopologyMonitor&) = delete;
  TopologyMonitor& operator=(const TopologyMonitor&) = delete;

  // The latest snapshot; never null. Thread-safe and cheap (a mutex and a shared_ptr copy).
  std::shared_ptr<const Topology> snapshot() const;
  // snapshot()->pick_writable(spread).
  std::string pick_writable(uint64_t spread) const;

  // `callback` receives every new snapshot, in order. It runs on one of libmongoc's monitor
  // threads with libmongoc's topology lock held: it must be short and must not block or call
  // into libmongoc; post to your own executor (e.g. asio::post(strand, ...)). It may call
  // snapshot(), subscribe() and unsubscribe(). Returns an id for unsubscribe().
  uint64_t subscribe(Callback callback);
  // After it returns (when called from another thread) the callback is not running and will not
  // run again.
  void unsubscribe(uint64_t id);

  // Blocks until `pred(snapshot)` holds or `timeout` passes; returns the last snapshot seen.
  // For tools and tests; the proxy should subscribe instead.
  std::shared_ptr<const Topology> wait_for(const std::function<bool(const Topology&)>& pred,
                                           std::chrono::milliseconds timeout) const;

  // Asks libmongoc to heartbeat every replica-set member now (at most every 500 ms) instead of
  // at the next heartbeatFrequencyMS: call it when a pinned connection saw NotWritablePrimary,
  // NotPrimaryNoSecondaryOk, PrimarySteppedDown, ShutdownInProgress,
  // InterruptedDueToReplStateChange or a closed socket. Without it a stepdown on a server that
  // does not stream hello is noticed up to heartbeatFrequencyMS late. Non-blocking; requests made
  // while one check runs are merged. No effect in Single and Sharded topologies.
  void request_check();

  MonitorCounters counters() const;
  const UpstreamUri& uri() const;

 private:
  struct Impl;
  explicit TopologyMonitor(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace docguard::cluster
