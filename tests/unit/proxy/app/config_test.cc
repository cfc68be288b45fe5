#include "docguard/proxy/config.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>

#include "docguard/settings/settings_reader.h"

namespace docguard::proxy {
namespace {

using settings::load_config_file;

std::string write_temp(const std::string& text) {
  char name[] = "/tmp/docguard-config-XXXXXX";
  const int fd = mkstemp(name);
  close(fd);
  std::ofstream(name) << text;
  return name;
}

TEST(Config, ParsesHostPortAndUpstreamUri) {
  EXPECT_EQ(parse_host_port("127.0.0.1:27018", "x").port, 27018);
  EXPECT_EQ(parse_host_port(":9", "x").host, "0.0.0.0");
  EXPECT_EQ(parse_host_port("[::1]:5", "x").host, "::1");
  EXPECT_THROW(parse_host_port("nohost", "x"), ConfigError);
  EXPECT_THROW(parse_host_port("h:99999", "x"), ConfigError);
  auto up = parse_upstream_uri("mongodb://user:pw@db.local/?tls=false");
  EXPECT_EQ(up.host, "db.local");
  EXPECT_EQ(up.port, 27017);
  EXPECT_THROW(parse_upstream_uri("http://x:1"), ConfigError);
  // Any string a driver accepts: several hosts, the first is the seed shown.
  EXPECT_EQ(parse_upstream_uri("mongodb://a:1,b:2/?replicaSet=rs0").host, "a");
  EXPECT_EQ(parse_upstream_uri("mongodb+srv://cluster0.example.net/").host, "cluster0.example.net");
}

TEST(Config, UpstreamErrorsNameTheOption) {
  try {
    check_upstream_uri("mongodb://a:1/?serverSelectionTimeoutMS=abc");
    FAIL() << "accepted";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("serverselectiontimeoutms"), std::string::npos)
        << e.what();
    EXPECT_EQ(std::string(e.what()).rfind("upstream: ", 0), 0u) << e.what();
  }
  const auto path = write_temp("upstream: \"mongodb://a:1,b:2/?replicaSet=\"\n");
  try {
    load_config_file(path);
    FAIL() << "accepted";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("key 'upstream'"), std::string::npos) << e.what();
  }
}

TEST(Config, ReplicaSetPersonaIsTheDefault) {
  ProxyConfig c;
  EXPECT_EQ(c.persona, Persona::kReplicaSet);
  EXPECT_EQ(c.upstream.seeds.size(), 1u);
}

TEST(Config, UpstreamTlsFromTheUriAndTheBlock) {
  ProxyConfig c;
  set_upstream(c,
               "mongodb://h1:1,h2:2/?replicaSet=rs0&tls=true&tlsCAFile=/ca.pem"
               "&tlsAllowInvalidHostnames=true");
  auto t = effective_upstream_tls(c);
  EXPECT_TRUE(t.enabled);
  EXPECT_EQ(t.ca_file, "/ca.pem");
  EXPECT_TRUE(t.allow_invalid_hostnames);
  EXPECT_FALSE(t.allow_invalid_certificates);
  // The block's keys win key by key; the URI fills in the rest.
  const auto path = write_temp(
      "upstream: \"mongodb://h1:1/?tls=true&tlsCAFile=/uri-ca.pem\"\n"
      "upstream_tls: { cert_file: /client.pem, server_name: db.example.net }\n");
  const auto f = load_config_file(path);
  t = effective_upstream_tls(f);
  EXPECT_TRUE(t.enabled);
  EXPECT_EQ(t.ca_file, "/uri-ca.pem");
  EXPECT_EQ(t.cert_file, "/client.pem");
  EXPECT_EQ(t.key_file, "/client.pem");
  EXPECT_EQ(t.server_name, "db.example.net");
  // enabled: false in the block turns the URI's TLS off.
  const auto off = write_temp(
      "upstream: \"mongodb://h1:1/?tls=true\"\n"
      "upstream_tls: { enabled: false }\n");
  EXPECT_FALSE(effective_upstream_tls(load_config_file(off)).enabled);
  // No TLS anywhere: off.
  EXPECT_FALSE(effective_upstream_tls(ProxyConfig{}).enabled);
}

