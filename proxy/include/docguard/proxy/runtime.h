// State shared by every session of one docguard process.
#pragma once

#include <atomic>
#include <memory>

#include "docguard/advisor/live_advisor.h"
#include "docguard/conversation/conversation.h"
#include "docguard/proxy/config.h"
#include "docguard/proxy/introspector.h"
#include "docguard/proxy/metrics.h"
#include "docguard/proxy/router.h"
#include "docguard/proxy/tls.h"
#include "docguard/rules/engine.h"

namespace docguard::proxy {

// The rules engine reports to one observer: the metrics, and the design advisor's live profiles.
class AdvisorTee final : public rules::Observer {
 public:
  AdvisorTee(Metrics& metrics, advisor::LiveAdvisor& advisor) : m_(metrics), a_(advisor) {}
  void on_command(std::string_view db, std::string_view coll, std::string_view command,
                  std::string_view app) override {
    m_.on_command(db, coll, command, app);
  }
  void on_document_size(std::string_view db, std::string_view coll, std::string_view source,
                        double bytes) override {
    m_.on_document_size(db, coll, source, bytes);
  }
  void on_array_length(std::string_view db, std::string_view coll, std::string_view field,
                       double length) override {
    m_.on_array_length(db, coll, field, length);
  }
  void on_array_push(std::string_view db, std::string_view coll, std::string_view field,
                     double elements) override {
    m_.on_array_push(db, coll, field, elements);
  }
  void on_read(std::string_view db, std::string_view coll, bool with_lookup,
               std::string_view app) override {
    m_.on_read(db, coll, with_lookup, app);
    a_.on_read(db, coll, with_lookup, app);
  }
  void on_lookup(std::string_view db, std::string_view coll, std::string_view from) override {
    m_.on_lookup(db, coll, from);
  }
  void on_violation(std::string_view db, std::string_view coll, std::string_view rule,
                    rules::Action action, std::string_view app) override {
    m_.on_violation(db, coll, rule, action, app);
  }
  void on_candidate_violation(std::string_view db, std::string_view coll, std::string_view rule,
                              rules::Action would, std::string_view app) override {
    m_.on_candidate_violation(db, coll, rule, would, app);
  }
  void on_request(std::string_view db, std::string_view coll, const codec::CommandView& cmd,
                  std::string_view app) override {
    a_.on_request(db, coll, cmd, app);
  }
  void on_unbounded_push(std::string_view db, std::string_view coll, std::string_view field,
                         double elements, std::string_view app) override {
    a_.on_unbounded_push(db, coll, field, elements, app);
  }
  void on_catalog_reply(const codec::CommandView& request, const codec::BsonView& reply) override {
    a_.on_catalog_reply(request, reply);
  }

 private:
  Metrics& m_;
  advisor::LiveAdvisor& a_;
};

struct ProxyRuntime {
  explicit ProxyRuntime(ProxyConfig cfg)
      : config(std::move(cfg)),
        advisor(config.advisor),
        observer(metrics, advisor),
        engine(config.rules, &observer),
        introspection_metrics(metrics.registry()),
        tls(make_tls_contexts(config)) {
    auto& persona = conversation.persona;
    persona.persona = config.persona;
    persona.replica_set_name = config.replica_set_name;
    persona.advertised_address = config.advertised_address;
    if (persona.advertised_address.empty() && !config.listen.empty()) {
      persona.advertised_address = config.listen.front().to_string();
    }
    persona.max_message_bytes = config.max_message_bytes;
    conversation.max_message_bytes = config.max_message_bytes;
    // A driver that reached docguard through a socket is told that socket's path as the
    // member's address (hello's hosts, primary, me): told a TCP address instead, a driver
    // following the replica set would leave the socket for it.
    for (const auto& unix_socket : config.listen_unix) {
      unix_conversations.push_back(conversation);
      unix_conversations.back().persona.advertised_address = unix_socket.path;
    }
  }

  const ProxyConfig config;  // settings fixed for the process's life; rules reload in `engine`
  Metrics metrics;
  advisor::LiveAdvisor advisor;  // live design advisor: GET /report, docguard_findings
  AdvisorTee observer;
  rules::Engine engine;
  IntrospectionMetrics introspection_metrics;
  // docguard's own reads of the cluster (null when introspection.enabled is false); started
  // with the monitor, stopped before it.
  std::unique_ptr<Introspector> introspector;
  conversation::ConversationSettings conversation;  // every session's per-message policy
  // The same for the clients of each Unix socket (config.listen_unix, in order); never resized
  // after construction, so sessions may keep references.
  std::vector<conversation::ConversationSettings> unix_conversations;
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
