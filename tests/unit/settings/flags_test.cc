// The proxy's command line through the settings reader: what each flag sets, what it refuses
// and how, and the upstream held once.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "docguard/settings/settings_reader.h"

namespace docguard::settings {
namespace {

Flags flags_of(std::vector<std::string> args) {
  args.insert(args.begin(), "docguard");
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  return parse_flags(static_cast<int>(argv.size()), argv.data());
}

ProxyConfig config_of(std::vector<std::string> args) { return build_config(flags_of(args)); }

std::string error_of(std::vector<std::string> args) {
  try {
    config_of(std::move(args));
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "";
}

TEST(Flags, DefaultsWithoutAFile) {
  const ProxyConfig c = config_of({});
  ASSERT_NE(c.rules, nullptr);
  EXPECT_EQ(c.rules->rules().size(), 1u);  // the built-in rule for "*"
  EXPECT_EQ(c.upstream.uri, "mongodb://127.0.0.1:27017");
  EXPECT_EQ(upstream_first_seed(c).port, 27017);
}

TEST(Flags, UpstreamIsHeldOnce) {
  const ProxyConfig c = config_of({"--upstream", "mongodb://a:1,b:2/?replicaSet=rs0"});
  EXPECT_EQ(c.upstream.uri, "mongodb://a:1,b:2/?replicaSet=rs0");
  EXPECT_EQ(c.upstream.replica_set, "rs0");
  EXPECT_EQ(upstream_first_seed(c).host, "a");
  EXPECT_EQ(upstream_first_seed(c).port, 1);
}

TEST(Flags, ListenFlagsReplaceTheDefault) {
  const ProxyConfig c = config_of({"--listen", "127.0.0.1:7000", "--listen=unix:/tmp/dg.sock"});
  ASSERT_EQ(c.listen.size(), 1u);
  EXPECT_EQ(c.listen.front().port, 7000);
  ASSERT_EQ(c.listen_unix.size(), 1u);
  EXPECT_EQ(c.listen_unix.front().path, "/tmp/dg.sock");
}

TEST(Flags, LevelAndFormatNamesAreChecked) {
  EXPECT_EQ(config_of({"--log-level", "debug"}).log_level, LogLevel::kDebug);
  EXPECT_EQ(config_of({"--log-format", "json"}).log_format, LogFormat::kJson);
  EXPECT_EQ(error_of({"--log-level", "loud"}).rfind("--log-level: expected ", 0), 0u);
  EXPECT_NE(error_of({"--log-level", "loud"}).find("got 'loud'"), std::string::npos);
  EXPECT_EQ(error_of({"--log-format", "xml"}).rfind("--log-format: expected ", 0), 0u);
}

TEST(Flags, RefusalsNameTheFlag) {
  EXPECT_EQ(error_of({"--threads", "1000"}),
            "--threads: expected a number from 0 to 256, got '1000'");
  EXPECT_EQ(error_of({"--tls-cert", "c.pem"}), "--tls-cert and --tls-key go together");
  EXPECT_EQ(error_of({"--colour"}), "unknown option --colour (see --help)");
  EXPECT_EQ(error_of({"stray"}), "unexpected argument 'stray'");
  EXPECT_EQ(error_of({"--admin"}), "--admin needs a value");
}

TEST(Flags, CheckConfigTakesTheFile) {
  const Flags f = flags_of({"--check-config", "/etc/docguard.yaml"});
  EXPECT_TRUE(f.check_config);
  EXPECT_EQ(f.values.at("config"), "/etc/docguard.yaml");
  EXPECT_TRUE(flags_of({"--check-config"}).values.count("config") == 0);
}

TEST(Flags, AMissingFileIsAConfigError) {
  EXPECT_NE(error_of({"--config", "/nonexistent/docguard.yaml"}).find("cannot open the file"),
            std::string::npos);
}

}  // namespace
}  // namespace docguard::settings
