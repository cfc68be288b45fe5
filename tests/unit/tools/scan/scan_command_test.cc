// The `scan` and `validator` commands: the errors of a live scan that cannot connect (no server
// needed: an unusable URI or a closed port), and a scan with a configuration's rules.
#include "docguard/tools/scan_command.h"

#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include <sstream>
#include <string>
#include <vector>

#include "docguard/settings/yaml_settings.h"

namespace docguard::tools {
namespace {

int run(const char* command, std::vector<std::string> args, std::string* out, std::string* err) {
  args.insert(args.begin(), command);
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  std::ostringstream o, e;
  const int code = std::string(command) == "scan"
                       ? run_scan(static_cast<int>(argv.size()), argv.data(), o, e)
                       : run_validator(static_cast<int>(argv.size()), argv.data(), o, e);
  *out = o.str();
  *err = e.str();
  return code;
}

TEST(LiveScanCommand, InvalidUriIsExit2WithoutThePassword) {
  std::string out, err;
  EXPECT_EQ(run("scan", {"mongodb://reader:hunter2@h:99999/shop"}, &out, &err), 2);
  EXPECT_NE(err.find("scan: "), std::string::npos) << err;
  EXPECT_EQ(err.find("hunter2"), std::string::npos) << err;
  EXPECT_TRUE(out.empty());
}

TEST(LiveScanCommand, UnreachableServerIsExit2WithoutThePassword) {
  std::string out, err;
  // Port 1 on loopback refuses at once; the selection gives up after 300 ms.
  EXPECT_EQ(
      run("scan",
          {"mongodb://reader:hunter2@127.0.0.1:1/shop?serverSelectionTimeoutMS=300", "--quiet"},
          &out, &err),
      2);
  EXPECT_NE(err.find("mongodb://reader:****@127.0.0.1:1/shop"), std::string::npos) << err;
  EXPECT_EQ(err.find("hunter2"), std::string::npos) << err;
  EXPECT_EQ(
      run("validator", {"mongodb://127.0.0.1:1/?serverSelectionTimeoutMS=300", "shop.products"},
          &out, &err),
      2);
  EXPECT_NE(err.find("validator: "), std::string::npos) << err;
}

TEST(LiveScanCommand, ValidatorUsage) {
  std::string out, err;
  EXPECT_EQ(run("validator", {"mongodb://h/"}, &out, &err), 2);
  EXPECT_NE(err.find("usage: validator"), std::string::npos);
  EXPECT_EQ(run("validator", {"dump", "shop.products", "--sample", "5"}, &out, &err), 2);
}

// `docguard scan --config`: the loader's rules apply to every document; --fail-on honours the
// rule findings' severity (the rule's action).
TEST(ScanWithConfig, RulesBecomeFindingsAndFailOn) {
  const std::string dump = std::string(DOCGUARD_DUMP_FIXTURES) + "/shop/shop.archive.gz";
  const ScanConfigLoader loader = [](const std::string&) {
    ScanConfig c;
    c.rules = settings::parse_rules(
        YAML::Load("rules:\n  - match: \"shop.orders\"\n    max_array_length: 3\n"
                   "    action: block\n"),
        "test.yaml");
    return c;
  };
  std::string a0 = "scan", a1 = dump, a2 = "--config", a3 = "x.yaml", a4 = "--fail-on",
              a5 = "block", a6 = "--format", a7 = "json";
  char* argv[] = {a0.data(), a1.data(), a2.data(), a3.data(),
                  a4.data(), a5.data(), a6.data(), a7.data()};
  std::ostringstream out, err;
  EXPECT_EQ(run_scan(8, argv, out, err, loader), 1) << err.str();
  EXPECT_NE(out.str().find("\"kind\": \"rule:max_array_length\""), std::string::npos);
  // Without the config: no block finding in the shop dump, so --fail-on block passes.
  char* plain[] = {a0.data(), a1.data(), a4.data(), a5.data()};
  std::ostringstream out2;
  EXPECT_EQ(run_scan(4, plain, out2, err, loader), 0);
  EXPECT_EQ(out2.str().find("rule:"), std::string::npos);
}

}  // namespace
}  // namespace docguard::tools
