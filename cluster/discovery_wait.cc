#include "discovery_wait.h"

#include <chrono>
#include <string_view>
#include <thread>

#include "docguard/codec/bson_elements.h"

namespace docguard::cluster {
namespace {

constexpr auto kDiscoveryWait = std::chrono::seconds(3);
constexpr auto kDiscoveryPoll = std::chrono::milliseconds(20);

// Members a primary's hello lists (itself included).
uint32_t listed_members(const mongoc_server_description_t* primary) {
  uint32_t members = 0;
  const bson_t* hello = mongoc_server_description_hello_response(primary);
  if (hello == nullptr) return members;
  codec::BsonElements it(hello);
  if (it.find("hosts") && it.holds_array()) {
    for (codec::BsonElements hosts(it.container()); hosts.next();) ++members;
  }
  return members;
}

bool any_answered(mongoc_client_t* client) {
  size_t n = 0;
  mongoc_server_description_t** servers = mongoc_client_get_server_descriptions(client, &n);
  bool answered = false;
  for (size_t i = 0; i < n && !answered; ++i) {
    answered = std::string_view(mongoc_server_description_type(servers[i])) != "Unknown";
  }
  mongoc_server_descriptions_destroy_all(servers, n);
  return answered;
}

}  // namespace

bool await_answering_server(mongoc_client_t* client, std::chrono::milliseconds limit,
                            const std::atomic<bool>* stop) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  while (!any_answered(client)) {
    if ((stop && stop->load()) || std::chrono::steady_clock::now() >= deadline) return false;
    std::this_thread::sleep_for(kDiscoveryPoll);
  }
  return true;
}

void await_first_discovery(mongoc_client_t* client, const std::atomic<bool>* stop) {
  const auto deadline = std::chrono::steady_clock::now() + kDiscoveryWait;
  while (std::chrono::steady_clock::now() < deadline && !(stop && stop->load())) {
    size_t n = 0;
    mongoc_server_description_t** servers = mongoc_client_get_server_descriptions(client, &n);
    bool settled = false;
    for (size_t i = 0; i < n && !settled; ++i) {
      const std::string_view type = mongoc_server_description_type(servers[i]);
      settled = type == "RSSecondary" || type == "Standalone" || type == "Mongos" ||
                type == "LoadBalancer" || (type == "RSPrimary" && listed_members(servers[i]) <= 1);
    }
    mongoc_server_descriptions_destroy_all(servers, n);
    if (settled) return;
    std::this_thread::sleep_for(kDiscoveryPoll);
  }
}

}  // namespace docguard::cluster
