// upstream_auth: auto without credentials in the URI. docguard asks the upstream itself whether
// it answers a connection that has not authenticated (cluster/auth_probe.h), at startup and
// again whenever the topology changes (a new primary may be configured otherwise), and keeps
// the answer where every connection reads it (ConversationSettings::upstream_requires_auth).
// Until there is an answer, and while the upstream cannot be asked, the upstream counts as
// requiring authentication: docguard then judges only authenticated connections, which passes
// a request it would have judged rather than refuse one the server would not have judged.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include "docguard/cluster/auth_probe.h"

namespace docguard::proxy {

class UpstreamAuthProber {
 public:
  // `uri`: the upstream as docguard's own libmongoc clients reach it; each probe waits at most
  // `timeout` for it. `requires_auth` must outlive the prober.
  UpstreamAuthProber(const std::string& uri, std::chrono::milliseconds timeout,
                     std::atomic<bool>& requires_auth);
  ~UpstreamAuthProber();  // stop()
  UpstreamAuthProber(const UpstreamAuthProber&) = delete;
  UpstreamAuthProber& operator=(const UpstreamAuthProber&) = delete;

  // Asks once on the calling thread (startup, before clients come).
  void probe_now();
  // Starts the thread that asks again on request(), and every few seconds while unanswered.
  void start();
  // The topology changed: ask again. Non-blocking; any thread.
  void request();
  // Ends the thread (a probe under way finishes first, within its timeout).
  void stop();

 private:
  void run();
  // Stores the answer (an unknown one counts as required) and logs a change.
  void apply(const cluster::AuthProbeResult& result);

  cluster::AuthProber prober_;  // one client for every probe; used by one thread at a time
  std::atomic<bool>& requires_auth_;
  std::mutex mutex_;
  std::condition_variable wake_;
  bool requested_ = false;
  bool stopping_ = false;
  bool answered_ = false;  // the last probe decided (required or not)
  // The last answer logged: a line per change, not per probe. Probes run one at a time.
  std::optional<cluster::AuthProbeAnswer> logged_;
  std::thread thread_;
};

}  // namespace docguard::proxy
