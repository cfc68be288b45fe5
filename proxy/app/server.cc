#include "docguard/proxy/server.h"

#include <spdlog/spdlog.h>
#include <sys/socket.h>
#include <unistd.h>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <optional>
#include <thread>

#include "docguard/cluster/topology_monitor.h"
#include "docguard/proxy/admin_server.h"
#include "docguard/proxy/background_tasks.h"
#include "docguard/proxy/coroutines.h"
#include "docguard/proxy/listeners.h"
#include "docguard/proxy/runtime.h"
#include "docguard/proxy/session.h"
#include "docguard/proxy/session_registry.h"
#include "docguard/proxy/upstream_auth_probe.h"
#include "docguard/settings/introspection_target.h"

namespace docguard::proxy {

namespace {

// Owns the io_contexts (one per thread: a connection lives on one thread, so a session needs
// no locks), starts the listeners, the monitor and introspection, hands accepted connections to
// io threads, and stops on a signal after draining. What else the process does on the side is in
// background_tasks.h; the live sessions are in a SessionRegistry.
class Server {
 public:
  explicit Server(ProxyConfig config) : runtime_(std::move(config)) {
    unsigned n = runtime_.config.threads;
    if (n == 0) n = std::max(1u, std::thread::hardware_concurrency());
    // One thread per context, and a socket is registered, used and closed only on its own
    // context's thread (the listeners hand over bare descriptors): the reactor's per-socket lock
    // guards nothing, so it is left out. Posting between contexts stays locked.
    for (unsigned i = 0; i < n; ++i) {
      contexts_.push_back(
          std::make_unique<asio::io_context>(BOOST_ASIO_CONCURRENCY_HINT_UNSAFE_IO));
    }
  }

  int run() {
    auto& main = *contexts_[0];
    std::optional<ClientListeners> listeners;
    tcp::acceptor admin(main);
    try {
      listeners.emplace(main, runtime_.config);
    } catch (const std::exception& e) {
      spdlog::critical("{}", e.what());
      return 2;
    }
    try {
      open_tcp_listener(admin, runtime_.config.admin);
    } catch (const std::exception& e) {
      spdlog::critical("admin endpoint: {}", e.what());
      return 2;
    }
    if (!start_monitor(main)) return 2;
    start_auth_probe();
    if (runtime_.config.introspection.enabled) {
      try {
        runtime_.introspector = std::make_unique<introspection::Introspector>(
            runtime_.config.introspection, settings::introspection_target(runtime_.config),
            runtime_.advisor, runtime_.engine, runtime_.introspection_metrics);
      } catch (const std::exception& e) {
        spdlog::critical("cannot read the cluster: {}", e.what());
        return 2;
      }
      runtime_.introspector->start();
    }
    spdlog::info("docguard {} listening on {}, upstream {}, admin http://{}/metrics, {} threads",
                 DOCGUARD_VERSION, listeners->describe(), runtime_.router->uri().redacted,
                 runtime_.config.admin.to_string(), contexts_.size());
    if (settings::admin_open_without_token(runtime_.config)) {
      // Accepted by admin.allow_without_token; said once here and in /status.
      spdlog::warn(
          "admin API on {} is open: any host that reaches it may use it without a token "
          "(admin.allow_without_token: true); set admin.token_file to close it",
          runtime_.config.admin.to_string());
    }

    if (runtime_.config.recording.enabled) {
      // A recording that cannot start leaves the proxy serving: recording is never a reason
      // for traffic to stop; GET /recording tells why.
      if (const auto started = runtime_.recorder.start(runtime_.config.recording); !started) {
        spdlog::error("recording not started: {}", started.error().message);
      }
    }
    listeners->start([this](AcceptedClient client) { admit(client); });
    asio::co_spawn(main, serve_admin(admin, runtime_), asio::detached);

    asio::signal_set signals(main, SIGINT, SIGTERM, SIGHUP);
    std::function<void(const boost::system::error_code&, int)> on_signal =
        [&](const boost::system::error_code& ec, int signo) {
          if (ec) return;
          if (signo == SIGHUP) {
            reload_rules(runtime_);
            signals.async_wait(on_signal);
            return;
          }
          spdlog::info("signal {}: draining connections (up to {} ms)", signo,
                       runtime_.config.shutdown_timeout.count());
          boost::system::error_code ignored;
          listeners->close();  // removes the socket files too
          admin.close(ignored);
          sessions_.drain_all();
          asio::co_spawn(main, wait_for_drain(), asio::detached);
        };
    signals.async_wait(on_signal);

    // Each io thread frees the spare large receive block it keeps, once unused for a while;
    // the first also hands free heap memory back to the system.
    for (size_t i = 0; i < contexts_.size(); ++i) {
      asio::co_spawn(*contexts_[i], release_spare_memory(i == 0), asio::detached);
    }

    std::vector<std::thread> threads;
    std::vector<asio::executor_work_guard<asio::io_context::executor_type>> guards;
    for (auto& ctx : contexts_) guards.push_back(asio::make_work_guard(*ctx));
    for (size_t i = 1; i < contexts_.size(); ++i) {
      threads.emplace_back([ctx = contexts_[i].get()] { ctx->run(); });
    }
    main.run();
    if (auth_prober_) auth_prober_->stop();
    if (runtime_.introspector) runtime_.introspector->stop();
    // No topology callback may post into the io_contexts once they stop.
    runtime_.router->monitor()->unsubscribe(subscription_);
    runtime_.router.reset();
    for (auto& g : guards) g.reset();
    for (auto& ctx : contexts_) ctx->stop();
    for (auto& t : threads) t.join();
    runtime_.recorder.stop();  // its queue written, its files closed with their checksums
    spdlog::info("docguard stopped");
    return 0;
  }

