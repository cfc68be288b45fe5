// The routing decisions of a session in front of a cluster: when a pinned session leaves, where
// a new connection goes, and when a session dials its seed itself.
#include "docguard/proxy/failover.h"

#include <gtest/gtest.h>

namespace docguard::proxy {
namespace {

cluster::Topology replica_set(std::string primary, uint64_t generation) {
  cluster::Topology t;
  t.type = primary.empty() ? cluster::TopologyType::kReplicaSetNoPrimary
                           : cluster::TopologyType::kReplicaSetWithPrimary;
  t.primary = primary;
  if (!primary.empty()) t.writable = t.candidates = {primary};
  t.primary_generation = generation;
  return t;
}

TEST(Failover, PinnedSessionLeavesAnOldPrimaryOnly) {
  // Pinned to a:1 in generation 1.
  EXPECT_FALSE(must_leave_server(replica_set("a:1", 1), "a:1", 1));
  EXPECT_TRUE(must_leave_server(replica_set("b:2", 2), "a:1", 1));   // stepped down
  EXPECT_TRUE(must_leave_server(replica_set("", 2), "a:1", 1));      // no primary now
  EXPECT_FALSE(must_leave_server(replica_set("a:1", 3), "a:1", 1));  // re-elected: stays
  // Several mongos: one more or one fewer leaves the others pinned.
  cluster::Topology sharded;
  sharded.type = cluster::TopologyType::kSharded;
  sharded.writable = {"m1:1", "m3:3"};
  sharded.candidates = {"m1:1"};  // m3 outside the latency window: still valid
  sharded.primary_generation = 4;
  EXPECT_FALSE(must_leave_server(sharded, "m3:3", 3));
  EXPECT_TRUE(must_leave_server(sharded, "m2:2", 3));
  // In front of one server nothing is gained by closing connections.
  cluster::Topology single;
  single.type = cluster::TopologyType::kSingle;
  single.primary_generation = 2;
  EXPECT_FALSE(must_leave_server(single, "a:1", 1));
  cluster::Topology unknown;
  unknown.primary_generation = 2;
  EXPECT_FALSE(must_leave_server(unknown, "a:1", 1));
}

TEST(Failover, NewConnectionsSpreadAndAvoidSuspects) {
  cluster::Topology t;
  t.type = cluster::TopologyType::kSharded;
  t.writable = t.candidates = {"m1:1", "m2:2", "m3:3"};
  EXPECT_EQ(pick_server(t, 0, {}), "m1:1");
  EXPECT_EQ(pick_server(t, 1, {}), "m2:2");
  EXPECT_EQ(pick_server(t, 5, {}), "m3:3");
  EXPECT_EQ(pick_server(t, 1, {"m2:2"}), "m3:3");
  EXPECT_EQ(pick_server(t, 2, {"m3:3"}), "m1:1");
  EXPECT_EQ(pick_server(t, 0, {"m1:1", "m2:2", "m3:3"}), "");
  EXPECT_EQ(pick_server(replica_set("", 2), 0, {}), "");
}

TEST(Failover, OnlyAPlainSingleHostDialsItsSeed) {
  cluster::Topology unknown;
  EXPECT_TRUE(may_dial_seed(unknown, 1, false, false));
  cluster::Topology single;
  single.type = cluster::TopologyType::kSingle;
  EXPECT_TRUE(may_dial_seed(single, 1, false, false));
  EXPECT_FALSE(may_dial_seed(unknown, 3, false, false));  // several seeds: wait
  EXPECT_FALSE(may_dial_seed(unknown, 1, false, true));   // replicaSet=: wait for a primary
  EXPECT_FALSE(may_dial_seed(unknown, 1, true, false));   // SRV
  EXPECT_FALSE(may_dial_seed(replica_set("", 2), 1, false, false));
}

}  // namespace
}  // namespace docguard::proxy
