// IP addresses as the proxy names its peers, and the ranges the settings give.
#include "docguard/base/ip_address.h"

#include <gtest/gtest.h>

#include <string>

#include "addresses.h"

namespace docguard::base {
namespace {

using testing::cidr;
using testing::ip;

// Why `text` is not a range ("" when it is one).
std::string why_not_a_range(std::string_view text) {
  const auto c = parse_cidr(text);
  if (c) return "";
  EXPECT_EQ(c.error().kind, ErrorKind::kBadInput);
  EXPECT_EQ(c.error().source, ErrorSource::kConfiguration);
  return c.error().message;
}

TEST(IpAddressTest, AddressesOfBothFamilies) {
  EXPECT_EQ(ip("10.1.2.3"), ip("::ffff:10.1.2.3"));
  EXPECT_EQ(ip("[::1]"), ip("::1"));
  EXPECT_EQ(ip("fe80::1%eth0"), ip("fe80::1"));
  EXPECT_FALSE(parse_ip_address("10.1.2"));
  EXPECT_FALSE(parse_ip_address("example.com"));
  EXPECT_FALSE(parse_ip_address(""));
}

TEST(IpAddressTest, PeerNamesEndWithTheirPort) {
  EXPECT_EQ(parse_peer_address("127.0.0.1:5000"), ip("127.0.0.1"));
  EXPECT_EQ(parse_peer_address("::1:5000"), ip("::1"));
  EXPECT_EQ(parse_peer_address("[2001:db8::7]:27017"), ip("2001:db8::7"));
  EXPECT_EQ(parse_peer_address("::ffff:10.0.0.5:41000"), ip("10.0.0.5"));
  EXPECT_FALSE(parse_peer_address("unknown"));
  EXPECT_FALSE(parse_peer_address(""));
}

TEST(IpAddressTest, RangesHoldAddresses) {
  EXPECT_TRUE(cidr("10.0.0.0/8").contains(ip("10.200.3.4")));
  EXPECT_FALSE(cidr("10.0.0.0/8").contains(ip("11.0.0.1")));
  EXPECT_TRUE(cidr("10.0.0.0/8").contains(ip("::ffff:10.9.9.9")));  // a dual-stack peer
  EXPECT_TRUE(cidr("192.168.1.0/25").contains(ip("192.168.1.127")));
  EXPECT_FALSE(cidr("192.168.1.0/25").contains(ip("192.168.1.128")));
  EXPECT_TRUE(cidr("10.1.2.3").contains(ip("10.1.2.3")));
  EXPECT_FALSE(cidr("10.1.2.3").contains(ip("10.1.2.4")));
  EXPECT_TRUE(cidr("0.0.0.0/0").contains(ip("8.8.8.8")));
  EXPECT_TRUE(cidr("fd00::/8").contains(ip("fd12:3456::1")));
  EXPECT_FALSE(cidr("fd00::/8").contains(ip("fe80::1")));
  EXPECT_FALSE(cidr("fd00::/8").contains(ip("10.0.0.1")));
  EXPECT_TRUE(cidr("::1").contains(ip("::1")));
  EXPECT_TRUE(cidr("::/0").contains(ip("10.0.0.1")));  // every address, mapped IPv4 included

  std::string why;
  EXPECT_FALSE(parse_cidr("10.1.2.3/8"));
  why = why_not_a_range("10.1.2.3/8");
  EXPECT_NE(why.find("bits set past its prefix"), std::string::npos) << why;
  EXPECT_FALSE(parse_cidr("10.0.0.0/33"));
  why = why_not_a_range("10.0.0.0/33");
  EXPECT_NE(why.find("0 to 32"), std::string::npos) << why;
  EXPECT_FALSE(parse_cidr("fd00::/129"));
  EXPECT_FALSE(parse_cidr("10.0.0.0/"));
  EXPECT_FALSE(parse_cidr("10.0.0.0/8x"));
  EXPECT_FALSE(parse_cidr("office"));
  why = why_not_a_range("office");
  EXPECT_NE(why.find("not an IPv4 or IPv6 address"), std::string::npos) << why;
}

}  // namespace
}  // namespace docguard::base
