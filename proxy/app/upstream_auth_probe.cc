#include "docguard/proxy/upstream_auth_probe.h"

#include <spdlog/spdlog.h>

namespace docguard::proxy {

namespace {

// The pause before asking again while unanswered.
constexpr std::chrono::milliseconds kRetryInterval{2'000};

}  // namespace

UpstreamAuthProber::UpstreamAuthProber(const std::string& uri, std::chrono::milliseconds timeout,
                                       std::atomic<bool>& requires_auth)
    : prober_(uri, static_cast<int>(timeout.count())), requires_auth_(requires_auth) {}

UpstreamAuthProber::~UpstreamAuthProber() { stop(); }

void UpstreamAuthProber::probe_now() { apply(prober_.ask()); }

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
    apply(prober_.ask());
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
