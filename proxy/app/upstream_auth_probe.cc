#include "docguard/proxy/upstream_auth_probe.h"

#include <spdlog/spdlog.h>

namespace docguard::proxy {

namespace {

// A probe's wait for a server, and the pause before asking again while unanswered.
constexpr std::chrono::milliseconds kProbeTimeout{5'000};
constexpr std::chrono::milliseconds kRetryInterval{2'000};

}  // namespace

UpstreamAuthProber::UpstreamAuthProber(std::string uri, std::atomic<bool>& requires_auth)
    : uri_(std::move(uri)), requires_auth_(requires_auth) {}

UpstreamAuthProber::~UpstreamAuthProber() { stop(); }

void UpstreamAuthProber::probe_now(std::chrono::milliseconds timeout) {
  apply(cluster::probe_upstream_auth(uri_, static_cast<int>(timeout.count())));
}

void UpstreamAuthProber::start() {
  thread_ = std::thread([this] { run(); });
}

void UpstreamAuthProber::request() {
  {
    std::lock_guard lock(mutex_);
    requested_ = true;
  }
  wake_.notify_one();
}

void UpstreamAuthProber::stop() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_one();
  if (thread_.joinable()) thread_.join();
}

void UpstreamAuthProber::run() {
  std::unique_lock lock(mutex_);
  while (true) {
    if (answered_) {
      wake_.wait(lock, [this] { return requested_ || stopping_; });
    } else {
      wake_.wait_for(lock, kRetryInterval, [this] { return requested_ || stopping_; });
    }
    if (stopping_) return;
    requested_ = false;
    lock.unlock();
    const cluster::AuthProbeResult result =
        cluster::probe_upstream_auth(uri_, static_cast<int>(kProbeTimeout.count()));
    apply(result);
    lock.lock();
  }
}

void UpstreamAuthProber::apply(const cluster::AuthProbeResult& result) {
  const bool required = result.answer != cluster::AuthProbeAnswer::kNotRequired;
  {
    std::lock_guard lock(mutex_);
    answered_ = result.answer != cluster::AuthProbeAnswer::kUnknown;
  }
  requires_auth_.store(required, std::memory_order_relaxed);
  if (logged_ == result.answer) return;
  logged_ = result.answer;
  switch (result.answer) {
    case cluster::AuthProbeAnswer::kUnknown:
      spdlog::warn(
          "upstream_auth: cannot tell whether the upstream requires authentication ({}); until "
          "it answers, only authenticated connections are judged",
          result.message);
      break;
    case cluster::AuthProbeAnswer::kRequired:
      spdlog::info(
          "upstream_auth: the upstream requires authentication; a connection's commands are "
          "judged once it has authenticated");
      break;
    case cluster::AuthProbeAnswer::kNotRequired:
      spdlog::info(
          "upstream_auth: the upstream answers without authentication; every command "
          "is judged");
      break;
  }
}

}  // namespace docguard::proxy
