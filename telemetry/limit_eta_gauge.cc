#include "docguard/telemetry/limit_eta_gauge.h"

#include <set>

#include "docguard/telemetry/metric_families.h"

namespace docguard::telemetry {

LimitEtaGauge::LimitEtaGauge(prometheus::Registry& registry)
    : family_(register_family<prometheus::Gauge>(registry, family::kLimitEta)) {}

void LimitEtaGauge::update(const std::vector<rules::PathForecast>& forecasts,
                           size_t per_namespace) {
  std::map<prometheus::Labels, double> now;
  std::map<std::pair<std::string, std::string>, size_t> per_ns;
  for (const rules::PathForecast& f : forecasts) {
    if (now.size() >= kMaxSeries) break;
    size_t& n = per_ns[{f.db, f.coll}];
    if (n >= per_namespace) continue;  // soonest first: the nearest are already in
    ++n;
    now[{{"db", f.db},
         {"collection", f.coll},
         {"field", f.field},
         {"limit", rules::limit_name(f.limit)}}] = f.eta_seconds;
  }
  std::lock_guard lock(mutex_);
  for (auto it = series_.begin(); it != series_.end();) {
    if (now.count(it->first) != 0) {
      ++it;
      continue;
    }
    family_.Remove(it->second);
    it = series_.erase(it);
  }
  for (const auto& [labels, eta] : now) {
    auto& gauge = series_[labels];
    if (gauge == nullptr) gauge = &family_.Add(labels);
    gauge->Set(eta);
  }
}

size_t LimitEtaGauge::series() const {
  std::lock_guard lock(mutex_);
  return series_.size();
}

}  // namespace docguard::telemetry
