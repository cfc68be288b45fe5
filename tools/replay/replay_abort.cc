// Stopping a replay whose target fails (replay_abort.h).
#include "replay_abort.h"

#include <fmt/format.h>

#include <algorithm>
#include <vector>

namespace docguard::tools {

void AbortWatch::add(bool error, bool answered, uint64_t micros) {
  std::lock_guard lock(mu_);
  ++requests_;
  if (abort_ || window_ == 0) return;
  samples_.push_back({error, answered, micros});
  errors_ += error ? 1 : 0;
  if (samples_.size() > window_) {
    errors_ -= samples_.front().error ? 1 : 0;
    samples_.pop_front();
  }
  check();
}

void AbortWatch::check() {
  // Judged over a whole window only: a first unlucky request is not a failing target.
  if (samples_.size() < window_) return;
  const double rate = static_cast<double>(errors_) / static_cast<double>(samples_.size());
  if (rate >= error_rate_) {
    abort_ = ReplayAbort{fmt::format("{} of the last {} requests failed (no answer, or ok: 0 where "
                                     "the recording has ok: 1), reaching --abort-error-rate {}",
                                     errors_, samples_.size(), error_rate_),
                         requests_};
  } else if (latency_micros_ > 0) {
    std::vector<uint64_t> latencies;
    for (const Sample& s : samples_) {
      if (s.answered) latencies.push_back(s.micros);
    }
    if (latencies.empty()) return;
    const auto middle = latencies.begin() + static_cast<std::ptrdiff_t>(latencies.size() / 2);
    std::nth_element(latencies.begin(), middle, latencies.end());
    if (static_cast<double>(*middle) > latency_micros_) {
      abort_ = ReplayAbort{
          fmt::format("the median replayed latency of the last {} requests was {:.1f} ms, above "
                      "--abort-latency {} ms",
                      samples_.size(), static_cast<double>(*middle) / 1000.0,
                      latency_micros_ / 1000.0),
          requests_};
    }
  }
  if (abort_) stopped_.store(true, std::memory_order_release);
}

std::optional<ReplayAbort> AbortWatch::result() const {
  std::lock_guard lock(mu_);
  return abort_;
}

}  // namespace docguard::tools
