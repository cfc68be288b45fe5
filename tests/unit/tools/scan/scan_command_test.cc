// The `scan` and `validator` commands: the errors of a live scan that cannot connect (no server
// needed: an unusable URI or a closed port), and a scan with a configuration's rules. Their
// command line is read by the program (tests/unit/app).
#include "docguard/tools/scan_command.h"

#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include <sstream>
#include <string>

#include "docguard/settings/yaml_settings.h"

namespace docguard::tools {
namespace {

struct Ran {
  int code = 0;
  std::string out, err;
};

Ran scan(const advisor::ScanArguments& args, const ScanConfigLoader& loader = {}) {
  std::ostringstream out, err;
  const int code = run_scan(args, out, err, loader);
  return {code, out.str(), err.str()};
}

Ran validator(const advisor::ScanArguments& args, const std::string& ns) {
  std::ostringstream out, err;
  const int code = run_validator(args, ns, false, out, err);
  return {code, out.str(), err.str()};
}

advisor::ScanArguments source(std::string text) {
  advisor::ScanArguments args;
  args.source = std::move(text);
  return args;
}

TEST(LiveScanCommand, InvalidUriIsExit2WithoutThePassword) {
  const Ran ran = scan(source("mongodb://reader:hunter2@h:99999/shop"));
  EXPECT_EQ(ran.code, 2);
  EXPECT_NE(ran.err.find("scan: "), std::string::npos) << ran.err;
  EXPECT_EQ(ran.err.find("hunter2"), std::string::npos) << ran.err;
  EXPECT_TRUE(ran.out.empty());
}

TEST(LiveScanCommand, UnreachableServerIsExit2WithoutThePassword) {
  // Port 1 on loopback refuses at once; the selection gives up after 300 ms.
  advisor::ScanArguments args =
      source("mongodb://reader:hunter2@127.0.0.1:1/shop?serverSelectionTimeoutMS=300");
  args.quiet = true;
  Ran ran = scan(args);
  EXPECT_EQ(ran.code, 2);
  EXPECT_NE(ran.err.find("mongodb://reader:****@127.0.0.1:1/shop"), std::string::npos) << ran.err;
  EXPECT_EQ(ran.err.find("hunter2"), std::string::npos) << ran.err;
  ran = validator(source("mongodb://127.0.0.1:1/?serverSelectionTimeoutMS=300"), "shop.products");
  EXPECT_EQ(ran.code, 2);
  EXPECT_NE(ran.err.find("validator: "), std::string::npos) << ran.err;
}

TEST(LiveScanCommand, AClustersOptionsOnADumpAreRefused) {
  advisor::ScanArguments args = source("dump");
  args.sample = 5;
  const Ran ran = validator(args, "shop.products");
  EXPECT_EQ(ran.code, 2);
  EXPECT_NE(ran.err.find("mongodb:// URI"), std::string::npos) << ran.err;
}

// `docguard scan --config`: the loader's rules apply to every document; --fail-on honours the
// rule findings' severity (the rule's action).
TEST(ScanWithConfig, RulesBecomeFindingsAndFailOn) {
  const ScanConfigLoader loader = [](const std::string&) {
    ScanConfig c;
    c.rules = settings::parse_rules(
        YAML::Load("rules:\n  - match: \"shop.orders\"\n    max_array_length: 3\n"
                   "    action: block\n"),
        "test.yaml");
    return c;
  };
  advisor::ScanArguments args =
      source(std::string(DOCGUARD_DUMP_FIXTURES) + "/shop/shop.archive.gz");
  args.fail_on = advisor::Severity::kBlock;
  args.format = advisor::ReportFormat::kJson;
  args.config_path = "x.yaml";
  const Ran with_rules = scan(args, loader);
  EXPECT_EQ(with_rules.code, 1) << with_rules.err;
  EXPECT_NE(with_rules.out.find("\"kind\":\"rule:max_array_length\""), std::string::npos);
  // Without the config: no block finding in the shop dump, so --fail-on block passes.
  args.config_path.clear();
  args.format = advisor::ReportFormat::kText;
  const Ran plain = scan(args, loader);
  EXPECT_EQ(plain.code, 0);
  EXPECT_EQ(plain.out.find("rule:"), std::string::npos);
}

}  // namespace
}  // namespace docguard::tools
