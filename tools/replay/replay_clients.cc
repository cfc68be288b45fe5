// The replay's client slots and its live sessions, one per recorded lsid (replay_clients.h).
#include "replay_clients.h"

#include <algorithm>

namespace docguard::tools {

ReplayClients::ReplayClients(mongoc_client_pool_t* pool, size_t slots, size_t max_sessions)
    : pool_(pool), max_sessions_(max_sessions) {
  clients_.reserve(slots);
  for (size_t i = 0; i < slots; ++i) {
    auto client = std::make_unique<ReplayClient>();
    client->client = mongoc_client_pool_pop(pool_);
    clients_.push_back(std::move(client));
  }
  for (size_t i = slots; i > 0; --i) free_.push_back(i - 1);
}

ReplayClients::~ReplayClients() {
  // Sessions end only now: while the replay ran, no live session id was handed out twice.
  for (auto& [lsid, bound] : sessions_) mongoc_client_session_destroy(bound.session);
  for (auto& client : clients_) mongoc_client_pool_push(pool_, client->client);
}

size_t ReplayClients::acquire_slot() {
  std::lock_guard lock(mu_);
  // The first pass measured the connections open at once, and there are slots for them; should
  // the files have changed since, a connection shares the first slot (under its lock).
  if (free_.empty()) return 0;
  const size_t slot = free_.back();
  free_.pop_back();
  return slot;
}

void ReplayClients::release_slot(size_t slot) {
  std::lock_guard lock(mu_);
  if (std::find(free_.begin(), free_.end(), slot) != free_.end()) return;  // a shared slot
  // At the front: a slot that served a connection is taken again only when none is left
  // unused, so that while there are slots enough each recorded connection has its own.
  free_.insert(free_.begin(), slot);
}

ReplayClients::Bound ReplayClients::session_for(std::string_view recorded, size_t home,
                                                std::string& error) {
  std::lock_guard lock(mu_);
  const auto found = sessions_.find(recorded);
  if (found != sessions_.end()) return found->second;
  if (sessions_.size() >= max_sessions_) {
    ++refused_;
    error = "more recorded sessions than --max-sessions " + std::to_string(max_sessions_);
    return {};
  }
  ReplayClient& client = *clients_[home];
  std::lock_guard client_lock(client.mu);
  // Causal consistency off: libmongoc would add its own readConcern {afterClusterTime} to the
  // recorded commands, which a transaction's later statements must not carry.
  mongoc_session_opt_t* opts = mongoc_session_opts_new();
  mongoc_session_opts_set_causal_consistency(opts, false);
  bson_error_t bson_error;
  mongoc_client_session_t* session = mongoc_client_start_session(client.client, opts, &bson_error);
  mongoc_session_opts_destroy(opts);
  if (session == nullptr) {
    error = bson_error.message;
    return {};
  }
  const Bound bound{&client, session};
  sessions_.emplace(std::string(recorded), bound);
  return bound;
}

size_t ReplayClients::sessions() const {
  std::lock_guard lock(mu_);
  return sessions_.size();
}

uint64_t ReplayClients::sessions_refused() const {
  std::lock_guard lock(mu_);
  return refused_;
}

}  // namespace docguard::tools
