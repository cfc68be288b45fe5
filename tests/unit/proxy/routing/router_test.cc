// The Router without a topology monitor: what a new connection is given while nothing is known
// of the cluster (the URI's only seed for a plain single host, nothing otherwise), and that a
// server found dead is not avoided outside a replica set or sharded cluster. Choosing among
// known servers (round-robin, skipping suspects) is pick_server's, in failover_test.cc.
#include "docguard/proxy/router.h"

#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <utility>
#include <vector>

namespace docguard::proxy {
namespace {

cluster::UpstreamUri uri(std::vector<std::string> seeds, std::string replica_set = "",
                         bool is_srv = false) {
  cluster::UpstreamUri u;
  u.seeds = std::move(seeds);
  u.replica_set = std::move(replica_set);
  u.is_srv = is_srv;
  return u;
}

TEST(Router, WithoutAMonitorTheTopologyIsUnknownAndNotACluster) {
  Router router(uri({"db:27017"}), nullptr);
  ASSERT_NE(router.snapshot(), nullptr);
  EXPECT_EQ(router.snapshot()->type, cluster::TopologyType::kUnknown);
  EXPECT_FALSE(router.snapshot()->has_writable());
  EXPECT_FALSE(router.in_cluster());
  EXPECT_EQ(router.monitor(), nullptr);
  EXPECT_EQ(router.uri().seeds, std::vector<std::string>{"db:27017"});
  router.request_check();  // nothing to ask: no effect
}

TEST(Router, APlainSingleHostIsDialledWhileNothingIsKnown) {
  Router router(uri({"db:27017"}), nullptr);
  for (int i = 0; i < 3; ++i) {  // every connection, whatever the spread
    const auto choice = router.select();
    EXPECT_EQ(choice.server, "db:27017");
    EXPECT_TRUE(choice.seed_fallback);
    EXPECT_EQ(choice.generation, 0u);
  }
}

TEST(Router, ClusterURIsWaitForTheMonitor) {
  // Several seeds, a replicaSet= or an SRV name: the seed may not be the primary.
  for (const auto& u : {uri({"a:1", "b:2"}), uri({"a:1"}, "rs0"), uri({}, "", true)}) {
    Router router(u, nullptr);
    const auto choice = router.select();
    EXPECT_EQ(choice.server, "");
    EXPECT_FALSE(choice.seed_fallback);
  }
}

TEST(Router, ASingleServerFoundDeadIsStillDialled) {
  // Nowhere else to go: avoiding it would only delay new connections.
  Router router(uri({"db:27017"}), nullptr, std::chrono::hours(1));
  router.suspect("db:27017");
  router.suspect("");
  const auto choice = router.select();
  EXPECT_EQ(choice.server, "db:27017");
  EXPECT_TRUE(choice.seed_fallback);
}

}  // namespace
}  // namespace docguard::proxy
