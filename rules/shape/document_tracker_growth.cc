// The document tracker's growth histories: what each push adds to a path's series, when a
// document's forecast first falls under the horizon, and the walk that hands every growing
// array to the forecast.
#include <algorithm>
#include <cmath>
#include <cstring>

#include "docguard/base/key_parts.h"
#include "docguard/rules/document_tracker.h"

namespace docguard::rules {

DocumentTracker::Growth& DocumentTracker::growth_of(Entry& e, size_t i, double now) {
  if (e.growth.size() <= i) e.growth.resize(i + 1);
  if (e.growth[i] == nullptr) e.growth[i] = std::make_unique<Growth>();
  Growth& g = *e.growth[i];
  if (g.series.size() == 0) {
    // The history starts with the length known before this push, when it was learned (an
    // insert, a read, introspection), so a long stored array starts from its stored length.
    const double since = e.recorded_at >= 0 && e.recorded_at <= now ? e.recorded_at : now;
    g.series.restart(since, e.lengths[i].second);
  }
  return g;
}

void DocumentTracker::note_push(Entry& e, size_t i, uint32_t before, uint32_t after,
                                uint32_t elements, std::optional<uint32_t> cap, Push& push) {
  // growth_of seeds a new history with the length before the push.
  e.lengths[i].second = before;
  Growth& g = growth_of(e, i, push.now);
  e.lengths[i].second = after;
  // Bounds come as the rules' smallest values: infinite where there is none.
  const auto stored_bound = [](double bound) {
    return std::isfinite(bound) && bound > 0
               ? static_cast<uint32_t>(std::min<double>(bound, UINT32_MAX))
               : uint32_t{0};
  };
  g.array_bound = stored_bound(push.array_bound);
  g.document_bound = stored_bound(push.document_bound);
  if (cap) {
    g.series.mark_bounded();
    return;
  }
  g.series.observe(push.now, after);
  if (push.bytes > 0 && elements > 0) {
    const float per_element = static_cast<float>(push.bytes) / static_cast<float>(elements);
    g.bytes_per_element =
        g.bytes_per_element > 0 ? 0.8F * g.bytes_per_element + 0.2F * per_element : per_element;
    if (e.document_bytes > 0) {
      e.document_bytes = static_cast<uint32_t>(
          std::min<uint64_t>(static_cast<uint64_t>(e.document_bytes) + push.bytes, UINT32_MAX));
    }
  }
  if (g.told || !(push.horizon > 0) || push.now < g.next_check) return;
  g.next_check = push.now + 1;
  const std::optional<double> rate = g.series.rate(push.now);
  if (!rate) return;
  DocumentGrowth d;
  d.length = after;
  d.rate = *rate;
  d.document_bytes = e.document_bytes;
  d.bytes_per_element = g.bytes_per_element;
  d.array_bound = g.array_bound;
  d.document_bound = g.document_bound;
  const auto eta = forecast_limits(d);
  for (size_t k = 0; k < kForecastLimits; ++k) {
    if (!eta[k] || *eta[k] >= push.horizon) continue;
    if (push.entered && push.entered->eta_seconds <= *eta[k]) continue;
    const auto limit = static_cast<ForecastLimit>(k);
    const double bound = limit == ForecastLimit::kArrayLength     ? d.array_bound
                         : limit == ForecastLimit::kDocumentBytes ? d.document_bound
                                                                  : kMaxBsonDocumentBytes;
    push.entered = EnteredHorizon{limit, *eta[k], *rate, bound};
  }
  if (push.entered) g.told = true;
}

void DocumentTracker::undo_grow(std::string_view key, std::string_view path, uint32_t elements,
                                uint32_t bytes) {
  const uint64_t hash = hash_of(key);
  Shard& s = shard_for(hash);
  std::lock_guard lock(s.mutex);
  const uint32_t index = find(s, hash, key, nullptr);
  if (index == kNone) return;
  Entry& e = s.entries[index];
  for (size_t i = 0; i < e.used_lengths; ++i) {
    auto& [p, l] = e.lengths[i];
    if (p != path) continue;
    l = l >= elements ? l - elements : 0;
    if (i < e.growth.size() && e.growth[i] != nullptr) e.growth[i]->series.undo_last(l);
    if (e.document_bytes > bytes) e.document_bytes -= bytes;
    return;
  }
}

namespace {

// The key is the database and the collection as key parts, then the _id's BSON type byte and its
// value bytes (make_key).
void describe_key(std::string_view key, DocumentGrowth& d) {
  const char* const end = key.data() + key.size();
  std::string_view db, coll;
  const char* at = base::read_key_part(key.data(), end, &db);
  if (at != nullptr) at = base::read_key_part(at, end, &coll);
  if (at == nullptr || at == end) return;
  d.db = std::string(db);
  d.coll = std::string(coll);
  // {_id: value}: int32 size, type, "_id\0", value, terminating NUL.
  const std::string_view value(at + 1, static_cast<size_t>(end - at - 1));
  const auto size = static_cast<int32_t>(4 + 1 + 4 + value.size() + 1);
  d.id.resize(static_cast<size_t>(size));
  std::memcpy(d.id.data(), &size, 4);  // BSON is little-endian, as is every target
  d.id[4] = static_cast<uint8_t>(*at);
  std::memcpy(d.id.data() + 5, "_id", 4);
  if (!value.empty()) std::memcpy(d.id.data() + 9, value.data(), value.size());
  d.id.back() = 0;
}

}  // namespace

std::vector<DocumentGrowth> DocumentTracker::growing_arrays(double now) const {
  std::vector<DocumentGrowth> out;
  for (const Shard& s : shards_) {
    std::lock_guard lock(s.mutex);
    for (uint32_t index = s.head; index != kNone; index = s.entries[index].next) {
      const Entry& e = s.entries[index];
      for (size_t i = 0; i < e.used_lengths && i < e.growth.size(); ++i) {
        const Growth* g = e.growth[i].get();
        if (g == nullptr) continue;
        const std::optional<double> rate = g->series.rate(now);
        if (!rate) continue;
        DocumentGrowth& d = out.emplace_back();
        describe_key(e.key, d);
        d.field = e.lengths[i].first;
        d.length = e.lengths[i].second;
        d.rate = *rate;
        d.document_bytes = e.document_bytes;
        d.bytes_per_element = g->bytes_per_element;
        d.array_bound = g->array_bound;
        d.document_bound = g->document_bound;
      }
    }
  }
  return out;
}

}  // namespace docguard::rules
