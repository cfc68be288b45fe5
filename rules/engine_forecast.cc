// The engine's side of the growth forecast: the time the tracker's histories are kept in, the
// log line for a document whose forecast falls under the horizon, and the forecasts per
// namespace, field and limit for scrapes and reports.
#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "engine_internal.h"

namespace docguard::rules {

double Engine::seconds_now() const {
  return std::chrono::duration<double>(now().time_since_epoch()).count();
}

void Engine::log_entered_horizon(const CommandPass& s, std::string_view field,
                                 const DocumentTracker::EnteredHorizon& entered, uint32_t length) {
  // Many documents of one collection may enter at once (a deploy that pushes more): one line a
  // second at most; the next line counts the ones left out.
  constexpr int64_t kIntervalMs = 1000;
  const int64_t now_ms = wall_ms();
  int64_t last = horizon_logged_ms_.load(std::memory_order_relaxed);
  if (now_ms - last < kIntervalMs ||
      !horizon_logged_ms_.compare_exchange_strong(last, now_ms, std::memory_order_relaxed)) {
    horizon_suppressed_.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  // Names and numbers only: document values (the _id included) never reach the log; /report
  // names the document.
  log::Fields fields;
  fields.add("ns", fmt::format("{}.{}", s.db, s.coll))
      .add("field", field)
      .add("limit", limit_name(entered.limit))
      .add("bound", entered.bound)
      .add("eta_seconds", std::round(entered.eta_seconds))
      .add("elements_per_second", entered.rate)
      .add("length", static_cast<double>(length))
      .add("horizon_seconds", forecast_horizon())
      .add("app", s.ctx.app_name)
      .add("suppressed_since_last",
           static_cast<int64_t>(horizon_suppressed_.exchange(0, std::memory_order_relaxed)));
  spdlog::warn("{}", fields.message("docguard array approaching its limit"));
}

std::vector<PathForecast> Engine::limit_forecasts() const {
  return summarize_forecasts(tracker_.growing_arrays(seconds_now()));
}

}  // namespace docguard::rules
