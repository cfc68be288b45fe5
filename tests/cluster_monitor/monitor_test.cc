// TopologyMonitor against a real FerretDB: a standalone is found writable, a killed server
// leaves nothing writable, a restarted one is found again (with a new primary_generation), SRV
// failures are errors, and no callback runs after the monitor is destroyed.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "docguard/cluster/mongoc_log.h"
#include "docguard/cluster/topology_monitor.h"
#include "ferretdb_process.h"

namespace docguard::cluster {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

long long ms_since(Clock::time_point t0) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - t0).count();
}

std::unique_ptr<TopologyMonitor> start_monitor(const std::string& uri, MonitorOptions opts = {}) {
  auto parsed = parse_upstream_uri(uri);
  EXPECT_TRUE(parsed.ok()) << (parsed.ok() ? "" : parsed.error().message);
  if (!parsed) return nullptr;
  auto m = TopologyMonitor::start(parsed.value(), std::move(opts));
  EXPECT_TRUE(m.ok()) << (m.ok() ? "" : m.error().message);
  return m ? std::move(m).value() : nullptr;
}

// Keeps libmongoc's warnings, drops its DEBUG line per failed heartbeat.
void quiet_mongoc() {
  set_mongoc_log_handler([](MongocLogLevel level, std::string_view, std::string_view message) {
    if (level <= MongocLogLevel::kWarning) {
      std::printf("mongoc: %.*s\n", static_cast<int>(message.size()), message.data());
    }
  });
}

bool writable(const Topology& t) { return t.has_writable(); }
bool not_writable(const Topology& t) { return !t.has_writable(); }

class MonitorTest : public ::testing::Test {
 protected:
  void SetUp() override {
    quiet_mongoc();
    const std::string bin = testing::find_ferretdb();
    if (bin.empty()) GTEST_SKIP() << "no FerretDB binary (set FERRETDB_BIN or DOCGUARD_TOOLS)";
    fdb_ = std::make_unique<testing::FerretDb>(bin);
    ASSERT_TRUE(fdb_->start());
  }
  std::unique_ptr<testing::FerretDb> fdb_;
};

TEST_F(MonitorTest, StandaloneKilledAndRestarted) {
  auto m = start_monitor("mongodb://" + fdb_->address() +
                         "/?heartbeatFrequencyMS=500&serverSelectionTimeoutMS=2000");
  ASSERT_TRUE(m);
  std::atomic<int> notified{0};
  m->subscribe([&](std::shared_ptr<const Topology>) { ++notified; });

  auto t0 = Clock::now();
  auto t = m->wait_for(writable, 10s);
  std::printf("[ timing ] standalone writable after %lld ms\n", ms_since(t0));
  ASSERT_TRUE(t->has_writable());
  EXPECT_EQ(t->type, TopologyType::kSingle);
  EXPECT_EQ(t->candidates, std::vector<std::string>{fdb_->address()});
  EXPECT_EQ(m->pick_writable(5), fdb_->address());
  EXPECT_EQ(t->primary_generation, 1u);
  ASSERT_EQ(t->servers.size(), 1u);
  EXPECT_EQ(t->servers[0].type, ServerType::kStandalone);
  ASSERT_TRUE(t->persona);
  EXPECT_EQ(t->persona->address, fdb_->address());
  EXPECT_TRUE(t->persona->max_wire_version.has_value());
  EXPECT_GT(t->persona->max_bson_object_size.value_or(0), 0);
  EXPECT_GT(t->persona->max_message_size_bytes.value_or(0), 0);
  EXPECT_FALSE(t->persona->is_mongos);

  fdb_->kill();
  t0 = Clock::now();
  t = m->wait_for(not_writable, 10s);
  std::printf("[ timing ] killed -> not writable after %lld ms (heartbeat 500 ms)\n", ms_since(t0));
  ASSERT_FALSE(t->has_writable());
  EXPECT_EQ(t->primary_generation, 2u);
  EXPECT_TRUE(m->pick_writable(0).empty());
  // The first discovery may finish inside start(), before subscribe(); the loss comes after it.
  // Subscribers run just after wait_for() waiters are woken, hence the short poll.
  for (int i = 0; i < 100 && notified.load() == 0; ++i) std::this_thread::sleep_for(20ms);
  EXPECT_GE(notified.load(), 1);

  // Long enough for two selection timeouts (2 s each) to be counted.
  std::this_thread::sleep_for(4500ms);
  EXPECT_GE(m->counters().selection_failures, 2u);

  ASSERT_TRUE(fdb_->start());
  t0 = Clock::now();
  t = m->wait_for(writable, 10s);
  std::printf("[ timing ] restarted -> writable after %lld ms\n", ms_since(t0));
  ASSERT_TRUE(t->has_writable());
  EXPECT_EQ(t->primary_generation, 3u);
  // The same server came back: a generation change, but no failover.
  EXPECT_EQ(m->counters().primary_changes, 0u);
}

