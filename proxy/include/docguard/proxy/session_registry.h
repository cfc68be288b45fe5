// The live sessions of the process, for what reaches all of them: a topology notice and the
// drain at shutdown. Sessions live on different io threads; each notice is posted to a
// session's own thread, never run on the caller's.
#pragma once

#include <list>
#include <memory>
#include <mutex>

#include "docguard/cluster/topology.h"

namespace docguard::proxy {

class Session;

class SessionRegistry {
 public:
  // Thread-safe. Held weakly: a session that ends needs no call here.
  void track(const std::shared_ptr<Session>& session);
  // Posts `topology` to every live session (Session::on_topology on its thread).
  void announce(const std::shared_ptr<const cluster::Topology>& topology);
  // Posts Session::drain to every live session.
  void drain_all();
  // Chooses the oldest session whose client has not completed a message (else the oldest that
  // has not authenticated to an upstream requiring it) and posts its close; false when there is
  // none. At max_connections: clients that never speak, or speak without credentials, cannot
  // keep one that does out.
  bool evict_silent();

 private:
  std::mutex mutex_;
  std::list<std::weak_ptr<Session>> sessions_;
  size_t tracked_since_sweep_ = 0;  // ended sessions are swept out every 1,024 tracks
};

}  // namespace docguard::proxy