TEST(Config, DurationsNeedAUnit) {
  const auto path = write_temp("limits:\n  connect_timeout: 1500\n");
  try {
    load_config_file(path);
    FAIL() << "expected ConfigError";
  } catch (const ConfigError& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find(path + ":2:20: key 'limits.connect_timeout'"), std::string::npos) << msg;
    EXPECT_NE(msg.find("ms, s, m, h or d"), std::string::npos) << msg;
  }
  const auto ok = write_temp("limits:\n  connect_timeout: 1500ms\n  idle_timeout: 2m\n");
  const auto c = load_config_file(ok);
  EXPECT_EQ(c.connect_timeout.count(), 1500);
  EXPECT_EQ(c.idle_timeout.count(), 120000);
}

TEST(Config, WorkloadMaxShapes) {
  EXPECT_EQ(ProxyConfig{}.max_workload_shapes, 500u);
  EXPECT_EQ(load_config_file(write_temp("workload:\n  max_shapes: 20\n")).max_workload_shapes, 20u);
  EXPECT_EQ(load_config_file(write_temp("workload: {max_shapes: 0}\n")).max_workload_shapes, 0u);
  EXPECT_THROW(load_config_file(write_temp("workload:\n  max_shapes: 200000\n")), ConfigError);
  EXPECT_THROW(load_config_file(write_temp("workload:\n  shapes: 20\n")), ConfigError);
}

TEST(Config, LoadsFileWithProxyKeysAndRules) {
  auto path = write_temp(R"(listen: 127.0.0.1:3000
upstream: mongodb://127.0.0.1:4000
admin: { listen: 127.0.0.1:5000, token: secret }
threads: 2
log_format: json
limits: { max_message_bytes: 16MiB, connect_timeout: 2s }
persona: { type: replica_set, replica_set_name: rs9 }
mode: warn
)");
  auto c = load_config_file(path);
  ASSERT_EQ(c.listen.size(), 1u);
  EXPECT_EQ(c.listen[0].port, 3000);
  EXPECT_EQ(upstream_first_seed(c).port, 4000);
  EXPECT_EQ(c.admin.port, 5000);
  EXPECT_EQ(c.admin_token, "secret");
  EXPECT_EQ(c.threads, 2u);
  EXPECT_EQ(c.log_format, LogFormat::kJson);
  EXPECT_EQ(c.max_message_bytes, 16u * 1024 * 1024);
  EXPECT_EQ(c.connect_timeout.count(), 2000);
  EXPECT_EQ(c.persona, Persona::kReplicaSet);
  EXPECT_EQ(c.replica_set_name, "rs9");
  EXPECT_NE(c.rules, nullptr);
  std::remove(path.c_str());
}

TEST(Config, ListenTakesTcpAddressesAndUnixSockets) {
  auto only_socket = write_temp("listen: unix:/run/docguard/docguard.sock\n");
  auto c = load_config_file(only_socket);
  EXPECT_TRUE(c.listen.empty());
  ASSERT_EQ(c.listen_unix.size(), 1u);
  EXPECT_EQ(c.listen_unix[0].path, "/run/docguard/docguard.sock");
  EXPECT_EQ(c.listen_unix[0].mode, 0660u);
  EXPECT_FALSE(c.listen_unix[0].uid || c.listen_unix[0].gid);
  std::remove(only_socket.c_str());

  auto both = write_temp(R"(listen:
  - 127.0.0.1:3000
  - unix: /run/docguard/docguard.sock
    mode: "0600"
    owner: root
    group: "0"
)");
  c = load_config_file(both);
  ASSERT_EQ(c.listen.size(), 1u);
  EXPECT_EQ(c.listen[0].port, 3000);
  ASSERT_EQ(c.listen_unix.size(), 1u);
  EXPECT_EQ(c.listen_unix[0].mode, 0600u);
  EXPECT_EQ(c.listen_unix[0].uid, 0u);
  EXPECT_EQ(c.listen_unix[0].gid, 0u);
  std::remove(both.c_str());

  ProxyConfig flags;
  flags.listen.clear();
  add_listen_address(flags, "unix:/tmp/dg.sock", "--listen");
  add_listen_address(flags, "[::1]:27018", "--listen");
  ASSERT_EQ(flags.listen_unix.size(), 1u);
  EXPECT_EQ(flags.listen_unix[0].to_string(), "unix:/tmp/dg.sock");
  EXPECT_EQ(flags.listen.at(0).host, "::1");
}

