// One introspection for a fleet: the docguard instances in front of one cluster (sidecars next
// to every application pod) take turns through a lease document in a database they may write
// to. The holder reads the cluster and stores what it learned beside the lease; the others load
// that instead of reading the cluster, so the cluster sees one instance's reads, whatever the
// fleet's size.
//
// <database>.docguard_lease holds {_id: "introspection", holder, expiresAt}, with a TTL index
// on expiresAt (a lease of a vanished fleet goes away by itself); <database>.docguard_facts holds
// one document per collection (advisor::shared_collection_bson).
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "docguard/advisor/shared_facts.h"
#include "docguard/cluster/cluster_reader.h"

namespace docguard::introspection {

class IntrospectionLease {
 public:
  IntrospectionLease(std::string database, std::string holder);

  const std::string& database() const { return database_; }
  const std::string& holder() const { return holder_; }

  // Takes the lease when it is free or expired, or renews it when this instance holds it, for
  // `duration`: true when this instance holds it now.
  cluster::Expected<bool> acquire(cluster::ClusterReader& reader,
                                  std::chrono::milliseconds duration);
  // Whether the facts published come from a pass over every collection (kComplete) or over a
  // few (kPartial: one collection read again).
  enum class FactsPass { kPartial, kComplete };
  // The holder stores each collection's facts (replacing what it stored of them before); after
  // a complete pass, the facts of collections no longer there are removed.
  cluster::Expected<void> publish(cluster::ClusterReader& reader,
                                  const std::vector<advisor::SharedCollection>& facts,
                                  FactsPass pass);
  // What the holder stored.
  cluster::Expected<std::vector<advisor::SharedCollection>> load(cluster::ClusterReader& reader);

 private:
  std::string database_, holder_;
  bool ttl_index_asked_ = false;
};

// hostname/pid/random: tells the instances of a fleet apart in the lease document.
std::string fleet_instance_id();

}  // namespace docguard::introspection
