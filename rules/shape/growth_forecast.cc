#include "docguard/rules/growth_forecast.h"

#include <algorithm>
#include <functional>
#include <map>
#include <tuple>

namespace docguard::rules {

std::optional<double> growth_rate(std::span<const GrowthSample> series, double now,
                                  const RateRequirements& requirements) {
  if (series.size() < std::max<size_t>(requirements.min_samples, 2)) return std::nullopt;
  // Measured from the second sample: the first is where the history started (an insert, a
  // read, introspection), and the quiet time before the first push is no growth history.
  const double span = now - series[1].seconds;
  if (!(span > 0)) return std::nullopt;
  // The recent half: from the newest sample that is at least half the span old (the second
  // sample always qualifies).
  const double middle = now - span / 2;
  size_t start = 1;
  for (size_t i = 2; i < series.size(); ++i) {
    if (series[i].seconds <= middle) start = i;
  }
  const double window = now - series[start].seconds;
  if (!(window >= requirements.min_window_seconds) || !(window > 0)) return std::nullopt;
  const double growth = series.back().length - series[start].length;
  if (!(growth > 0)) return std::nullopt;
  return growth / window;
}

std::optional<double> seconds_until(double current, double bound, double rate) {
  if (!(bound > 0) || !(rate > 0)) return std::nullopt;
  if (current >= bound) return 0.0;
  return (bound - current) / rate;
}

double fastest_median(std::vector<double> rates, size_t top) {
  if (rates.empty() || top == 0) return 0;
  const size_t n = std::min(top, rates.size());
  std::partial_sort(rates.begin(), rates.begin() + static_cast<std::ptrdiff_t>(n), rates.end(),
                    std::greater<>());
  // The median of the n fastest (the mean of the middle two for an even n).
  return n % 2 == 1 ? rates[n / 2] : (rates[n / 2 - 1] + rates[n / 2]) / 2;
}

void GrowthSeries::append(double seconds, uint32_t length) {
  if (size_ > 0) {
    const double last = base_ + static_cast<double>(offsets_[size_ - 1]);
    if (seconds <= last) {
      // The same moment (statements of one command): one sample, the newest length.
      lengths_[size_ - 1] = length;
      return;
    }
  }
  if (size_ >= 3) {
    // Samples a small part of the history apart say nothing more: the newest one moves on
    // instead, so frequent pushes rarely thin the series (and cost a few instructions each).
    const double span = seconds - (base_ + static_cast<double>(offsets_[1]));
    const double previous = base_ + static_cast<double>(offsets_[size_ - 2]);
    if (seconds - previous < span / (2 * kCapacity)) {
      offsets_[size_ - 1] = static_cast<float>(seconds - base_);
      lengths_[size_ - 1] = length;
      return;
    }
  }
  if (size_ == kCapacity) {
    // Thinned, not shifted: the sample whose neighbours are closest goes, so the samples stay
    // spread over the whole history. The first two (where it started, the first push) and the
    // newest always stay.
    size_t drop = 2;
    for (size_t i = 3; i + 1 < kCapacity; ++i) {
      if (offsets_[i + 1] - offsets_[i - 1] < offsets_[drop + 1] - offsets_[drop - 1]) drop = i;
    }
    for (size_t i = drop; i + 1 < kCapacity; ++i) {
      offsets_[i] = offsets_[i + 1];
      lengths_[i] = lengths_[i + 1];
    }
    size_ = kCapacity - 1;
  }
  offsets_[size_] = static_cast<float>(seconds - base_);
  lengths_[size_] = length;
  ++size_;
}

void GrowthSeries::restart(double seconds, uint32_t length) {
  base_ = seconds;
  size_ = 0;
  bounded_ = false;
  shrank_ = false;
  append(seconds, length);
}

void GrowthSeries::observe(double seconds, uint32_t length) {
  if (size_ == 0) {
    restart(seconds, length);
    return;
  }
  if (length < last_length() && size_ >= 2 && length >= lengths_[size_ - 2]) {
    // Between the last two lengths: a read that raced the last push (the read saw the document
    // before it landed), not a trim. It says nothing new.
    return;
  }
  if (length < last_length()) {
    // Trimmed ($pop, $pull, $slice in a write docguard did not see): the application bounds
    // it. The series keeps only this length; the flag stays until the array is written whole.
    shrank_ = true;
    base_ = seconds;
    size_ = 0;
  }
  append(seconds, length);
}

void GrowthSeries::undo_last(uint32_t length) {
  if (size_ > 0) lengths_[size_ - 1] = length;
}

std::optional<double> GrowthSeries::rate(double now, const RateRequirements& requirements) const {
  if (!forecastable()) return std::nullopt;
  std::array<GrowthSample, kCapacity> samples;
  for (size_t i = 0; i < size_; ++i) samples[i] = sample(i);
  return growth_rate(std::span<const GrowthSample>(samples.data(), size_), now, requirements);
}

const char* limit_name(ForecastLimit limit) {
  switch (limit) {
    case ForecastLimit::kArrayLength:
      return "array_length";
    case ForecastLimit::kDocumentBytes:
      return "document_bytes";
    case ForecastLimit::kMaxBsonSize:
      return "16MB";
  }
  return "?";
}

std::array<std::optional<double>, kForecastLimits> forecast_limits(const DocumentGrowth& g) {
  std::array<std::optional<double>, kForecastLimits> eta;
  eta[static_cast<size_t>(ForecastLimit::kArrayLength)] =
      seconds_until(g.length, g.array_bound, g.rate);
  if (g.document_bytes > 0 && g.bytes_per_element > 0) {
    const double bytes_per_second = g.rate * g.bytes_per_element;
    eta[static_cast<size_t>(ForecastLimit::kDocumentBytes)] =
        seconds_until(g.document_bytes, g.document_bound, bytes_per_second);
    eta[static_cast<size_t>(ForecastLimit::kMaxBsonSize)] =
        seconds_until(g.document_bytes, kMaxBsonDocumentBytes, bytes_per_second);
  }
  return eta;
}

std::vector<PathForecast> summarize_forecasts(const std::vector<DocumentGrowth>& documents) {
  using PathKey = std::tuple<std::string_view, std::string_view, std::string_view>;
  std::map<PathKey, std::vector<double>> rates;
  std::map<std::tuple<std::string_view, std::string_view, std::string_view, ForecastLimit>,
           PathForecast>
      soonest;
  for (const DocumentGrowth& g : documents) {
    if (!(g.rate > 0)) continue;
    rates[{g.db, g.coll, g.field}].push_back(g.rate);
    const auto eta = forecast_limits(g);
    for (size_t i = 0; i < kForecastLimits; ++i) {
      if (!eta[i]) continue;
      const auto limit = static_cast<ForecastLimit>(i);
      auto [it, added] = soonest.try_emplace({g.db, g.coll, g.field, limit});
      PathForecast& p = it->second;
      if (!added && p.eta_seconds <= *eta[i]) continue;
      p.db = g.db;
      p.coll = g.coll;
      p.field = g.field;
      p.limit = limit;
      p.eta_seconds = *eta[i];
      p.rate = g.rate;
      p.length = g.length;
      p.id = g.id;
      if (limit == ForecastLimit::kArrayLength) {
        p.bound = g.array_bound;
      } else {
        p.bound = limit == ForecastLimit::kDocumentBytes ? g.document_bound : kMaxBsonDocumentBytes;
        p.bytes_per_second = g.rate * g.bytes_per_element;
      }
    }
  }
  std::vector<PathForecast> out;
  out.reserve(soonest.size());
  for (auto& [key, p] : soonest) {
    const auto& r = rates[{p.db, p.coll, p.field}];
    p.namespace_rate = fastest_median(r);
    p.growing_documents = r.size();
    out.push_back(std::move(p));
  }
  std::stable_sort(out.begin(), out.end(), [](const PathForecast& a, const PathForecast& b) {
    return a.eta_seconds < b.eta_seconds;
  });
  return out;
}

}  // namespace docguard::rules
