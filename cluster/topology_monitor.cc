#include "docguard/cluster/topology_monitor.h"

#include <mongoc/mongoc.h>

#include <atomic>
#include <condition_variable>
#include <map>
#include <mutex>
#include <optional>
#include <thread>

#include "describe.h"

namespace docguard::cluster {
namespace {

using Clock = std::chrono::steady_clock;

// The monitor's own selections time out after this long so that the selection thread notices
// shutdown promptly; the URI's serverSelectionTimeoutMS is kept for counting failures.
constexpr int32_t kMonitorSelectionTimeoutMs = 1000;

}  // namespace

struct TopologyMonitor::Impl {
  UpstreamUri uri;
  MonitorOptions options;
  mongoc_uri_t* mongoc_uri = nullptr;
  mongoc_client_pool_t* pool = nullptr;
  mongoc_client_t* client = nullptr;  // popped once, kept: it starts background monitoring

  // The published snapshot and what the next one is compared against.
  mutable std::mutex mu;
  mutable std::condition_variable changed;  // on every publish and on shutdown
  std::shared_ptr<const Topology> current = std::make_shared<Topology>();
  std::vector<std::string> last_nonempty_writable;
  MonitorCounters counters;  // selection_failures: outages already over (see failures_now)
  // Start of the current period without a writable server (the monitor starts without one).
  std::optional<Clock::time_point> unwritable_since = Clock::now();
  bool stopping = false;
  bool check_requested = false;
  mongoc_read_prefs_t* no_server_matches = nullptr;  // see select_loop

  // Subscribers. notify_mu serialises notifications (order) and lets unsubscribe() wait for one
  // in flight; subs_mu guards the map so that callbacks may (un)subscribe.
  std::mutex notify_mu;
  std::atomic<std::thread::id> notifying{};
  std::mutex subs_mu;
  std::map<uint64_t, Callback> subscribers;
  uint64_t next_id = 1;

  std::thread selector;

  ~Impl() {
    {
      std::lock_guard lock(mu);
      stopping = true;
    }
    changed.notify_all();
    if (selector.joinable()) selector.join();
    // Pool destruction joins libmongoc's monitor threads; `stopping` makes any last event a no-op.
    if (client) mongoc_client_pool_push(pool, client);
    if (pool) mongoc_client_pool_destroy(pool);
    if (mongoc_uri) mongoc_uri_destroy(mongoc_uri);
    if (no_server_matches) mongoc_read_prefs_destroy(no_server_matches);
  }

  static void on_topology_changed(const mongoc_apm_topology_changed_t* event) {
    auto* self = static_cast<Impl*>(mongoc_apm_topology_changed_get_context(event));
    self->publish(describe(mongoc_apm_topology_changed_get_new_description(event),
                           self->uri.local_threshold));
  }

  void publish(Topology next) {
    std::shared_ptr<const Topology> snap;
    {
      std::lock_guard lock(mu);
      if (stopping) return;
      ++counters.topology_events;
      next.primary_generation = current->primary_generation;
      if (next.writable != current->writable) {
        ++next.primary_generation;
        if (next.writable.empty()) {
          unwritable_since = Clock::now();
        } else if (unwritable_since) {
          counters.selection_failures = failures_now();
          unwritable_since.reset();
        }
        if (!next.writable.empty()) {
          if (!last_nonempty_writable.empty() && next.writable != last_nonempty_writable) {
            ++counters.primary_changes;
          }
          last_nonempty_writable = next.writable;
        }
      }
      next.updated_at = std::chrono::system_clock::now();
      current = std::make_shared<const Topology>(std::move(next));
      snap = current;
    }
    changed.notify_all();
    notify(snap);
  }

  void notify(const std::shared_ptr<const Topology>& snap) {
    std::lock_guard order(notify_mu);
    notifying = std::this_thread::get_id();
    std::vector<Callback> callbacks;
    {
      std::lock_guard lock(subs_mu);
      for (const auto& [id, cb] : subscribers) callbacks.push_back(cb);
    }
    for (const auto& cb : callbacks) cb(snap);
    notifying = std::thread::id{};
  }

  // Counted from the clock rather than from the selection thread's own (1 s, imprecise)
  // selections: one failure per full serverSelectionTimeoutMS without a writable server.
  uint64_t failures_now() const {
    uint64_t n = counters.selection_failures;
    if (unwritable_since && uri.server_selection_timeout.count() > 0) {
      n += static_cast<uint64_t>((Clock::now() - *unwritable_since) / uri.server_selection_timeout);
    }
    return n;
  }

