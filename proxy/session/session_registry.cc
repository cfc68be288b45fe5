#include "docguard/proxy/session_registry.h"

#include <boost/asio/post.hpp>

#include "docguard/proxy/session.h"

namespace docguard::proxy {

void SessionRegistry::track(const std::shared_ptr<Session>& session) {
  std::lock_guard lock(mutex_);
  if (++tracked_since_sweep_ > 1024) {
    sessions_.remove_if([](const auto& w) { return w.expired(); });
    tracked_since_sweep_ = 0;
  }
  sessions_.push_back(session);
}

void SessionRegistry::announce(const std::shared_ptr<const cluster::Topology>& topology) {
  std::lock_guard lock(mutex_);
  for (auto& weak : sessions_) {
    if (auto s = weak.lock()) {
      boost::asio::post(s->executor(), [s, topology] { s->on_topology(topology); });
    }
  }
}

void SessionRegistry::drain_all() {
  std::lock_guard lock(mutex_);
  for (auto& weak : sessions_) {
    if (auto s = weak.lock()) boost::asio::post(s->executor(), [s] { s->drain(); });
  }
}

bool SessionRegistry::evict_silent() {
  std::lock_guard lock(mutex_);
  // Tracked in order of arrival: the first found is the oldest. Clients that never completed a
  // message go first; then clients an upstream requiring authentication has not seen
  // authenticate (one ping and silence must not hold a slot either).
  for (const bool unauthenticated : {false, true}) {
    for (auto& weak : sessions_) {
      auto s = weak.lock();
      if (!s || !s->claim_for_eviction(unauthenticated)) continue;
      boost::asio::post(s->executor(), [s] { s->close_evicted(); });
      return true;
    }
  }
  return false;
}

}  // namespace docguard::proxy