TEST(Config, BadUnixSocketSettingsNameTheLine) {
  struct Case {
    const char* yaml;
    const char* where;
    const char* says;
  };
  const Case cases[] = {
      {"listen:\n  - :1\n  - {unix: /tmp/a.sock, mode: \"0980\"}\n", ":3:", "listen[1].mode"},
      {"listen:\n  - {unix: /tmp/a.sock, mode: \"0460\"}\n", ":2:", "does not let the owner"},
      {"listen:\n  - {unix: /tmp/a.sock, owner: no-such-user-dg}\n",
       ":2:", "no user 'no-such-user-dg'"},
      {"listen:\n  - {unix: /tmp/a.sock, group: no-such-group-dg}\n",
       ":2:", "no group 'no-such-group-dg'"},
      {"listen: unix:relative.sock\n", ":1:", "absolute"},
      {"listen: unix:/tmp/docguard\n", ":1:", ".sock"},
      {"listen:\n  - {unix: /tmp/a.sock, mod: \"0600\"}\n", ":2:", "listen[0].mod"},
      {"listen:\n  - {mode: \"0600\"}\n", ":2:", "unix: PATH"},
      {"listen: []\n", ":1:", "at least one"},
      {"listen:\n  - unix:/tmp/a.sock\n  - unix:/tmp/a.sock\n", ":2:", "listed twice"},
  };
  for (const auto& c : cases) {
    auto path = write_temp(c.yaml);
    try {
      load_config_file(path);
      ADD_FAILURE() << "accepted: " << c.yaml;
    } catch (const ConfigError& e) {
      const std::string msg = e.what();
      EXPECT_NE(msg.find(path + c.where), std::string::npos) << msg;
      EXPECT_NE(msg.find(c.says), std::string::npos) << msg;
    }
    std::remove(path.c_str());
  }
  EXPECT_THROW(check_unix_socket_path("/" + std::string(120, 'a') + ".sock", "x"), ConfigError);
}

TEST(Config, ErrorsNameFileLineAndKey) {
  auto path = write_temp("listen: 127.0.0.1:3000\nlimits:\n  max_mesage_bytes: 10\n");
  try {
    load_config_file(path);
    FAIL() << "expected ConfigError";
  } catch (const ConfigError& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find(path + ":3"), std::string::npos) << msg;
    EXPECT_NE(msg.find("limits.max_mesage_bytes"), std::string::npos) << msg;
  }
  std::remove(path.c_str());
  auto bad_yaml = write_temp("listen: [unclosed\n");
  EXPECT_THROW(load_config_file(bad_yaml), ConfigError);
  std::remove(bad_yaml.c_str());
  EXPECT_THROW(load_config_file("/nonexistent/docguard.yaml"), ConfigError);
}

// A misspelt level in the file was once taken as is and silenced every log line, while the flag
// refused it: the file's key is checked against the same table.
TEST(Config, LogLevelInTheFileIsCheckedLikeTheFlag) {
  auto path = write_temp("listen: 127.0.0.1:3000\nlog_level: verbos\n");
  try {
    load_config_file(path);
    FAIL() << "expected ConfigError";
  } catch (const ConfigError& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find(path + ":2"), std::string::npos) << msg;
    EXPECT_NE(msg.find("log_level"), std::string::npos) << msg;
    EXPECT_NE(msg.find("verbos"), std::string::npos) << msg;
  }
  std::remove(path.c_str());
  auto ok = write_temp("log_level: debug\n");
  EXPECT_EQ(load_config_file(ok).log_level, LogLevel::kDebug);
  std::remove(ok.c_str());
}

