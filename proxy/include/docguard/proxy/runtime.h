// State shared by every session of one docguard process.
#pragma once

#include <atomic>
#include <memory>

#include "docguard/advisor/live_advisor.h"
#include "docguard/conversation/conversation.h"
#include "docguard/introspection/introspector.h"
#include "docguard/proxy/config.h"
#include "docguard/proxy/introspection_metrics.h"
#include "docguard/proxy/router.h"
#include "docguard/proxy/tls.h"
#include "docguard/recording/recorder.h"
#include "docguard/rules/engine.h"
#include "docguard/telemetry/limit_eta_gauge.h"
#include "docguard/telemetry/metrics.h"

namespace docguard::proxy {

// requestIDs for messages docguard writes itself (replies it answers, rewritten requests keep
// the client's). Negative, so they never collide with the upstream's positive ids.
class RequestIds {
 public:
  int32_t next() {
    int32_t id = next_.fetch_sub(1, std::memory_order_relaxed);
    if (id == INT32_MIN + 1) next_.store(-1);
    return id;
  }

 private:
  std::atomic<int32_t> next_{-1};
};

struct ProxyRuntime {
  explicit ProxyRuntime(ProxyConfig cfg)
      : config(std::move(cfg)),
        metrics(telemetry::MetricsSettings{config.max_metric_series}),
        advisor(config.advisor),
        engine(config.rules, &metrics, &advisor),
        introspection_metrics(metrics.registry(), metrics.series_budget()),
        limit_etas(metrics.registry()),
        tls(make_tls_contexts(config)),
        recorder(metrics, config.max_message_bytes) {
    auto& persona = conversation.persona;
    persona.persona = config.persona;
    persona.replica_set_name = config.replica_set_name;
    persona.advertised_address = config.advertised_address;
    if (persona.advertised_address.empty() && !config.listen.empty()) {
      persona.advertised_address = config.listen.front().to_string();
    }
    // The growth forecast: the engine tells a document entering the horizon, the advisor turns
    // the engine's forecasts into findings and /report's section.
    engine.set_forecast_horizon(config.advisor.forecast_horizon);
    engine.workload().set_max_shapes(config.max_workload_shapes);
    advisor.set_forecast_source([this] { return engine.limit_forecasts(); });
    advisor.set_workload_ledger(&engine.workload());
    persona.max_message_bytes = config.max_message_bytes;
    conversation.max_message_bytes = config.max_message_bytes;
    conversation.refusals.reveal_rule_source = config.reveal_rule_source;
    // upstream_auth: none judges every command; otherwise connections read the flag, which
    // stays set (required, or credentials in the URI) or follows the probe (server.cc).
    if (config.upstream_auth != settings::UpstreamAuth::kNone) {
      conversation.upstream_requires_auth = &upstream_requires_auth;
    }
    // A driver that reached docguard through a socket is told that socket's path as the
    // member's address (hello's hosts, primary, me): told a TCP address instead, a driver
    // following the replica set would leave the socket for it.
    for (const auto& unix_socket : config.listen_unix) {
      unix_conversations.push_back(conversation);
      unix_conversations.back().persona.advertised_address = unix_socket.path;
    }
  }

  const ProxyConfig config;  // settings fixed for the process's life; rules reload in `engine`
  // Whether the upstream answers only authenticated connections (upstream_auth): set until an
  // answer says otherwise. Declared before the conversation settings that point at it.
  std::atomic<bool> upstream_requires_auth{true};
  // The admin token in force: the start's, replaced by a reload that resolves another one
  // (admin.token_file rotated, the file's admin.token changed). Read and written on the main io
  // thread only, where the admin listener and the reload both run.
  std::string admin_token = config.admin_token;
  telemetry::Metrics metrics;
  advisor::LiveAdvisor advisor;  // live design advisor: GET /report, docguard_findings
  // Reports what it measures to `metrics` and what the advisor reads to `advisor`.
  rules::Engine engine;
  IntrospectionMetrics introspection_metrics;
  telemetry::LimitEtaGauge limit_etas;  // docguard_limit_eta_seconds, refreshed at scrape time
  // docguard's own reads of the cluster (null when introspection.enabled is false); started
  // with the monitor, stopped before it.
  std::unique_ptr<introspection::Introspector> introspector;
  conversation::ConversationSettings conversation;  // every session's per-message policy
  // The same for the clients of each Unix socket (config.listen_unix, in order); never resized
  // after construction, so sessions may keep references.
  std::vector<conversation::ConversationSettings> unix_conversations;
  TlsContexts tls;
  // The traffic recorder: sessions hand it their messages while active() (recorder.h).
  recording::Recorder recorder;
  // Set at startup, before any session: the topology monitor and server selection.
  std::unique_ptr<Router> router;
  std::atomic<int64_t> active_sessions{0};
  RequestIds request_ids;
};

}  // namespace docguard::proxy
