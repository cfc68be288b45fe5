// The replay's libmongoc clients and sessions. A recorded connection replays on a client slot of
// its own (the slot is free again when the connection ends, for a later connection when the
// recording has more connections than slots). Every recorded lsid gets one live
// session for the whole replay, started on the client of the connection that used it first and
// ended only when the replay ends: libmongoc returns an ended session to its pool and hands its
// id to the next one, and the replay must never send two recorded sessions' txnNumbers on one
// live lsid. A recorded session used later on another connection (a driver's session pool)
// keeps its live session: the command runs on that session's client, under the client's lock,
// so a transaction stays whole and a cursor is continued in the session that opened it.
#pragma once

#include <mongoc/mongoc.h>

#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

namespace docguard::tools {

// A client and the lock that lets any connection's thread use it.
struct ReplayClient {
  mongoc_client_t* client = nullptr;
  std::mutex mu;
};

class ReplayClients {
 public:
  // Pops `slots` clients from `pool` (which must allow that many).
  ReplayClients(mongoc_client_pool_t* pool, size_t slots, size_t max_sessions);
  ~ReplayClients();
  ReplayClients(const ReplayClients&) = delete;
  ReplayClients& operator=(const ReplayClients&) = delete;

  // A free slot for a recorded connection that starts; release it when the connection ends.
  size_t acquire_slot();
  void release_slot(size_t slot);
  ReplayClient& slot(size_t index) { return *clients_[index]; }
  size_t slots() const { return clients_.size(); }

  struct Bound {
    ReplayClient* client = nullptr;
    mongoc_client_session_t* session = nullptr;  // null: no session could be had (`error`)
  };
  // The live session of the recorded lsid `recorded` (its BSON bytes), started on `home`'s
  // client on first use.
  Bound session_for(std::string_view recorded, size_t home, std::string& error);

  // Live sessions started, and recorded lsids refused one past `max_sessions`.
  size_t sessions() const;
  uint64_t sessions_refused() const;

 private:
  mongoc_client_pool_t* pool_;
  std::vector<std::unique_ptr<ReplayClient>> clients_;
  mutable std::mutex mu_;
  std::vector<size_t> free_;  // free slots, lowest last: never-used slots are taken first
  std::map<std::string, Bound, std::less<>> sessions_;
  size_t max_sessions_;
  uint64_t refused_ = 0;
};

}  // namespace docguard::tools
