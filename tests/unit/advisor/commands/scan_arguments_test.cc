// The scan's command line for a dump and for a cluster, and credentials files.
#include "docguard/advisor/scan_arguments.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace docguard::advisor {
namespace {

// Runs parse_scan_arguments on "scan ARGS...".
// True, or false with the error's message in `why`.
bool parse(std::vector<std::string> args, ScanArguments* out, std::string& why) {
  args.insert(args.begin(), "scan");
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  const auto parsed = parse_scan_arguments(static_cast<int>(argv.size()), argv.data(), out);
  why = parsed ? "" : parsed.error().message;
  return parsed.ok();
}

TEST(ScanArguments, ClusterUris) {
  EXPECT_TRUE(is_cluster_uri("mongodb://h:1/db"));
  EXPECT_TRUE(is_cluster_uri("mongodb+srv://cluster0.example.net"));
  EXPECT_FALSE(is_cluster_uri("dump/shop"));
  EXPECT_FALSE(is_cluster_uri("mongodb.archive"));
}

TEST(ScanArguments, EveryOptionOfALiveScan) {
  ScanArguments a;
  std::string error;
  ASSERT_TRUE(
      parse({"mongodb://h:1/shop", "--sample", "50", "--db", "shop", "--collection", "products",
             "--credentials-file", "/c", "--format", "json", "--fail-on", "warn", "--quiet"},
            &a, error))
      << error;
  EXPECT_EQ(a.source, "mongodb://h:1/shop");
  EXPECT_EQ(a.sample, 50u);
  EXPECT_EQ(a.db, "shop");
  EXPECT_EQ(a.collection, "products");
  EXPECT_EQ(a.credentials_file, "/c");
  EXPECT_EQ(a.format, ReportFormat::kJson);
  ASSERT_TRUE(a.fail_on.has_value());
  EXPECT_EQ(*a.fail_on, Severity::kWarn);
  EXPECT_TRUE(a.quiet);
}

TEST(ScanArguments, Refusals) {
  std::string error;
  ScanArguments a;
  EXPECT_FALSE(parse({"mongodb://h/", "--sample", "0"}, &a, error));
  EXPECT_NE(error.find("--sample"), std::string::npos);
  ScanArguments b;
  EXPECT_FALSE(parse({"mongodb://h/", "--sample", "12x"}, &b, error));
  ScanArguments c;
  EXPECT_FALSE(parse({"dump/shop", "--collection", "products"}, &c, error));
  EXPECT_NE(error.find("mongodb:// URI"), std::string::npos);
  ScanArguments d;
  EXPECT_FALSE(parse({"--format", "json"}, &d, error));
  ScanArguments e;
  EXPECT_FALSE(parse({"dump", "--format", "xml"}, &e, error));
  ScanArguments f;
  EXPECT_FALSE(parse({"dump", "--fail-on", "info"}, &f, error));
  ScanArguments g;
  EXPECT_FALSE(parse({"dump", "other"}, &g, error));
}

// The error's message, "" when `parsed` holds credentials.
std::string error_of(const base::Expected<Credentials>& parsed) {
  return parsed ? "" : parsed.error().message;
}

TEST(Credentials, UserAndPasswordLines) {
  const auto c = parse_credentials("# scanner\nuser: reader\npassword:  p@ss: word \n");
  ASSERT_TRUE(c) << error_of(c);
  EXPECT_EQ(c->username, "reader");
  EXPECT_EQ(c->password, "p@ss: word");
}

TEST(Credentials, ConnectionStringLine) {
  const auto c = parse_credentials("mongodb://us%40er:s%3Acret@db1,db2/?replicaSet=rs\n");
  ASSERT_TRUE(c) << error_of(c);
  EXPECT_EQ(c->username, "us@er");
  EXPECT_EQ(c->password, "s:cret");
}

TEST(Credentials, ErrorsNeverQuoteTheSecret) {
  auto c = parse_credentials("password: hunter2\n");
  EXPECT_FALSE(c);
  EXPECT_EQ(error_of(c).find("hunter2"), std::string::npos);
  EXPECT_EQ(c.error().kind, base::ErrorKind::kConfiguration);
  c = parse_credentials("user reader\npasswd hunter2\n");
  EXPECT_FALSE(c);
  EXPECT_EQ(error_of(c).find("hunter2"), std::string::npos);
  c = parse_credentials("mongodb://u:s3kr1t%zz@h/\n");
  EXPECT_FALSE(c);
  EXPECT_EQ(error_of(c).find("s3kr1t"), std::string::npos);
  c = read_credentials_file("/nonexistent/credentials");
  EXPECT_FALSE(c);
  EXPECT_EQ(c.error().kind, base::ErrorKind::kIo);
}

}  // namespace
}  // namespace docguard::advisor
