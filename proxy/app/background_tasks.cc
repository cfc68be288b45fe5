#include "docguard/proxy/background_tasks.h"

#include <malloc.h>
#include <spdlog/spdlog.h>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <chrono>

#include "docguard/cluster/mongoc_log.h"
#include "docguard/cluster/upstream_uri.h"
#include "docguard/codec/inbound_buffer.h"
#include "docguard/settings/settings_reader.h"

namespace docguard::proxy {

namespace asio = boost::asio;

void route_libmongoc_log() {
  cluster::set_mongoc_log_handler(
      [](cluster::MongocLogLevel level, std::string_view domain, std::string_view message) {
        auto lvl = spdlog::level::trace;
        switch (level) {
          case cluster::MongocLogLevel::kError:
          case cluster::MongocLogLevel::kCritical:
            lvl = spdlog::level::err;
            break;
          case cluster::MongocLogLevel::kWarning:
            lvl = spdlog::level::warn;
            break;
          case cluster::MongocLogLevel::kMessage:
          case cluster::MongocLogLevel::kInfo:
            lvl = spdlog::level::debug;
            break;
          default:  // a line per failed heartbeat: trace only
            break;
        }
        // A URI quoted in a message (introspection's may hold a password) is redacted.
        spdlog::log(lvl, "libmongoc {}: {}", domain, cluster::redact_uri(message));
      });
}

namespace {

std::string join(const std::vector<std::string>& servers) {
  if (servers.empty()) return "(none)";
  std::string out;
  for (const auto& s : servers) out += (out.empty() ? "" : ",") + s;
  return out;
}

}  // namespace

bool TopologyReporter::report(const std::shared_ptr<const cluster::Topology>& topology) {
  if (last_ && topology->updated_at < last_->updated_at) return false;
  runtime_.metrics.set_topology_type(topology->type);
  const auto* monitor = runtime_.router ? runtime_.router->monitor() : nullptr;
  if (monitor != nullptr) {
    const auto counters = monitor->counters();
    if (counters.primary_changes > primary_changes_seen_) {
      runtime_.metrics.primary_changes.Increment(
          static_cast<double>(counters.primary_changes - primary_changes_seen_));
      primary_changes_seen_ = counters.primary_changes;
    }
  }
  const std::string before = last_ ? join(last_->writable) : "(none)";
  const std::string now = join(topology->writable);
  if (!last_ || before != now || last_->type != topology->type) {
    spdlog::info("upstream topology {}: writable {} -> {}", cluster::to_string(topology->type),
                 before, now);
  }
  last_ = topology;
  return true;
}

void reload_rules(ProxyRuntime& runtime) {
  const std::string& file = runtime.config.config_file;
  if (file.empty()) {
    spdlog::info("SIGHUP: no --config file to reload");
    return;
  }
  try {
    auto fresh = settings::load_config_file(file);
    // The listener stays where it is bound: the admin token the file (or its token file, or the
    // environment) gives now is checked against that address, so a reload that would leave it
    // open to other hosts without a token is refused like any invalid file.
    fresh.admin = runtime.config.admin;
    settings::settle_admin_access(fresh);
    runtime.engine.reload(fresh.rules);
    const bool token_changed = fresh.admin_token != runtime.admin_token;
    runtime.admin_token = std::move(fresh.admin_token);
    runtime.metrics.config_reloads.get("success").Increment();
    spdlog::info("reloaded rules from {}{}", file,
                 token_changed ? " (the admin token changed)" : "");
  } catch (const std::exception& e) {
    runtime.metrics.config_reloads.get("failure").Increment();
    spdlog::error("reload of {} failed, keeping the previous rules: {}", file, e.what());
  }
}

asio::awaitable<void> release_spare_memory(bool trim_heap) {
  asio::steady_timer timer(co_await asio::this_coro::executor);
  while (true) {
    timer.expires_after(std::chrono::seconds(5));
    auto [ec] = co_await timer.async_wait(asio::as_tuple(asio::use_awaitable));
    if (ec) co_return;
    codec::InboundBuffer::release_spare_if_unused(std::chrono::seconds(5));
    if (trim_heap) malloc_trim(0);
  }
}

}  // namespace docguard::proxy
