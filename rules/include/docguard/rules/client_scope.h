// Who a rule applies to besides its namespace: a rule's `apps`, `users` and `clients` keys,
// and what one connection is to them (its app name, the user it authenticated as, its address).
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "docguard/base/expected.h"

namespace docguard::rules {

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
base::Expected<Cidr> parse_cidr(std::string_view text);

// A rule's scope keys; an empty list is a key not written. A rule applies to a connection when
// each key it has matches:
//   apps:    a glob matches the driver's client.application.name (no name reads as "", which
//            only "*" matches);
//   users:   a glob matches the authenticated user's name or "name@db" (a connection that has
//            not authenticated matches no `users` key, not even "*");
//   clients: a range holds the peer's address.
struct RuleScope {
  std::vector<std::string> apps;
  std::vector<std::string> users;
  std::vector<Cidr> clients;
  bool empty() const { return apps.empty() && users.empty() && clients.empty(); }
};

// Who a connection is.
struct ClientIdentity {
  std::string_view app = {};
  std::string_view user = {};          // "name@db" once authenticated, else empty
  const IpAddress* address = nullptr;  // null when the peer is not an IP address
};

bool scope_matches(const RuleScope& scope, const ClientIdentity& who);

// Whether `text` matches `pattern`, where `*` stands for any run of characters and `?` for one:
// rules' `match` namespaces and their `apps` and `users`.
bool glob_match(std::string_view pattern, std::string_view text);

}  // namespace docguard::rules
