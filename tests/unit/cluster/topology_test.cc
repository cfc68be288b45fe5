// derive_writable, pick_writable and to_json on hand-made snapshots (no libmongoc involved).
#include "docguard/cluster/topology.h"

#include <gtest/gtest.h>

namespace docguard::cluster {
namespace {

using std::chrono::milliseconds;

Topology make(TopologyType type, std::vector<ServerInfo> servers) {
  Topology t;
  t.type = type;
  t.servers = std::move(servers);
  derive_writable(t, milliseconds(15));
  return t;
}

TEST(Topology, ReplicaSetWritableIsThePrimary) {
  const auto t = make(TopologyType::kReplicaSetWithPrimary, {{"a:1", ServerType::kRSSecondary, 1},
                                                             {"b:2", ServerType::kRSPrimary, 2},
                                                             {"c:3", ServerType::kRSArbiter, 1}});
  EXPECT_EQ(t.primary, "b:2");
  EXPECT_EQ(t.writable, std::vector<std::string>{"b:2"});
  EXPECT_EQ(t.candidates, t.writable);
  EXPECT_TRUE(t.is_writable("b:2"));
  EXPECT_FALSE(t.is_writable("a:1"));
  EXPECT_EQ(t.pick_writable(0), "b:2");
  EXPECT_EQ(t.pick_writable(7), "b:2");
}

TEST(Topology, NoPrimaryMeansNothingWritable) {
  const auto t = make(TopologyType::kReplicaSetNoPrimary, {{"a:1", ServerType::kRSSecondary, 1}});
  EXPECT_FALSE(t.has_writable());
  EXPECT_EQ(t.pick_writable(3), "");
  EXPECT_TRUE(t.primary.empty());
}

TEST(Topology, ShardedCandidatesAreTheLatencyWindow) {
  const auto t = make(TopologyType::kSharded, {{"m3:1", ServerType::kMongos, 40},
                                               {"m1:1", ServerType::kMongos, 5},
                                               {"m2:1", ServerType::kMongos, 20},
                                               {"m4:1", ServerType::kMongos, -1}});
  EXPECT_EQ(t.writable, (std::vector<std::string>{"m1:1", "m2:1", "m3:1", "m4:1"}));
  // 5 + 15 ms: m1, m2 (20 is on the edge, inclusive); m4 has no RTT yet and is not starved.
  EXPECT_EQ(t.candidates, (std::vector<std::string>{"m1:1", "m2:1", "m4:1"}));
  EXPECT_EQ(t.pick_writable(0), "m1:1");
  EXPECT_EQ(t.pick_writable(1), "m2:1");
  EXPECT_EQ(t.pick_writable(2), "m4:1");
  EXPECT_EQ(t.pick_writable(3), "m1:1");
  EXPECT_TRUE(t.is_writable("m3:1"));  // out of the window, but its connections stay valid
}

TEST(Topology, SingleWritableOnlyIfItTakesWrites) {
  EXPECT_EQ(make(TopologyType::kSingle, {{"s:1", ServerType::kStandalone, 1}}).candidates,
            std::vector<std::string>{"s:1"});
  EXPECT_EQ(make(TopologyType::kSingle, {{"s:1", ServerType::kRSPrimary, 1}}).candidates,
            std::vector<std::string>{"s:1"});
  // directConnection=true to a secondary: reachable, but it refuses writes.
  EXPECT_FALSE(make(TopologyType::kSingle, {{"s:1", ServerType::kRSSecondary, 1}}).has_writable());
  EXPECT_FALSE(make(TopologyType::kUnknown, {{"s:1", ServerType::kStandalone, 1}}).has_writable());
}

TEST(Topology, NamesRoundTrip) {
  for (auto t : {TopologyType::kUnknown, TopologyType::kSingle, TopologyType::kReplicaSetNoPrimary,
                 TopologyType::kReplicaSetWithPrimary, TopologyType::kSharded,
                 TopologyType::kLoadBalanced}) {
    EXPECT_EQ(topology_type_from_string(to_string(t)), t);
  }
  EXPECT_EQ(server_type_from_string("RSPrimary"), ServerType::kRSPrimary);
  EXPECT_EQ(server_type_from_string("Mongos"), ServerType::kMongos);
  EXPECT_EQ(server_type_from_string("nonsense"), ServerType::kUnknown);
}

TEST(Topology, Json) {
  auto t = make(TopologyType::kReplicaSetWithPrimary, {{"b:2", ServerType::kRSPrimary, 2}});
  t.primary_generation = 3;
  Persona p;
  p.address = "b:2";
  p.max_wire_version = 21;
  p.set_name = "rs\"0";
  t.persona = p;
  EXPECT_EQ(to_json(t),
            "{\"type\":\"ReplicaSetWithPrimary\",\"primary\":\"b:2\",\"primary_generation\":3,"
            "\"writable\":[\"b:2\"],\"candidates\":[\"b:2\"],\"servers\":[{\"address\":\"b:2\","
            "\"type\":\"RSPrimary\",\"rtt_ms\":2}],\"persona\":{\"address\":\"b:2\","
            "\"maxWireVersion\":21,\"setName\":\"rs\\\"0\",\"isdbgrid\":false}}");
}

}  // namespace
}  // namespace docguard::cluster
