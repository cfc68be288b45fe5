// IP addresses and ranges as docguard reads them: a client's address as the proxy names its
// peers, and the ranges the settings give (a rule's `clients`).
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string_view>

#include "docguard/base/expected.h"

namespace docguard::base {

// An IPv4 or IPv6 address. IPv4 is held in its IPv4-mapped IPv6 form (::ffff:a.b.c.d), so one
// comparison serves both families and the mapped peers of a dual-stack listener match IPv4
// ranges.
struct IpAddress {
  std::array<uint8_t, 16> bytes{};
  bool operator==(const IpAddress&) const = default;
};

// "10.1.2.3", "2001:db8::1", "[::1]"; nullopt for anything else.
std::optional<IpAddress> parse_ip_address(std::string_view text);
// The address of a peer named "ADDRESS:PORT" (IPv6 with or without brackets, as the proxy names
// its clients); nullopt when it is not one ("unknown", a socket path).
std::optional<IpAddress> parse_peer_address(std::string_view peer);

// An address range: "10.0.0.0/8", "fd00::/8", or one address ("10.1.2.3", "::1").
struct Cidr {
  IpAddress network;
  int prefix = 128;  // bits of the 128-bit form that must match (an IPv4 /24 is 120)
  bool contains(const IpAddress& address) const;
};
// A kBadInput error when `text` is not a range, or names host bits past its prefix (a
// "10.1.2.3/8" is most likely a typo for "10.0.0.0/8", or for "/32"); the ranges come from the
// settings, so its source is the configuration.
Expected<Cidr> parse_cidr(std::string_view text);

}  // namespace docguard::base
