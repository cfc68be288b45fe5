// parse_upstream_uri: what docguard accepts, what it refuses (naming the option), and the
// settings it extracts. No network: mongodb+srv:// is resolved only by TopologyMonitor::start.
#include "docguard/cluster/upstream_uri.h"

#include <gtest/gtest.h>

namespace docguard::cluster {
namespace {

UpstreamUri ok(std::string_view s) {
  auto r = parse_upstream_uri(s);
  EXPECT_TRUE(r.ok()) << s << ": " << (r.ok() ? "" : r.error().message);
  return r.ok() ? r.value() : UpstreamUri{};
}

Error refused(std::string_view s) {
  auto r = parse_upstream_uri(s);
  EXPECT_FALSE(r.ok()) << s;
  return r.ok() ? Error{} : r.error();
}

TEST(UpstreamUri, SingleHostDefaults) {
  const auto u = ok("mongodb://127.0.0.1:27017");
  EXPECT_EQ(u.seeds, std::vector<std::string>{"127.0.0.1:27017"});
  EXPECT_FALSE(u.is_srv);
  EXPECT_TRUE(u.replica_set.empty());
  EXPECT_FALSE(u.direct_connection);
  EXPECT_FALSE(u.tls.enabled);
  EXPECT_EQ(u.server_selection_timeout, std::chrono::milliseconds(30000));
  EXPECT_EQ(u.heartbeat_frequency, std::chrono::milliseconds(10000));
  EXPECT_EQ(u.local_threshold, std::chrono::milliseconds(15));
  EXPECT_FALSE(u.has_credentials);
  EXPECT_TRUE(u.ignored_options.empty());
}

TEST(UpstreamUri, ReplicaSetSeedsAndTimeouts) {
  const auto u =
      ok("mongodb://a.example:27017,b.example:27018,[::1]:27019/?replicaSet=rs0&"
         "serverSelectionTimeoutMS=5000&heartbeatFrequencyMS=500&localThresholdMS=30&"
         "connectTimeoutMS=2000");
  EXPECT_EQ(u.seeds,
            (std::vector<std::string>{"a.example:27017", "b.example:27018", "[::1]:27019"}));
  EXPECT_EQ(u.replica_set, "rs0");
  EXPECT_EQ(u.server_selection_timeout, std::chrono::milliseconds(5000));
  EXPECT_EQ(u.heartbeat_frequency, std::chrono::milliseconds(500));
  EXPECT_EQ(u.local_threshold, std::chrono::milliseconds(30));
  EXPECT_EQ(u.connect_timeout, std::chrono::milliseconds(2000));
}

TEST(UpstreamUri, OptionNamesAreCaseInsensitive) {
  EXPECT_EQ(ok("mongodb://a/?REPLICASET=rs1").replica_set, "rs1");
}

TEST(UpstreamUri, SrvImpliesTlsUnlessTurnedOff) {
  const auto u = ok("mongodb+srv://cluster0.example.com/?srvServiceName=custom&srvMaxHosts=2");
  EXPECT_TRUE(u.is_srv);
  EXPECT_TRUE(u.seeds.empty());
  EXPECT_EQ(u.srv_hostname, "cluster0.example.com");
  EXPECT_EQ(u.srv_service_name, "custom");
  EXPECT_TRUE(u.tls.enabled);
  EXPECT_EQ(ok("mongodb+srv://cluster0.example.com/").srv_service_name, "mongodb");
  EXPECT_FALSE(ok("mongodb+srv://cluster0.example.com/?tls=false").tls.enabled);
}

TEST(UpstreamUri, TlsSettings) {
  const auto u =
      ok("mongodb://a/?tls=true&tlsCAFile=/etc/ca.pem&tlsCertificateKeyFile=/etc/client.pem&"
         "tlsCertificateKeyFilePassword=pw&tlsAllowInvalidHostnames=true");
  EXPECT_TRUE(u.tls.enabled);
  EXPECT_EQ(u.tls.ca_file, "/etc/ca.pem");
  EXPECT_EQ(u.tls.certificate_key_file, "/etc/client.pem");
  EXPECT_EQ(u.tls.certificate_key_file_password, "pw");
  EXPECT_TRUE(u.tls.allow_invalid_hostnames);
  EXPECT_FALSE(u.tls.allow_invalid_certificates);

  const auto insecure = ok("mongodb://a/?tls=true&tlsInsecure=true");
  EXPECT_TRUE(insecure.tls.allow_invalid_hostnames);
  EXPECT_TRUE(insecure.tls.allow_invalid_certificates);

  const auto legacy = ok("mongodb://a/?ssl=true&sslAllowInvalidCertificates=true");
  EXPECT_TRUE(legacy.tls.enabled);
  EXPECT_TRUE(legacy.tls.allow_invalid_certificates);
}

TEST(UpstreamUri, DirectConnection) {
  EXPECT_TRUE(ok("mongodb://a:27017/?directConnection=true").direct_connection);
  // libmongoc's own rule, passed through.
  EXPECT_NE(refused("mongodb://a,b/?directConnection=true").message.find("directConnection"),
            std::string::npos);
}

TEST(UpstreamUri, CredentialsAreNotedAndRedacted) {
  const auto u = ok("mongodb://app:s3cret@a:27017/?authSource=admin&authMechanism=SCRAM-SHA-256");
  EXPECT_TRUE(u.has_credentials);
  EXPECT_EQ(u.auth_mechanism, "SCRAM-SHA-256");
  EXPECT_EQ(u.redacted, "mongodb://app:****@a:27017/?authSource=admin&authMechanism=SCRAM-SHA-256");
  EXPECT_EQ(u.redacted.find("s3cret"), std::string::npos);
  EXPECT_EQ(redact_uri("mongodb://user@a/"), "mongodb://user@a/");
  EXPECT_EQ(redact_uri("mongodb://a/"), "mongodb://a/");
  EXPECT_EQ(redact_uri("mongodb://u:p@a,b/?x=1"), "mongodb://u:****@a,b/?x=1");
}

TEST(UpstreamUri, CredentialsStrippedForReports) {
  EXPECT_EQ(strip_credentials("mongodb://u:p%40ss@a:1,b/shop?authSource=admin"),
            "mongodb://a:1,b/shop?authSource=admin");
  EXPECT_EQ(strip_credentials("mongodb+srv://user@cluster0.example.net/"),
            "mongodb+srv://cluster0.example.net/");
  EXPECT_EQ(strip_credentials("mongodb://a/?x=@"), "mongodb://a/?x=@");
  EXPECT_EQ(strip_credentials("not a uri"), "not a uri");
}

TEST(UpstreamUri, PerOperationOptionsAreAcceptedButReportedIgnored) {
  const auto u =
      ok("mongodb://a/?w=majority&retryWrites=true&maxPoolSize=5&compressors=zstd&"
         "readConcernLevel=majority&W=1");
  EXPECT_EQ(u.ignored_options, (std::vector<std::string>{"w", "retrywrites", "maxpoolsize",
                                                         "compressors", "readconcernlevel"}));
}

TEST(UpstreamUri, ReadPreferencePrimaryOnly) {
  ok("mongodb://a/?readPreference=primary");
  EXPECT_EQ(refused("mongodb://a/?readPreference=secondaryPreferred").subject, "readPreference");
  EXPECT_EQ(refused("mongodb://a/?readPreference=nearest&maxStalenessSeconds=120").subject,
            "readPreference");
  refused("mongodb://a/?readPreferenceTags=dc:ny");  // libmongoc: tags need a non-primary mode
  // libmongoc 1.23 drops slaveOk as unsupported: unknown to docguard too.
  EXPECT_EQ(refused("mongodb://a/?slaveOk=true").subject, "slaveOk");
}

TEST(UpstreamUri, LoadBalancedRefused) {
  const Error e = refused("mongodb://lb.example:27017/?loadBalanced=true");
  EXPECT_EQ(e.subject, "loadBalanced");
  EXPECT_NE(e.message.find("loadBalanced"), std::string::npos);
  ok("mongodb://a/?loadBalanced=false");
}

TEST(UpstreamUri, UnknownOptionRefusedByName) {
  // libmongoc only warns and drops it; a misspelt replicaSet would silently change the topology.
  const Error e = refused("mongodb://a,b/?replSet=rs0");
  EXPECT_EQ(e.subject, "replSet");
  EXPECT_NE(e.message.find("replSet"), std::string::npos);
}

TEST(UpstreamUri, InvalidValuesRefused) {
  EXPECT_NE(refused("mongodb://a/?tls=maybe").message.find("tls"), std::string::npos);
  EXPECT_NE(refused("mongodb://a/?heartbeatFrequencyMS=100").message.find("heartbeatfrequencyms"),
            std::string::npos);
  EXPECT_NE(
      refused("mongodb://a/?serverSelectionTimeoutMS=abc").message.find("serverselectiontimeoutms"),
      std::string::npos);
  EXPECT_EQ(refused("mongodb://a/?localThresholdMS=-1").subject, "localThresholdMS");
  refused("mongodb://a/?ssl=true&tls=false");
  refused("mongodb://a/?tlsInsecure=true&tlsAllowInvalidHostnames=true");
  refused("mongodb://a/?srvMaxHosts=2");  // only with mongodb+srv://
}

TEST(UpstreamUri, MalformedRefused) {
  refused("");
  refused("http://a:27017");
  refused("mongodb://");
  refused("mongodb://a:99999");
}

TEST(UpstreamUri, UnixSocketRefused) {
  EXPECT_EQ(refused("mongodb://%2Ftmp%2Fmongodb-27017.sock").subject, "/tmp/mongodb-27017.sock");
}

}  // namespace
}  // namespace docguard::cluster
