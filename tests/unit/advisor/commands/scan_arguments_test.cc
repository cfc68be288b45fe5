// The scan's arguments for a dump and for a cluster, and credentials files.
#include "docguard/advisor/scan_arguments.h"

#include <gtest/gtest.h>

#include <string>

namespace docguard::advisor {
namespace {
namespace DOCGUARD_UNITY_ID {

TEST(ScanArguments, ClusterUris) {
  EXPECT_TRUE(is_cluster_uri("mongodb://h:1/db"));
  EXPECT_TRUE(is_cluster_uri("mongodb+srv://cluster0.example.net"));
  EXPECT_FALSE(is_cluster_uri("dump/shop"));
  EXPECT_FALSE(is_cluster_uri("mongodb.archive"));
}

// What the command line cannot check alone: a source is named, the cluster's options come with
// a cluster (the options themselves are read by the program's command line, app/).
TEST(ScanArguments, TheClustersOptionsNeedACluster) {
  ScanArguments a;
  EXPECT_FALSE(check_scan_arguments(a));
  a.source = "dump/shop";
  EXPECT_TRUE(check_scan_arguments(a));
  a.collection = "products";
  const auto refused = check_scan_arguments(a);
  ASSERT_FALSE(refused);
  EXPECT_NE(refused.error().message.find("mongodb:// URI"), std::string::npos);
  a.source = "mongodb://h/";
  a.sample = 50;
  EXPECT_TRUE(check_scan_arguments(a));
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

}  // namespace DOCGUARD_UNITY_ID
}  // namespace
}  // namespace docguard::advisor