TEST(Config, AdvisorKeyMapsOntoAdvisorSettings) {
  auto path = write_temp(
      "advisor:\n  array_length_warn: 50\n  lookup_ratio_warn: 0.25\n  live_sample_every: 1\n"
      "  report_missing_validator: false\n  unindexed_query_min: 3\n"
      "  query_shapes_per_collection: 16\n  same_shape_min_collections: 4\n"
      "  collections_cluster_warn: 500\n");
  const auto c = load_config_file(path);
  EXPECT_EQ(c.advisor.array_length_warn, 50u);
  EXPECT_EQ(c.advisor.unindexed_query_min, 3u);
  EXPECT_EQ(c.advisor.query_shapes_per_collection, 16u);
  EXPECT_EQ(c.advisor.same_shape_min_collections, 4u);
  EXPECT_EQ(c.advisor.collections_cluster_warn, 500u);
  EXPECT_DOUBLE_EQ(c.advisor.lookup_ratio_warn, 0.25);
  EXPECT_EQ(c.advisor.live_sample_every, 1u);
  EXPECT_FALSE(c.advisor.report_missing_validator);
  EXPECT_EQ(c.advisor.indexes_warn, 10u);  // untouched keys keep their defaults
  std::remove(path.c_str());
  auto bad = write_temp("advisor:\n  array_lenght_warn: 5\n");
  try {
    load_config_file(bad);
    FAIL() << "expected ConfigError";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("advisor.array_lenght_warn"), std::string::npos);
  }
  std::remove(bad.c_str());
}

TEST(Config, ForecastHorizonIsAValidatedDuration) {
  EXPECT_DOUBLE_EQ(load_config_file(write_temp("# defaults\n")).advisor.forecast_horizon,
                   7 * 86400.0);
  auto path = write_temp("advisor:\n  forecast_horizon: 12h\n  forecast_series_per_namespace: 2\n");
  const auto c = load_config_file(path);
  EXPECT_DOUBLE_EQ(c.advisor.forecast_horizon, 12 * 3600.0);
  EXPECT_EQ(c.advisor.forecast_series_per_namespace, 2u);
  std::remove(path.c_str());
  for (const char* bad : {"0s", "400d", "7", "soon"}) {
    auto file = write_temp(std::string("advisor:\n  forecast_horizon: ") + bad + "\n");
    try {
      load_config_file(file);
      ADD_FAILURE() << "expected ConfigError for " << bad;
    } catch (const ConfigError& e) {
      EXPECT_NE(std::string(e.what()).find("advisor.forecast_horizon"), std::string::npos)
          << e.what();
    }
    std::remove(file.c_str());
  }
}

TEST(Config, EmptyFileGivesDefaultsAndRules) {
  // Regression: a comment-only file left the rules unset and the proxy crashed at start.
  auto path = write_temp("# nothing here\n");
  auto c = load_config_file(path);
  EXPECT_NE(c.rules, nullptr);
  ASSERT_EQ(c.listen.size(), 1u);
  EXPECT_EQ(c.listen[0].port, 27018);
  EXPECT_TRUE(c.listen_unix.empty());
  std::remove(path.c_str());
}

TEST(Config, ExampleFileIsValid) {
  const std::string example = std::string(DOCGUARD_SOURCE_DIR) + "/config/docguard.example.yaml";
  if (!std::ifstream(example)) GTEST_SKIP() << "no example config yet";
  EXPECT_NO_THROW(load_config_file(example));
}

TEST(Config, RolloutExampleIsValid) {
  // config/rollout.example.yaml: checkout blocked, the batch jobs warned, reporting untouched,
  // and one candidate rule.
  const auto c =
      load_config_file(std::string(DOCGUARD_SOURCE_DIR) + "/config/rollout.example.yaml");
  ASSERT_EQ(c.rules->rules().size(), 2u);
  EXPECT_EQ(c.rules->rules()[0].id, "checkout-orders");
  EXPECT_EQ(c.rules->rules()[0].action, rules::Action::kBlock);
  EXPECT_EQ(c.rules->rules()[0].scope.apps, std::vector<std::string>{"checkout"});
  EXPECT_EQ(c.rules->rules()[1].action, rules::Action::kWarn);
  ASSERT_NE(c.rules->candidates(), nullptr);
  ASSERT_EQ(c.rules->candidates()->rules().size(), 1u);
  EXPECT_EQ(c.rules->candidates()->rules()[0].id, "checkout-orders-items-50");
  EXPECT_EQ(c.rules->candidates()->rules()[0].action, rules::Action::kBlock);
  // No rule applies to the reporting tool.
  const rules::ClientIdentity reporting{"reporting", "", nullptr};
  for (const auto& r : c.rules->rules()) EXPECT_FALSE(rules::scope_matches(r.scope, reporting));
}

}  // namespace
}  // namespace docguard::proxy
