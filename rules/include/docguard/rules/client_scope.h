// Who a rule applies to besides its namespace: a rule's `apps`, `users` and `clients` keys,
// and what one connection is to them (its app name, the user it authenticated as, its address).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "docguard/base/glob.h"
#include "docguard/base/ip_address.h"

namespace docguard::rules {

// Addresses, ranges and globs are base's (ip_address.h, glob.h); the rules read them by these
// names.
using base::Cidr;
using base::glob_match;
using base::IpAddress;
using base::parse_cidr;
using base::parse_ip_address;
using base::parse_peer_address;

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

}  // namespace docguard::rules
