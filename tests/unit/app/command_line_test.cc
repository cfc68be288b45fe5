// The program's command line (one CLI11 tree): what each proxy option sets through the settings
// reader and what it refuses, and each subcommand's options into the arguments its code takes.
#include "command_line.h"

#include <gtest/gtest.h>

#include <sstream>
#include <string>
#include <vector>

#include "docguard/settings/config_error.h"
#include "docguard/settings/settings_reader.h"

namespace docguard::app {
namespace {

using Run = CommandLine::Run;

struct Read {
  CommandLine line;
  std::string out, err;
};

Read read(std::vector<std::string> args) {
  args.insert(args.begin(), "docguard");
  std::vector<const char*> argv;
  for (const std::string& a : args) argv.push_back(a.c_str());
  std::ostringstream out, err;
  Read r{read_command_line(static_cast<int>(argv.size()), argv.data(), out, err), "", ""};
  r.out = out.str();
  r.err = err.str();
  return r;
}

settings::ProxyConfig config_of(std::vector<std::string> args) {
  const Read r = read(std::move(args));
  EXPECT_EQ(r.line.run, Run::kProxy) << r.err;
  return settings::build_config(r.line.proxy);
}

std::string error_of(std::vector<std::string> args) {
  try {
    config_of(std::move(args));
  } catch (const settings::ConfigError& e) {
    return e.what();
  }
  return "";
}

TEST(ProxyOptions, DefaultsWithoutAFile) {
  const settings::ProxyConfig c = config_of({});
  ASSERT_NE(c.rules, nullptr);
  EXPECT_EQ(c.rules->rules().size(), 1u);  // the built-in rule for "*"
  EXPECT_EQ(c.upstream.uri, "mongodb://127.0.0.1:27017");
  EXPECT_EQ(settings::upstream_first_seed(c).port, 27017);
}

TEST(ProxyOptions, UpstreamIsHeldOnce) {
  const settings::ProxyConfig c = config_of({"--upstream", "mongodb://a:1,b:2/?replicaSet=rs0"});
  EXPECT_EQ(c.upstream.uri, "mongodb://a:1,b:2/?replicaSet=rs0");
  EXPECT_EQ(c.upstream.replica_set, "rs0");
  EXPECT_EQ(settings::upstream_first_seed(c).host, "a");
  EXPECT_EQ(settings::upstream_first_seed(c).port, 1);
}

TEST(ProxyOptions, ListenOptionsReplaceTheDefault) {
  const settings::ProxyConfig c =
      config_of({"--listen", "127.0.0.1:7000", "--listen=unix:/tmp/dg.sock"});
  ASSERT_EQ(c.listen.size(), 1u);
  EXPECT_EQ(c.listen.front().port, 7000);
  ASSERT_EQ(c.listen_unix.size(), 1u);
  EXPECT_EQ(c.listen_unix.front().path, "/tmp/dg.sock");
}

TEST(ProxyOptions, LevelAndFormatNamesAreChecked) {
  EXPECT_EQ(config_of({"--log-level", "debug"}).log_level, settings::LogLevel::kDebug);
  EXPECT_EQ(config_of({"--log-format", "json"}).log_format, settings::LogFormat::kJson);
  EXPECT_EQ(error_of({"--log-level", "loud"}).rfind("--log-level: expected ", 0), 0u);
  EXPECT_NE(error_of({"--log-level", "loud"}).find("got 'loud'"), std::string::npos);
  EXPECT_EQ(error_of({"--log-format", "xml"}).rfind("--log-format: expected ", 0), 0u);
}

TEST(ProxyOptions, RefusalsNameTheOption) {
  EXPECT_EQ(error_of({"--threads", "1000"}),
            "--threads: expected a number from 0 to 256, got '1000'");
  EXPECT_EQ(error_of({"--tls-cert", "c.pem"}), "--tls-cert and --tls-key go together");
  for (const std::vector<std::string>& refused :
       {std::vector<std::string>{"--colour"}, {"stray"}, {"--admin"}}) {
    const Read r = read(refused);
    EXPECT_EQ(r.line.run, Run::kExit);
    EXPECT_EQ(r.line.exit_code, 1);
    EXPECT_NE(r.err.find(refused.front()), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("docguard --help"), std::string::npos) << r.err;
  }
}

TEST(ProxyOptions, CheckConfigTakesTheFile) {
  const Read r = read({"--check-config", "/etc/docguard.yaml"});
  EXPECT_TRUE(r.line.proxy.check_config);
  EXPECT_EQ(r.line.proxy.values.at("config"), "/etc/docguard.yaml");
  const Read bare = read({"--check-config", "--upstream", "mongodb://h"});
  EXPECT_TRUE(bare.line.proxy.check_config);
  EXPECT_EQ(bare.line.proxy.values.count("config"), 0u);
  EXPECT_EQ(bare.line.proxy.values.at("upstream"), "mongodb://h");
}

TEST(ProxyOptions, AMissingFileIsAConfigError) {
  EXPECT_NE(error_of({"--config", "/nonexistent/docguard.yaml"}).find("cannot open the file"),
            std::string::npos);
}

TEST(CommandLine, HelpIsMadeFromTheTreeAndTheEndpointTable) {
  const Read r = read({"--help"});
  EXPECT_EQ(r.line.run, Run::kExit);
  EXPECT_EQ(r.line.exit_code, 0);
  for (const char* part : {"--admin HOST:PORT", "default 127.0.0.1:9216", "scan", "validator",
                           "whatif", "replay", " /metrics ", " /recording/start "}) {
    EXPECT_NE(r.out.find(part), std::string::npos) << part;
  }
  const Read replay_help = read({"replay", "--help"});
  EXPECT_EQ(replay_help.line.exit_code, 0);
  EXPECT_NE(replay_help.out.find("--max-sessions"), std::string::npos) << replay_help.out;
  EXPECT_EQ(read({"--version"}).out.rfind("docguard ", 0), 0u);
}

TEST(CommandLine, EveryOptionOfALiveScan) {
  const Read r = read({"scan", "mongodb://h:1/shop", "--sample", "50", "--db", "shop",
                       "--collection", "products", "--credentials-file", "/c", "--format", "json",
                       "--fail-on", "warn", "--quiet"});
  ASSERT_EQ(r.line.run, Run::kScan) << r.err;
  const advisor::ScanArguments& a = r.line.scan;
  EXPECT_EQ(a.source, "mongodb://h:1/shop");
  EXPECT_EQ(a.sample, 50u);
  EXPECT_EQ(a.db, "shop");
  EXPECT_EQ(a.collection, "products");
  EXPECT_EQ(a.credentials_file, "/c");
  EXPECT_EQ(a.format, advisor::ReportFormat::kJson);
  ASSERT_TRUE(a.fail_on.has_value());
  EXPECT_EQ(*a.fail_on, advisor::Severity::kWarn);
  EXPECT_TRUE(a.quiet);
}

TEST(CommandLine, ASubcommandsRefusalsAreExit2) {
  for (const std::vector<std::string>& refused : std::vector<std::vector<std::string>>{
           {"scan", "mongodb://h/", "--sample", "0"},
           {"scan", "mongodb://h/", "--sample", "12x"},
           {"scan", "--format", "json"},
           {"scan", "dump", "--format", "xml"},
           {"scan", "dump", "--fail-on", "info"},
           {"scan", "dump", "other"},
           {"validator", "mongodb://h/"},
           {"whatif", "--config", "c.yaml"},
           {"replay", "--recording", "r", "--target", "mongodb://h", "--speed", "fast"},
           {"replay", "--recording", "r", "--target", "mongodb://h", "--max-connections", "0"},
           {"replay", "--recording", "r"},
           {"replay", "--recording", "r", "--target", "mongodb://h", "--from", "yesterday"},
           {"replay", "--recording", "r", "--target", "mongodb://h", "--max-duration", "long"},
           {"replay", "--recording", "r", "--target", "mongodb://h", "--abort-error-rate", "0"},
           {"replay", "--recording", "r", "--target", "mongodb://h", "--abort-error-rate", "2"},
           {"replay", "--recording", "r", "--target", "mongodb://h", "--abort-window", "0"},
           {"scan", "dump", "--upstream", "mongodb://h"}}) {
    const Read r = read(refused);
    EXPECT_EQ(r.line.run, Run::kExit) << refused[1];
    EXPECT_EQ(r.line.exit_code, 2) << refused[1];
    EXPECT_NE(r.err.find("docguard " + refused.front() + ": "), std::string::npos) << r.err;
  }
}

TEST(CommandLine, WhatifAndReplayOptions) {
  const Read w = read({"whatif", "--config", "c.yaml", "--recording", "rec", "--format", "html",
                       "--output", "out.html", "--show-values", "--facts-from", "dump"});
  ASSERT_EQ(w.line.run, Run::kWhatif) << w.err;
  EXPECT_EQ(w.line.whatif.config, "c.yaml");
  EXPECT_EQ(w.line.whatif.recording, "rec");
  EXPECT_EQ(w.line.whatif.format, "html");
  EXPECT_EQ(w.line.whatif.output, "out.html");
  EXPECT_TRUE(w.line.whatif.show_values);
  EXPECT_EQ(w.line.whatif.facts_from, "dump");

  const Read r =
      read({"replay", "--recording", "rec", "--target", "mongodb://t", "--speed", "max",
            "--read-only", "--ignore", "at", "--ignore", "find shop.orders {status}::updated",
            "--max-connections", "8", "--report-dir", "out", "--baseline", "mongodb://b"});
  ASSERT_EQ(r.line.run, Run::kReplay) << r.err;
  const tools::ReplayOptions& o = r.line.replay;
  EXPECT_EQ(o.recording, "rec");
  EXPECT_EQ(o.target, "mongodb://t");
  EXPECT_EQ(o.speed, 0);
  EXPECT_TRUE(o.read_only);
  EXPECT_EQ(o.ignore, std::vector<std::string>{"at"});
  EXPECT_EQ(o.ignore_by_shape.at("find shop.orders {status}"), std::vector<std::string>{"updated"});
  EXPECT_EQ(o.max_connections, 8u);
  EXPECT_EQ(o.report_dir, "out");
  EXPECT_EQ(o.baseline, "mongodb://b");
  // The defaults that protect staging.
  EXPECT_EQ(o.abort_error_rate, 0.5);
  EXPECT_EQ(o.abort_window, 100u);
  EXPECT_EQ(o.abort_latency_ms, 0);
  EXPECT_FALSE(o.dry_run);
  EXPECT_EQ(o.max_duration_seconds, 86400);
  EXPECT_TRUE(o.selection.empty());

  const Read part = read({"replay",
                          "--recording",
                          "rec",
                          "--target",
                          "mongodb://t",
                          "--from",
                          "12.5",
                          "--to",
                          "2026-12-07T20:15:00Z",
                          "--app",
                          "a",
                          "--app",
                          "b",
                          "--namespace",
                          "shop.*",
                          "--command",
                          "find",
                          "--shape",
                          "find shop.orders {status: ?}",
                          "--dry-run",
                          "--abort-error-rate",
                          "0.2",
                          "--abort-window",
                          "20",
                          "--abort-latency",
                          "250",
                          "--max-duration",
                          "90m"});
  ASSERT_EQ(part.line.run, Run::kReplay) << part.err;
  const tools::ReplayOptions& p = part.line.replay;
  EXPECT_EQ(p.selection.from, "12.5");
  EXPECT_EQ(p.selection.to, "2026-12-07T20:15:00Z");
  EXPECT_EQ(p.selection.apps, (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(p.selection.namespaces, std::vector<std::string>{"shop.*"});
  EXPECT_EQ(p.selection.commands, std::vector<std::string>{"find"});
  EXPECT_EQ(p.selection.shapes, std::vector<std::string>{"find shop.orders {status: ?}"});
  EXPECT_TRUE(p.dry_run);
  EXPECT_EQ(p.abort_error_rate, 0.2);
  EXPECT_EQ(p.abort_window, 20u);
  EXPECT_EQ(p.abort_latency_ms, 250);
  EXPECT_EQ(p.max_duration_seconds, 5400);

  const Read v = read({"validator", "dump", "shop.products", "--apply"});
  ASSERT_EQ(v.line.run, Run::kValidator) << v.err;
  EXPECT_EQ(v.line.validator_namespace, "shop.products");
  EXPECT_TRUE(v.line.validator_apply);
}

}  // namespace
}  // namespace docguard::app
