// The engine's side of the growth forecast: the time the tracker's histories are kept in, and the
// forecasts per namespace, field and limit for scrapes and reports (the shape check owns the
// tracker).
#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "engine_internal.h"

namespace docguard::rules {

double Engine::seconds_now() const {
  return std::chrono::duration<double>(now().time_since_epoch()).count();
}

std::vector<PathForecast> Engine::limit_forecasts() const {
  return shape_.forecasts(seconds_now());
}

}  // namespace docguard::rules
