// Addresses and ranges for tests, parsed as docguard parses them (base/ip_address.h); a text
// that does not parse fails the test that wrote it.
#pragma once

#include <gtest/gtest.h>

#include <string_view>

#include "docguard/base/ip_address.h"

namespace docguard::testing {

inline base::IpAddress ip(std::string_view text) {
  auto a = base::parse_ip_address(text);
  EXPECT_TRUE(a.has_value()) << text;
  return a.value_or(base::IpAddress{});
}

inline base::Cidr cidr(std::string_view text) {
  auto c = base::parse_cidr(text);
  EXPECT_TRUE(c.ok()) << text << ": " << (c ? "" : c.error().message);
  return c ? *c : base::Cidr{};
}

}  // namespace docguard::testing
