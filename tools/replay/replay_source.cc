// Refusing to replay against the recording's own source (replay_source.h).
#include "replay_source.h"

#include <arpa/inet.h>
#include <fmt/format.h>
#include <netdb.h>

#include <algorithm>
#include <set>

#include "docguard/cluster/upstream_uri.h"
#include "docguard/codec/bson_view.h"

namespace docguard::tools {

namespace {

// "host:port", "[v6]:port" or "host" (port 27017) -> host and port.
bool split_address(const std::string& address, std::string& host, std::string& port) {
  if (address.empty()) return false;
  if (address.front() == '[') {
    const size_t close = address.find(']');
    if (close == std::string::npos) return false;
    host = address.substr(1, close - 1);
    port = close + 2 < address.size() && address[close + 1] == ':' ? address.substr(close + 2)
                                                                   : "27017";
    return true;
  }
  const size_t colon = address.rfind(':');
  host = address.substr(0, colon);
  port = colon == std::string::npos ? "27017" : address.substr(colon + 1);
  return !host.empty();
}

// The addresses a host:port resolves to, as "ip|port"; every loopback address as "loopback".
std::set<std::string> resolved(const std::string& address) {
  std::set<std::string> out;
  std::string host, port;
  if (!split_address(address, host, port)) return out;
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  if (getaddrinfo(host.c_str(), port.c_str(), &hints, &found) != 0) return out;
  for (addrinfo* a = found; a != nullptr; a = a->ai_next) {
    char text[INET6_ADDRSTRLEN] = {};
    bool loopback = false;
    if (a->ai_family == AF_INET) {
      const auto* v4 = reinterpret_cast<const sockaddr_in*>(a->ai_addr);
      inet_ntop(AF_INET, &v4->sin_addr, text, sizeof text);
      loopback = (ntohl(v4->sin_addr.s_addr) >> 24) == 127;
    } else if (a->ai_family == AF_INET6) {
      const auto* v6 = reinterpret_cast<const sockaddr_in6*>(a->ai_addr);
      inet_ntop(AF_INET6, &v6->sin6_addr, text, sizeof text);
      loopback = IN6_IS_ADDR_LOOPBACK(&v6->sin6_addr);
    } else {
      continue;
    }
    out.insert((loopback ? std::string("loopback") : std::string(text)) + "|" + port);
  }
  freeaddrinfo(found);
  return out;
}

std::vector<std::string> uri_hosts(const std::string& target_uri) {
  std::vector<std::string> out;
  bson_error_t error;
  mongoc_uri_t* uri = mongoc_uri_new_with_error(target_uri.c_str(), &error);
  if (uri == nullptr) return out;
  for (const mongoc_host_list_t* h = mongoc_uri_get_hosts(uri); h != nullptr; h = h->next) {
    out.emplace_back(h->host_and_port);
  }
  mongoc_uri_destroy(uri);
  return out;
}

}  // namespace

std::string address_in_common(const RecordedSource& source, const std::string& target_uri) {
  for (const std::string& host : uri_hosts(target_uri)) {
    const std::set<std::string> target = resolved(host);
    for (const std::string& upstream : source.upstreams) {
      const std::set<std::string> recorded = resolved(upstream);
      const bool common = std::any_of(target.begin(), target.end(),
                                      [&](const std::string& a) { return recorded.contains(a); });
      if (common) return fmt::format("{} is the recorded upstream {}", host, upstream);
    }
  }
  return {};
}

std::string identity_in_common(const RecordedSource& source,
                               const recording::SourceIdentity& target) {
  for (const recording::SourceIdentity& recorded : source.identities) {
    if (!target.process_id.empty() && target.process_id == recorded.process_id) {
      return fmt::format(
          "its hello gives the recorded server process (topologyVersion.processId {})",
          target.process_id);
    }
    // The signing key is the whole cluster's: a mongos or any member of the recorded set.
    if (target.key_id != 0 && target.key_id == recorded.key_id) {
      return fmt::format(
          "its hello gives the recorded cluster's signing key "
          "($clusterTime.signature.keyId {})",
          target.key_id);
    }
    if (target.set_name.empty() || target.set_name != recorded.set_name) continue;
    for (const std::string& host : target.hosts) {
      if (std::find(recorded.hosts.begin(), recorded.hosts.end(), host) != recorded.hosts.end()) {
        return fmt::format("its hello gives the recorded replica set {} (member {})",
                           target.set_name, host);
      }
    }
  }
  return {};
}

base::Expected<void> refuse_own_source(const RecordedSource& source, const std::string& target_uri,
                                       mongoc_client_t* client, const std::string& option) {
  std::string matched;
  if (client == nullptr) {
    matched = address_in_common(source, target_uri);
  } else if (!source.identities.empty()) {
    codec::ScopedBson hello;
    BSON_APPEND_INT32(hello.get(), "hello", 1);
    codec::ScopedBson reply;
    bson_error_t error;
    if (!mongoc_client_command_simple(client, "admin", hello.get(), nullptr, reply.get(), &error)) {
      // A server without `hello` (before 4.4) still answers isMaster the same way.
      codec::ScopedBson is_master;
      BSON_APPEND_INT32(is_master.get(), "isMaster", 1);
      bson_reinit(reply.get());
      (void)mongoc_client_command_simple(client, "admin", is_master.get(), nullptr, reply.get(),
                                         &error);
    }
    matched = identity_in_common(source, recording::identity_of_hello(*reply.get()));
  }
  if (matched.empty()) return {};
  return base::bad_input(fmt::format(
      "{} {} is the cluster the recording was made against ({}): a replay sends the recorded "
      "writes again; nothing was sent",
      option, cluster::redact_uri(target_uri), matched));
}

}  // namespace docguard::tools
