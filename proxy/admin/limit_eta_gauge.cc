#include "docguard/proxy/limit_eta_gauge.h"

#include <set>

namespace docguard::proxy {

LimitEtaGauge::LimitEtaGauge(prometheus::Registry& registry)
    : family_(prometheus::BuildGauge()
                  .Name("docguard_limit_eta_seconds")
                  .Help("Seconds until the soonest tracked document's growing array reaches a "
                        "limit (array_length, document_bytes: the rule's bounds; 16MB), at its "
                        "recent growth rate; the nearest few per namespace")
                  .Register(registry)) {}

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

}  // namespace docguard::proxy
