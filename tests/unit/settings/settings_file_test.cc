// The settings file through the reader: every key checked, errors naming the key and the line.
#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <vector>

#include "docguard/settings/yaml_settings.h"

namespace docguard::settings {
namespace {

ProxyConfig read(const std::string& yaml) {
  ProxyConfig config;
  apply_yaml(YAML::Load(yaml), "test.yaml", config);
  return config;
}

std::string error_of(const std::string& yaml) {
  try {
    read(yaml);
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "";
}

TEST(SettingsFile, AConfigErrorIsABaseErrorFromTheConfiguration) {
  try {
    read("advisor:\n  lookup_ratio_warn: 7\n");
    FAIL() << "7 is not a share";
  } catch (const ConfigError& e) {
    const base::Error error = e.error();
    EXPECT_EQ(error.kind, base::ErrorKind::kConfiguration);
    EXPECT_EQ(error.source, base::ErrorSource::kConfiguration);
    EXPECT_FALSE(error.retry_can_help);
    EXPECT_EQ(error.message, e.what());
  }
}

TEST(SettingsFile, AdvisorSharesAreBetweenZeroAndOne) {
  EXPECT_DOUBLE_EQ(read("advisor:\n  lookup_ratio_warn: 0.25\n").advisor.lookup_ratio_warn, 0.25);
  const std::string e = error_of("advisor:\n  lookup_ratio_warn: 7\n");
  EXPECT_NE(e.find("test.yaml:2:"), std::string::npos) << e;
  EXPECT_NE(e.find("key 'advisor.lookup_ratio_warn'"), std::string::npos) << e;
  EXPECT_NE(e.find("between 0 and 1"), std::string::npos) << e;
  EXPECT_NE(error_of("advisor:\n  attribute_max_presence: -0.5\n"), "");
  EXPECT_NE(error_of("advisor:\n  subset_max_projected_share: 0.3x\n"), "");
}

TEST(SettingsFile, AdvisorOutlierRatioIsAPositiveNumber) {
  EXPECT_DOUBLE_EQ(read("advisor:\n  outlier_ratio: 4.5\n").advisor.outlier_ratio, 4.5);
  for (const char* bad : {"0", "-3", "nan", "inf", "10x", "many"}) {
    const std::string e = error_of(std::string("advisor:\n  outlier_ratio: ") + bad + "\n");
    EXPECT_NE(e.find("key 'advisor.outlier_ratio': expected a positive number"), std::string::npos)
        << bad << ": " << e;
  }
}

TEST(SettingsFile, UnknownKeysAreNamedWithTheirLine) {
  const std::string top = error_of("mode: warn\nlisten_on: 1\n");
  EXPECT_NE(top.find("test.yaml:2:"), std::string::npos) << top;
  EXPECT_NE(top.find("key 'listen_on': unknown key"), std::string::npos) << top;
  EXPECT_NE(error_of("introspection:\n  every: 1h\n").find("introspection"), std::string::npos);
  EXPECT_NE(error_of("advisor:\n  shiny: 1\n").find("key 'advisor.shiny': unknown key"),
            std::string::npos);
}

TEST(SettingsFile, LevelNamesAreChecked) {
  EXPECT_EQ(read("log_level: warn\n").log_level, LogLevel::kWarn);
  const std::string e = error_of("log_level: loud\n");
  EXPECT_NE(e.find("key 'log_level'"), std::string::npos) << e;
  EXPECT_NE(e.find("got 'loud'"), std::string::npos) << e;
}

TEST(SettingsFile, UpstreamAuthAndErrorsSettings) {
  const ProxyConfig defaults = read("mode: warn\n");
  EXPECT_EQ(defaults.upstream_auth, UpstreamAuth::kAuto);
  EXPECT_FALSE(defaults.reveal_rule_source);
  EXPECT_EQ(read("upstream_auth: required\n").upstream_auth, UpstreamAuth::kRequired);
  EXPECT_EQ(read("upstream_auth: none\n").upstream_auth, UpstreamAuth::kNone);
  EXPECT_TRUE(read("errors:\n  reveal_rule_source: true\n").reveal_rule_source);
  const std::string bad = error_of("upstream_auth: sometimes\n");
  EXPECT_NE(bad.find("key 'upstream_auth'"), std::string::npos) << bad;
  EXPECT_NE(error_of("errors:\n  reveal: true\n").find("key 'errors.reveal': unknown key"),
            std::string::npos);
}

TEST(SettingsFile, TheUpstreamIsHeldOnce) {
  const ProxyConfig c = read("upstream: mongodb://db1:4000,db2:4001/?replicaSet=rs\n");
  EXPECT_EQ(c.upstream.uri, "mongodb://db1:4000,db2:4001/?replicaSet=rs");
  EXPECT_EQ(c.upstream.seeds.size(), 2u);
  EXPECT_EQ(upstream_first_seed(c).host, "db1");
  EXPECT_EQ(upstream_first_seed(c).port, 4000);
}

TEST(SettingsFile, AnEmptyFileGivesTheDefaultRules) {
  const ProxyConfig c = read("");
  ASSERT_NE(c.rules, nullptr);
  EXPECT_EQ(c.rules->rules().size(), 1u);
}

TEST(SettingsFile, RecordingSection) {
  const auto c = read(
      "recording:\n  enabled: true\n  directory: /tmp/rec\n  apps: [a, b]\n  users: alice\n"
      "  namespaces: [shop.*]\n  sample: 0.5\n  max_duration: 10m\n  queue_bytes: 4KiB\n"
      "  max_file_bytes: 1MiB\n  max_total_bytes: 1GiB\n");
  const auto& r = c.recording;
  EXPECT_TRUE(r.enabled);
  EXPECT_EQ(r.directory, "/tmp/rec");
  EXPECT_EQ(r.apps, (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(r.users, (std::vector<std::string>{"alice"}));
  EXPECT_EQ(r.namespaces, (std::vector<std::string>{"shop.*"}));
  EXPECT_DOUBLE_EQ(r.sample, 0.5);
  EXPECT_EQ(r.max_duration, std::chrono::minutes(10));
  EXPECT_EQ(r.queue_bytes, 4096u);
  EXPECT_EQ(r.max_file_bytes, 1u << 20);
  EXPECT_EQ(r.max_total_bytes, 1ull << 30);
  EXPECT_FALSE(read("").recording.enabled);
}

TEST(SettingsFile, RecordingRedactionRemembersABoundedNumberOfCursors) {
  EXPECT_EQ(read("").recording.redaction.max_sensitive_cursors, 10000u);
  const auto c = read("recording:\n  redact:\n    fields: [ssn]\n    max_sensitive_cursors: 50\n");
  EXPECT_EQ(c.recording.redaction.max_sensitive_cursors, 50u);
  EXPECT_EQ(c.recording.redaction.fields, (std::vector<std::string>{"ssn"}));
  EXPECT_NE(error_of("recording:\n  redact:\n    max_sensitive_cursors: -1\n"), "");
}

TEST(SettingsFile, RecordingNeedsADirectoryAndKnownKeys) {
  EXPECT_NE(error_of("recording:\n  enabled: true\n").find("recording.directory is required"),
            std::string::npos);
  EXPECT_NE(error_of("recording:\n  directry: /tmp\n").find("directry"), std::string::npos);
  EXPECT_NE(error_of("recording:\n  sample: 2\n"), "");
  EXPECT_EQ(error_of("recording:\n  directory: /tmp/x\n"), "");  // off: nothing more needed
}

TEST(SettingsFile, RecordingBoundsAreCheckedEvenWhenOff) {
  // A file per message, an unbounded duration, a cast past 2^63: refused with the key's name.
  EXPECT_NE(error_of("recording:\n  max_file_bytes: 1\n").find("recording.max_file_bytes"),
            std::string::npos);
  EXPECT_NE(error_of("recording:\n  max_file_bytes: 32GiB\n").find("max_file_bytes"),
            std::string::npos);
  EXPECT_NE(error_of("recording:\n  max_duration: 31d\n").find("30 days"), std::string::npos);
  EXPECT_NE(error_of("recording:\n  max_duration: 1e17s\n"), "");
  EXPECT_NE(error_of("recording:\n  queue_bytes: 100\n").find("queue_bytes"), std::string::npos);
  EXPECT_NE(error_of("recording:\n  max_total_bytes: 1e30\n"), "");
  EXPECT_EQ(error_of("recording:\n  max_duration: 30d\n  max_file_bytes: 1MiB\n"), "");
}

TEST(SettingsFile, ARelativeRecordingDirectoryIsTheConfigFilesOwn) {
  ProxyConfig config;
  apply_yaml(YAML::Load("recording:\n  directory: rec/today\n"), "/etc/docguard/docguard.yaml",
             config);
  EXPECT_EQ(config.recording.directory, "/etc/docguard/rec/today");
  EXPECT_EQ(read("recording:\n  directory: /var/rec/\n").recording.directory, "/var/rec/");
}

TEST(SettingsFile, RecordingApiWithoutTokenAndAdminAllowedHosts) {
  EXPECT_FALSE(read("").recording.api_without_token);
  EXPECT_TRUE(read("recording:\n  api_without_token: true\n").recording.api_without_token);
  const auto c = read("admin:\n  listen: 0.0.0.0:9216\n  allowed_hosts: [docguard.internal]\n");
  EXPECT_EQ(c.admin_allowed_hosts, std::vector<std::string>{"docguard.internal"});
  EXPECT_EQ(read("admin: {allowed_hosts: a.example}").admin_allowed_hosts,
            std::vector<std::string>{"a.example"});
  EXPECT_NE(error_of("admin: {allowed_hosts: {a: 1}}").find("admin.allowed_hosts"),
            std::string::npos);
}

TEST(SettingsFile, AdminTokenFileAndTheOptInWithoutToken) {
  const auto c = read("admin: {token_file: /run/secrets/admin-token, allow_without_token: yes}");
  EXPECT_EQ(c.admin_token_file, "/run/secrets/admin-token");
  EXPECT_TRUE(c.admin_token.empty());  // read when the settings are settled, not here
  EXPECT_TRUE(c.admin_allow_without_token);
  EXPECT_FALSE(read("admin: {listen: 0.0.0.0:9216}").admin_allow_without_token);
  EXPECT_NE(error_of("admin: {token: a, token_file: /b}").find("not both"), std::string::npos);
  EXPECT_NE(error_of("admin: {allow_without_token: maybe}").find("admin.allow_without_token"),
            std::string::npos);
}

}  // namespace
}  // namespace docguard::settings