 private:
  // Starts following the upstream topology (libmongoc SDAM) before any io thread runs: a
  // mongodb+srv:// lookup blocks. Its notices are posted to `main`, never handled on
  // libmongoc's threads.
  bool start_monitor(asio::io_context& main) {
    route_libmongoc_log();
    cluster::UpstreamUri uri = runtime_.config.upstream;
    uri.uri = libmongoc_upstream_uri(runtime_.config);
    for (const auto& option : uri.ignored_options) {
      spdlog::warn(
          "upstream URI option {} has no effect through docguard: set it in the "
          "application's own connection string",
          option);
    }
    auto monitor = cluster::TopologyMonitor::start(uri);
    if (!monitor) {
      spdlog::critical("cannot follow the upstream {}: {}", uri.redacted, monitor.error().message);
      return false;
    }
    runtime_.router = std::make_unique<Router>(uri, std::move(monitor).value());
    subscription_ = runtime_.router->monitor()->subscribe(
        [this, &main](const std::shared_ptr<const cluster::Topology>& topology) {
          asio::post(main, [this, topology] { on_topology(topology); });
        });
    on_topology(runtime_.router->snapshot());  // events before subscribe() are not replayed
    return true;
  }

  // upstream_auth: auto, and no credentials in the URI to say so: docguard asks the upstream
  // itself, once before any client is accepted (so the first clients are judged as the answer
  // says), then on every change of the writable servers.
  void start_auth_probe() {
    const auto& config = runtime_.config;
    if (config.upstream_auth != settings::UpstreamAuth::kAuto || config.upstream.has_credentials ||
        !config.upstream.auth_mechanism.empty()) {
      if (config.upstream_auth != settings::UpstreamAuth::kNone) {
        spdlog::info(
            "upstream_auth: {}; a connection's commands are judged once it has "
            "authenticated",
            config.upstream_auth == settings::UpstreamAuth::kRequired
                ? "required"
                : "the upstream URI carries credentials");
      }
      return;
    }
    auth_prober_ = std::make_unique<UpstreamAuthProber>(
        libmongoc_upstream_uri(config), kAuthProbeTimeout, runtime_.upstream_requires_auth);
    auth_prober_->probe_now();
    auth_prober_->start();
  }

  // On the main io thread, in the order libmongoc raised them.
  void on_topology(const std::shared_ptr<const cluster::Topology>& topology) {
    if (!topology_reporter_.report(topology)) return;
    sessions_.announce(topology);
    if (auth_prober_ && (topology->writable != probed_writable_)) {
      probed_writable_ = topology->writable;
      auth_prober_->request();
    }
  }

