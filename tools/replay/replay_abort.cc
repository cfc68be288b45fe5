// Stopping a replay whose target fails (replay_abort.h).
#include "replay_abort.h"

#include <fmt/format.h>

#include <algorithm>
#include <vector>

#include "docguard/codec/bson_elements.h"

namespace docguard::tools {

namespace {

struct WriteOutcome {
  bool ok = false;
  size_t write_errors = 0;
  bool write_concern_error = false;
  std::optional<int64_t> n;
};

WriteOutcome outcome_of(const codec::BsonView& reply) {
  WriteOutcome out;
  codec::BsonElements e(reply);
  while (e.next()) {
    if (e.key == "ok") {
      out.ok = e.holds_number() && e.as_double() == 1.0;
    } else if (e.key == "n" && e.holds_number()) {
      out.n = e.as_int64();
    } else if (e.key == "writeErrors" && e.holds_array()) {
      codec::BsonElements item(e.container());
      while (item.next()) ++out.write_errors;
    } else if (e.key == "writeConcernError") {
      out.write_concern_error = true;
    }
  }
  return out;
}

}  // namespace

bool replayed_reply_failed(const codec::BsonView& recorded, const codec::BsonView& live,
                           bool is_write) {
  if (recorded.empty()) return false;
  const WriteOutcome was = outcome_of(recorded);
  const WriteOutcome now = outcome_of(live);
  if (was.ok && !now.ok) return true;
  if (now.write_errors > was.write_errors) return true;
  if (now.write_concern_error && !was.write_concern_error) return true;
  return is_write && was.n && now.n && *now.n < *was.n;
}

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
    abort_ = ReplayAbort{fmt::format("{} of the last {} requests failed (no answer, ok: 0, write "
                                     "errors or a lower n where the recording has none), "
                                     "reaching --abort-error-rate {}",
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
