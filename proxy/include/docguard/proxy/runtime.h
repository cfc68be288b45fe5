// State shared by every session of one docguard process.
#pragma once

#include <atomic>
#include <memory>

#include "docguard/conversation/conversation.h"
#include "docguard/proxy/config.h"
#include "docguard/proxy/metrics.h"
#include "docguard/proxy/router.h"
#include "docguard/proxy/tls.h"
#include "docguard/rules/engine.h"

namespace docguard::proxy {

struct ProxyRuntime {
  explicit ProxyRuntime(ProxyConfig cfg)
      : config(std::move(cfg)), engine(config.rules, &metrics), tls(make_tls_contexts(config)) {
    auto& persona = conversation.persona;
    persona.persona = config.persona;
    persona.replica_set_name = config.replica_set_name;
    persona.advertised_address =
        config.advertised_address.empty() ? config.listen.to_string() : config.advertised_address;
    persona.max_message_bytes = config.max_message_bytes;
    conversation.max_message_bytes = config.max_message_bytes;
  }

  const ProxyConfig config;  // settings fixed for the process's life; rules reload in `engine`
  Metrics metrics;
  rules::Engine engine;
  conversation::ConversationSettings conversation;  // every session's per-message policy
  TlsContexts tls;
  // Set at startup, before any session: the topology monitor and server selection.
  std::unique_ptr<Router> router;
  std::atomic<int64_t> active_sessions{0};
  // requestIDs for messages docguard writes itself (replies it answers, rewritten requests keep
  // the client's). Negative, so they never collide with the upstream's positive ids.
  std::atomic<int32_t> next_request_id{-1};

  int32_t new_request_id() {
    int32_t id = next_request_id.fetch_sub(1, std::memory_order_relaxed);
    if (id == INT32_MIN + 1) next_request_id.store(-1);
    return id;
  }
};

}  // namespace docguard::proxy
