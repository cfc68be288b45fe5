// How fast an array grows and when it reaches its bounds: pure functions over a short time
// series of one array's lengths (growth_rate, seconds_until), the small fixed-size series the
// document tracker keeps per document and pushed array path (GrowthSeries), and what a
// document's growth means for its bounds (forecast_limits, summarize_forecasts).
//
// The rate is the growth over the recent half of what was observed, up to now: an array that
// stops growing sees its rate fall as time passes without pushes, and an array observed once,
// kept bounded by $slice or seen shrinking has no rate at all.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace docguard::rules {

// The server refuses a document larger than this (BSONObjMaxUserSize).
inline constexpr double kMaxBsonDocumentBytes = 16.0 * 1024 * 1024;

// One observation of an array's length, at `seconds` on a steady clock.
struct GrowthSample {
  double seconds = 0;
  double length = 0;
};

// What a rate needs before it is believed: an insert followed at once by a push or two would
// otherwise read as hundreds of elements per second.
struct RateRequirements {
  size_t min_samples = 3;         // observations, the first one included
  double min_window_seconds = 1;  // time the rate is measured over
};

// Elements per second at `now`, over the recent part of `series` (oldest first): from the
// newest sample at least half the span since the second sample old, up to now (the first
// sample is where the history started: the quiet time between an insert or a read and the
// first push is not counted). nullopt when there are too few samples, too little time, or no
// growth over that part.
std::optional<double> growth_rate(std::span<const GrowthSample> series, double now,
                                  const RateRequirements& requirements = {});

// Seconds until `current` reaches `bound` growing `rate` per second: 0 when it is there already,
// nullopt without a bound (<= 0) or a rate (<= 0).
std::optional<double> seconds_until(double current, double bound, double rate);

// A rate for a namespace and path that one runaway document does not make: the median of the
// `top` fastest rates. 0 for none.
double fastest_median(std::vector<double> rates, size_t top = 5);

// The lengths of one array over time since it was last written whole: at most kCapacity
// samples, thinned when full (the one whose neighbours are closest goes) so that they stay
// spread over the whole history.
class GrowthSeries {
 public:
  static constexpr size_t kCapacity = 8;

  // Written whole (insert, replacement, $set of the array): a new history.
  void restart(double seconds, uint32_t length);
  // A length seen at `seconds`: a push's result or a read of the stored document. A length
  // below the one before the last push means something trims the array: no forecast until it
  // is restarted (one between the last two is a read that raced the last push: ignored).
  void observe(double seconds, uint32_t length);
  // A push with $slice: the application keeps the array bounded, no forecast until restarted.
  void mark_bounded() { bounded_ = true; }
  // A refused push: the newest observation's length goes back to what is stored.
  void undo_last(uint32_t length);

  bool forecastable() const { return size_ > 0 && !bounded_ && !shrank_; }
  bool bounded() const { return bounded_; }
  bool shrank() const { return shrank_; }
  size_t size() const { return size_; }
  GrowthSample sample(size_t i) const {
    return {base_ + static_cast<double>(offsets_[i]), static_cast<double>(lengths_[i])};
  }
  uint32_t last_length() const { return size_ == 0 ? 0 : lengths_[size_ - 1]; }
  // growth_rate over the samples, or nullopt when not forecastable.
  std::optional<double> rate(double now, const RateRequirements& requirements = {}) const;

 private:
  void append(double seconds, uint32_t length);

  double base_ = 0;                         // seconds of the first sample
  std::array<float, kCapacity> offsets_{};  // seconds after base_
  std::array<uint32_t, kCapacity> lengths_{};
  uint8_t size_ = 0;
  bool bounded_ = false;
  bool shrank_ = false;
};

// Which bound a forecast is about; limit_name() is its metric label and report text.
enum class ForecastLimit : uint8_t { kArrayLength, kDocumentBytes, kMaxBsonSize };
inline constexpr size_t kForecastLimits = 3;
const char* limit_name(ForecastLimit limit);  // "array_length", "document_bytes", "16MB"

// One tracked document's growing array, as the tracker knows it at one moment.
struct DocumentGrowth {
  std::string db, coll, field;
  std::vector<uint8_t> id;       // BSON {_id: <value>}
  double length = 0;             // elements now (as far as docguard knows)
  double rate = 0;               // elements per second
  double document_bytes = 0;     // size now (0: unknown)
  double bytes_per_element = 0;  // from the pushes' measured sizes (0: unknown)
  double array_bound = 0;        // the rule's array length bound (0: none)
  double document_bound = 0;     // the rule's document size bound (0: none)
};

// Seconds until each limit (indexed by ForecastLimit), nullopt where there is no bound or no
// size to forecast it from.
std::array<std::optional<double>, kForecastLimits> forecast_limits(const DocumentGrowth& growth);

// Per namespace, field and limit: the soonest document and the namespace's robust rate.
struct PathForecast {
  std::string db, coll, field;
  ForecastLimit limit = ForecastLimit::kArrayLength;
  double bound = 0;             // in elements or bytes
  double eta_seconds = 0;       // the soonest document's
  double rate = 0;              // the soonest document's, in elements per second
  double bytes_per_second = 0;  // for size limits: rate x bytes per element
  double length = 0;            // the soonest document's length now
  double namespace_rate = 0;    // fastest_median of the path's documents, elements per second
  size_t growing_documents = 0;
  std::vector<uint8_t> id;  // the soonest document's {_id: <value>}
};

// Groups per (db, coll, field, limit) and sorts soonest first.
std::vector<PathForecast> summarize_forecasts(const std::vector<DocumentGrowth>& documents);

}  // namespace docguard::rules