  // The selection thread: keeps a write selection pending while nothing is writable (see
  // MonitorOptions::select_while_unwritable) and runs the checks request_check() asks for. It is
  // the only user of `client` while it runs.
  void select_loop() {
    std::unique_lock lock(mu);
    while (!stopping) {
      const bool check = check_requested;
      if (!check && !(options.select_while_unwritable && !current->has_writable())) {
        changed.wait(lock, [&] {
          return stopping || check_requested ||
                 (options.select_while_unwritable && !current->has_writable());
        });
        continue;
      }
      check_requested = false;
      lock.unlock();
      bson_error_t err{};
      // A write selection waits for a primary/mongos/standalone. A check selects with a read
      // preference no server matches (a tag nobody has), which in a replica set makes libmongoc
      // ask every monitor for an immediate heartbeat, the public API's only way to do so; in
      // Single and Sharded topologies read preferences are ignored and it returns at once.
      // Either blocks at most kMonitorSelectionTimeoutMs.
      mongoc_server_description_t* sd =
          mongoc_client_select_server(client, !check, check ? no_server_matches : nullptr, &err);
      lock.lock();
      if (sd) {
        mongoc_server_description_destroy(sd);
        // Selected, but the event may still be on its way (or Single to a secondary can never
        // become writable): pause rather than spin.
        if (!check) changed.wait_for(lock, std::chrono::milliseconds(100));
      }
    }
  }
};

TopologyMonitor::TopologyMonitor(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
TopologyMonitor::~TopologyMonitor() = default;

Expected<std::unique_ptr<TopologyMonitor>> TopologyMonitor::start(const UpstreamUri& uri,
                                                                  MonitorOptions options) {
  ensure_mongoc_initialized();
  auto impl = std::make_unique<Impl>();
  impl->uri = uri;
  impl->options = std::move(options);

  bson_error_t err{};
  impl->mongoc_uri = mongoc_uri_new_with_error(uri.uri.c_str(), &err);
  if (!impl->mongoc_uri) {
    return Error{ErrorKind::kConfiguration, ErrorSource::kConfiguration,
                 std::string("invalid upstream URI: ") + err.message};
  }
  mongoc_uri_set_option_as_int32(impl->mongoc_uri, MONGOC_URI_SERVERSELECTIONTIMEOUTMS,
                                 kMonitorSelectionTimeoutMs);

  // Resolves mongodb+srv:// (SRV and TXT records) and applies the URI's TLS options.
  impl->pool = mongoc_client_pool_new_with_error(impl->mongoc_uri, &err);
  if (!impl->pool) {
    // A DNS failure of a mongodb+srv:// name: the name or the DNS is at fault.
    return Error{ErrorKind::kConnect, ErrorSource::kUpstream,
                 std::string("cannot monitor upstream ") + uri.redacted + ": " + err.message,
                 uri.is_srv ? "mongodb+srv" : ""};
  }
  if (!mongoc_uri_get_appname(impl->mongoc_uri) && !impl->options.app_name.empty()) {
    mongoc_client_pool_set_appname(impl->pool, impl->options.app_name.c_str());
  }
  // Callbacks must be set before the first pop; the first pop starts the monitor threads.
  mongoc_apm_callbacks_t* cbs = mongoc_apm_callbacks_new();
  mongoc_apm_set_topology_changed_cb(cbs, &Impl::on_topology_changed);
  mongoc_client_pool_set_apm_callbacks(impl->pool, cbs, impl.get());
  mongoc_apm_callbacks_destroy(cbs);  // the pool keeps a copy
  impl->client = mongoc_client_pool_pop(impl->pool);

  // A TXT record can turn on loadBalanced after parse_upstream_uri checked the string.
  if (mongoc_uri_get_option_as_bool(mongoc_client_get_uri(impl->client), MONGOC_URI_LOADBALANCED,
                                    false)) {
    return Error{ErrorKind::kNotSupported, ErrorSource::kUpstream,
                 "upstream " + uri.redacted +
                     ": the DNS TXT record sets loadBalanced=true, which docguard cannot serve",
                 "loadBalanced"};
  }
  impl->no_server_matches = mongoc_read_prefs_new(MONGOC_READ_SECONDARY);
  bson_t tags = BSON_INITIALIZER;
  bson_t tag;
  BSON_APPEND_DOCUMENT_BEGIN(&tags, "0", &tag);
  BSON_APPEND_UTF8(&tag, "docguard-check", "no server has this tag");
  bson_append_document_end(&tags, &tag);
  mongoc_read_prefs_set_tags(impl->no_server_matches, &tags);
  bson_destroy(&tags);

  Impl* raw = impl.get();
  impl->selector = std::thread([raw] { raw->select_loop(); });
  return std::unique_ptr<TopologyMonitor>(new TopologyMonitor(std::move(impl)));
}

std::shared_ptr<const Topology> TopologyMonitor::snapshot() const {
  std::lock_guard lock(impl_->mu);
  return impl_->current;
}

std::string TopologyMonitor::pick_writable(uint64_t spread) const {
  return snapshot()->pick_writable(spread);
}

uint64_t TopologyMonitor::subscribe(Callback callback) {
  std::lock_guard lock(impl_->subs_mu);
  const uint64_t id = impl_->next_id++;
  impl_->subscribers.emplace(id, std::move(callback));
  return id;
}

void TopologyMonitor::unsubscribe(uint64_t id) {
  {
    std::lock_guard lock(impl_->subs_mu);
    impl_->subscribers.erase(id);
  }
  // Wait out a notification in flight, unless this is that notification calling us.
  if (impl_->notifying.load() != std::this_thread::get_id()) {
    std::lock_guard order(impl_->notify_mu);
  }
}

std::shared_ptr<const Topology> TopologyMonitor::wait_for(
    const std::function<bool(const Topology&)>& pred, std::chrono::milliseconds timeout) const {
  std::unique_lock lock(impl_->mu);
  impl_->changed.wait_for(lock, timeout, [&] { return impl_->stopping || pred(*impl_->current); });
  return impl_->current;
}

void TopologyMonitor::request_check() {
  {
    std::lock_guard lock(impl_->mu);
    impl_->check_requested = true;
  }
  impl_->changed.notify_all();
}

MonitorCounters TopologyMonitor::counters() const {
  std::lock_guard lock(impl_->mu);
  MonitorCounters c = impl_->counters;
  c.selection_failures = impl_->failures_now();
  return c;
}

const UpstreamUri& TopologyMonitor::uri() const { return impl_->uri; }

}  // namespace docguard::cluster