  // On the main thread, for each accepted descriptor: counted against max_connections (every
  // listener together), then handed to an io thread round-robin.
  void admit(AcceptedClient client) {
    // At the limit, a connection that has not completed a message yet makes room (closed on
    // its thread, so the count passes the limit by the closes in flight, for a moment).
    if (runtime_.active_sessions.load() + handing_over_.load() >= runtime_.config.max_connections &&
        !sessions_.evict_silent()) {
      runtime_.metrics.connections_rejected.Increment();
      spdlog::warn("refusing connection: max_connections ({}) reached",
                   runtime_.config.max_connections);
      ::close(client.fd);
      return;
    }
    // Counted until its session exists, so a burst cannot pass max_connections.
    handing_over_.fetch_add(1);
    auto& ctx = *contexts_[next_context_++ % contexts_.size()];
    asio::post(ctx, [this, &ctx, client] { start_session(ctx, client); });
  }

  // On `ctx`'s own thread: the socket is registered with the reactor that serves it.
  void start_session(asio::io_context& ctx, const AcceptedClient& client) {
    // A Unix socket's descriptor goes into a tcp::socket as well: the session only receives,
    // sends, waits and closes through it, which are the same calls for both families, and it
    // leaves out what is TCP's alone (the peer's address, TCP_NODELAY, TLS). TCP sessions keep
    // their one socket type and code path.
    boost::system::error_code ec;
    tcp::socket socket(ctx);
    socket.assign(client.protocol, client.fd, ec);
    if (ec) {
      handing_over_.fetch_sub(1);
      ::close(client.fd);
      spdlog::error("accept failed: {}", ec.message());
      return;
    }
    std::optional<UnixSocketClient> unix_client;
    if (client.unix_socket) {
      const size_t i = *client.unix_socket;
      unix_client = UnixSocketClient{unix_peer_name(client.fd, runtime_.config.listen_unix[i].path),
                                     &runtime_.unix_conversations[i]};
    }
    auto session =
        std::make_shared<Session>(std::move(socket), session_context_, std::move(unix_client));
    handing_over_.fetch_sub(1);  // the session counts itself in active_sessions now
    sessions_.track(session);
    // run(session) holds the session and logs what ends it: no wrapper coroutine, whose frame
    // would live as long as the connection.
    asio::co_spawn(ctx, session->run(session), asio::detached);
  }

  awaitable<void> wait_for_drain() {
    const auto deadline = std::chrono::steady_clock::now() + runtime_.config.shutdown_timeout;
    asio::steady_timer timer(*contexts_[0]);
    while (runtime_.active_sessions.load() > 0 && std::chrono::steady_clock::now() < deadline) {
      timer.expires_after(std::chrono::milliseconds(20));
      co_await timer.async_wait(kUseTuple);
    }
    if (runtime_.active_sessions.load() > 0) {
      spdlog::warn("shutdown timeout: closing {} connections with requests in flight",
                   runtime_.active_sessions.load());
    }
    for (auto& ctx : contexts_) ctx->stop();
  }

  ProxyRuntime runtime_;
  const SessionContext session_context_ = session_context(runtime_);
  std::vector<std::unique_ptr<asio::io_context>> contexts_;
  uint64_t subscription_ = 0;
  // A probe's wait for the upstream: a down upstream delays the start no longer than this (the
  // prober's thread keeps asking).
  static constexpr std::chrono::milliseconds kAuthProbeTimeout{2'000};
  std::unique_ptr<UpstreamAuthProber> auth_prober_;  // upstream_auth: auto, without credentials
  std::vector<std::string> probed_writable_;         // main thread only: the last probe's
  TopologyReporter topology_reporter_{runtime_};     // main thread only
  SessionRegistry sessions_;
  std::atomic<int64_t> handing_over_{0};  // accepted descriptors not yet in a session
  size_t next_context_ = 0;               // main thread only: the next io thread to serve
};

}  // namespace

int run_server(ProxyConfig config) {
  std::unique_ptr<Server> server;
  try {
    server = std::make_unique<Server>(std::move(config));
  } catch (const std::exception& e) {
    spdlog::critical("cannot start: {}", e.what());
    return 2;
  }
  return server->run();
}

}  // namespace docguard::proxy
