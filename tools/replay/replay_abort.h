// Stopping a replay whose target fails (docs/recording.md, "Stopping early"): over the last
// --abort-window requests, the share of errors (replayed_reply_failed below) reaching
// --abort-error-rate, or the median replayed latency above --abort-latency.
#pragma once

#include <atomic>
#include <cstdint>
#include <deque>
#include <mutex>
#include <optional>
#include <string>

#include "docguard/codec/bson_view.h"
#include "docguard/tools/replay_command.h"

namespace docguard::tools {

// Whether an answered request failed where the recorded one did not: ok: 0 where the recording
// has ok: 1; more `writeErrors` than recorded, or a `writeConcernError` the recording has not (a
// write refused statement by statement still answers ok: 1); for a write, an `n` lower than
// recorded. `recorded` is empty when no reply was recorded: nothing to judge by then.
bool replayed_reply_failed(const codec::BsonView& recorded, const codec::BsonView& live,
                           bool is_write);

struct ReplayAbort {
  std::string reason;
  uint64_t after_requests = 0;  // requests sent when the replay stopped
};

class AbortWatch {
 public:
  explicit AbortWatch(const ReplayOptions& options)
      : window_(options.abort_window),
        error_rate_(options.abort_error_rate),
        latency_micros_(options.abort_latency_ms * 1000.0) {}

  // One request sent: whether it failed, and its replayed latency when it was answered.
  void add(bool error, bool answered, uint64_t micros);
  // True once the replay must stop: the reader sends nothing more.
  bool stopped() const { return stopped_.load(std::memory_order_acquire); }
  std::optional<ReplayAbort> result() const;

 private:
  struct Sample {
    bool error;
    bool answered;
    uint64_t micros;
  };
  void check();  // mu_ held

  const size_t window_;
  const double error_rate_;
  const double latency_micros_;  // 0: off
  mutable std::mutex mu_;
  std::deque<Sample> samples_;
  size_t errors_ = 0;
  uint64_t requests_ = 0;
  std::optional<ReplayAbort> abort_;
  std::atomic<bool> stopped_{false};
};

}  // namespace docguard::tools