// With the default 10 s heartbeat, a server that comes back is noticed at once only because the
// monitor keeps a selection pending while nothing is writable (select_while_unwritable).
TEST_F(MonitorTest, PendingSelectionSpeedsUpRediscovery) {
  // The comparison run without it (about 9 s to notice the restart) only when asked for.
  std::vector<bool> modes{true};
  if (std::getenv("DOCGUARD_CLUSTER_EXPERIMENTS")) modes.push_back(false);
  for (const bool select : modes) {
    MonitorOptions opts;
    opts.select_while_unwritable = select;
    auto m = start_monitor("mongodb://" + fdb_->address() + "/", opts);
    ASSERT_TRUE(m);
    ASSERT_TRUE(m->wait_for(writable, 10s)->has_writable());
    fdb_->kill();
    auto t0 = Clock::now();
    // Without traffic the kill is seen at the next heartbeat (up to 10 s).
    ASSERT_FALSE(m->wait_for(not_writable, 15s)->has_writable());
    std::printf("[ timing ] select=%d killed -> not writable after %lld ms (heartbeat 10 s)\n",
                select, ms_since(t0));
    std::this_thread::sleep_for(1s);
    ASSERT_TRUE(fdb_->start());
    t0 = Clock::now();
    const bool back = m->wait_for(writable, 15s)->has_writable();
    const auto took = ms_since(t0);
    std::printf("[ timing ] select=%d restarted -> writable after %lld ms\n", select, took);
    ASSERT_TRUE(back);
    if (select) {
      EXPECT_LT(took, 2500);
    }
  }
}

TEST(MonitorStart, SrvLookupFailureIsAnError) {
  auto parsed = parse_upstream_uri("mongodb+srv://cluster0.no-such-domain.invalid/");
  ASSERT_TRUE(parsed.ok());
  auto m = TopologyMonitor::start(parsed.value());
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.error().subject, "mongodb+srv");
  EXPECT_NE(m.error().message.find("SRV"), std::string::npos) << m.error().message;
}

TEST(MonitorStart, UnreachableSeedStaysUnknownAndShutsDownCleanly) {
  // Port 1 on loopback refuses at once; the monitor keeps trying until destroyed.
  quiet_mongoc();
  auto m = start_monitor("mongodb://127.0.0.1:1/?serverSelectionTimeoutMS=1000");
  ASSERT_TRUE(m);
  std::atomic<int> after_destroy{0};
  std::atomic<bool> destroyed{false};
  m->subscribe([&](std::shared_ptr<const Topology>) {
    if (destroyed) ++after_destroy;
  });
  std::this_thread::sleep_for(2500ms);
  EXPECT_FALSE(m->snapshot()->has_writable());
  EXPECT_EQ(m->counters().selection_failures, 2u);  // one per full second without a server
  const auto t0 = Clock::now();
  m.reset();
  destroyed = true;
  std::printf("[ timing ] destroy took %lld ms\n", ms_since(t0));
  std::this_thread::sleep_for(500ms);
  EXPECT_EQ(after_destroy.load(), 0);
}

TEST_F(MonitorTest, UnsubscribeStopsCallbacks) {
  auto m = start_monitor("mongodb://" + fdb_->address() + "/?heartbeatFrequencyMS=500");
  ASSERT_TRUE(m);
  std::atomic<int> a{0}, b{0};
  const auto id_a = m->subscribe([&](std::shared_ptr<const Topology>) { ++a; });
  // A callback may unsubscribe itself (runs on the monitor thread; must not deadlock).
  uint64_t id_b = 0;
  id_b = m->subscribe([&](std::shared_ptr<const Topology>) {
    ++b;
    m->unsubscribe(id_b);
  });
  ASSERT_TRUE(m->wait_for(writable, 10s)->has_writable());
  m->unsubscribe(id_a);
  const int a_then = a.load();
  fdb_->kill();
  ASSERT_FALSE(m->wait_for(not_writable, 10s)->has_writable());
  EXPECT_EQ(a.load(), a_then);
  // wait_for() may return before subscribers have run (they are called after waiters wake).
  for (int i = 0; i < 100 && b.load() == 0; ++i) std::this_thread::sleep_for(20ms);
  ASSERT_TRUE(fdb_->start());
  ASSERT_TRUE(m->wait_for(writable, 10s)->has_writable());
  std::this_thread::sleep_for(200ms);
  EXPECT_EQ(b.load(), 1);  // it unsubscribed itself during its first call
}

}  // namespace
}  // namespace docguard::cluster
