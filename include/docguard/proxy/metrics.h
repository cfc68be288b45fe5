// Prometheus metrics: every metric docguard exports is declared here, once.
#pragma once

#include <prometheus/counter.h>
#include <prometheus/family.h>
#include <prometheus/gauge.h>
#include <prometheus/histogram.h>
#include <prometheus/registry.h>

#include <array>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>

#include "docguard/rules/engine.h"

namespace docguard::proxy {

// Counters keyed by a small, fixed vocabulary (error kinds, compressors). Unknown keys past
// the cap collapse into "_other" so a hostile client cannot grow the label set.
class LabeledCounter {
 public:
  LabeledCounter(prometheus::Family<prometheus::Counter>& family, std::string label,
                 size_t max_values = 64)
      : family_(family), label_(std::move(label)), max_values_(max_values) {}
  prometheus::Counter& get(const std::string& value);

 private:
  prometheus::Family<prometheus::Counter>& family_;
  std::string label_;
  size_t max_values_;
  std::mutex mutex_;
  std::unordered_map<std::string, prometheus::Counter*> cache_;
};

class Metrics final : public rules::Observer {
  // First member: every metric below is registered in it during construction.
  std::shared_ptr<prometheus::Registry> registry_;
  prometheus::Family<prometheus::Counter>& message_bytes_;

 public:
  Metrics();

  std::string serialize() const;  // Prometheus text exposition format
  // Refreshes the gauges computed at scrape time from the engine's state.
  void update_array_gauges(const rules::Engine& engine);

  prometheus::Counter& connections_total;
  prometheus::Gauge& connections_active;
  prometheus::Counter& connections_rejected;
  prometheus::Counter& client_bytes;    // docguard_message_bytes_total{direction="client_to_upstream"}
  prometheus::Counter& upstream_bytes;  // docguard_message_bytes_total{direction="upstream_to_client"}
  prometheus::Counter& messages_blocked;
  prometheus::Histogram& inspection_seconds;
  LabeledCounter protocol_errors;  // {kind}
  LabeledCounter upstream_errors;  // {kind}
  LabeledCounter compressed_messages;  // {compressor}
  LabeledCounter config_reloads;  // {result}
  prometheus::Gauge& upstream_up;  // 1 when the upstream accepted the last connection attempt

  // rules::Observer: labels arrive already bounded by the rules engine.
  void on_command(std::string_view db, std::string_view coll, std::string_view command) override;
  void on_document_size(std::string_view db, std::string_view coll, std::string_view source,
                        double bytes) override;
  void on_array_length(std::string_view db, std::string_view coll, std::string_view field,
                       double length) override;
  void on_array_push(std::string_view db, std::string_view coll, std::string_view field,
                     double elements) override;
  void on_read(std::string_view db, std::string_view coll, bool with_lookup) override;
  void on_lookup(std::string_view db, std::string_view coll, std::string_view from) override;
  void on_violation(std::string_view db, std::string_view coll, std::string_view rule,
                    rules::Action action) override;

 private:
  prometheus::Family<prometheus::Counter>& commands_;
  prometheus::Family<prometheus::Histogram>& document_size_;
  prometheus::Family<prometheus::Histogram>& array_length_;
  prometheus::Family<prometheus::Counter>& array_push_;
  prometheus::Family<prometheus::Counter>& reads_;
  prometheus::Family<prometheus::Counter>& reads_with_lookup_;
  prometheus::Family<prometheus::Counter>& lookups_;
  prometheus::Family<prometheus::Counter>& violations_;
  prometheus::Family<prometheus::Gauge>& array_length_max_;
  prometheus::Family<prometheus::Gauge>& array_length_bound_;
};

}  // namespace docguard::proxy
