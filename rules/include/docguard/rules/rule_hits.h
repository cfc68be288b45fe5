// How often each rule decided a violation, kept across reloads.
//
// A rule is known by its `id:` when it has one, else by its key: its match glob and scope keys
// (rule_key). The engine keeps one RuleHitsTable per rule set; a reload builds the next table
// from the previous one, handing each rule whose id or key is unchanged the same RuleHits, so
// its counts go on; a rule no longer in the file is no longer in any table and its counts end.
//
// Counting is a few relaxed atomic operations on the deciding rule's RuleHits, reached from the
// Violation: no lock on the message path. Only a candidate rule's counts per client app take a
// mutex, and only when a candidate rule is broken.
#pragma once

#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "docguard/base/json_writer.h"
#include "docguard/rules/rule_set.h"

namespace docguard::rules {

class RuleHits {
 public:
  // One violation decided by the rule: `action` is the violation's (warn or block), `unix_ms`
  // the wall-clock time for "last hit".
  void count(Action action, int64_t unix_ms) {
    (action == Action::kBlock ? block_ : warn_).fetch_add(1, std::memory_order_relaxed);
    last_hit_ms_.store(unix_ms, std::memory_order_relaxed);
  }
  // Candidate rules only: the same count per client app label (already bounded by the engine).
  void count_app(std::string_view app, Action action);
  // True at most once per `interval` (steady clock), for rate-limited log lines; `suppressed`
  // gets how many calls returned false since the last true.
  bool should_log(std::chrono::steady_clock::time_point now, std::chrono::seconds interval,
                  uint64_t* suppressed);

  uint64_t warn() const { return warn_.load(std::memory_order_relaxed); }
  uint64_t block() const { return block_.load(std::memory_order_relaxed); }
  // 0: never hit.
  int64_t last_hit_ms() const { return last_hit_ms_.load(std::memory_order_relaxed); }
  struct AppCounts {
    std::string app;
    uint64_t warn = 0, block = 0;
  };
  std::vector<AppCounts> by_app() const;

 private:
  std::atomic<uint64_t> warn_{0}, block_{0};
  std::atomic<int64_t> last_hit_ms_{0};
  std::atomic<int64_t> last_log_ns_{0};  // steady clock; 0: never logged
  std::atomic<uint64_t> suppressed_{0};
  mutable std::mutex apps_mutex_;
  std::map<std::string, std::array<uint64_t, 2>, std::less<>> by_app_;  // [warn, block]
};

// "match=GLOB", then " apps=a,b", " users=u", " clients=10.0.0.0/8" for the scope keys the rule
// has, in that order: what the rule is known by when it has no id.
std::string rule_key(const Rule& rule);
// A Cidr as written in a config file: "10.0.0.0/8", "fd00::/8".
std::string cidr_text(const Cidr& cidr);

// The counters of one rule set's rules, by index in RuleSet::rules(). Immutable once built.
class RuleHitsTable {
 public:
  // Counters for `rules`, carried over from `previous` (may be null) for every rule whose id,
  // or key when it has none, is unchanged. Rules without an id that share a key are told apart
  // by their order among themselves ("#2", "#3").
  RuleHitsTable(const RuleSet& rules, const RuleHitsTable* previous);

  // The rule's counters; null for an index past the table.
  const std::shared_ptr<RuleHits>& at(uint32_t rule) const {
    static const std::shared_ptr<RuleHits> kNone;
    return rule < hits_.size() ? hits_[rule] : kNone;
  }
  size_t size() const { return hits_.size(); }
  // The rule's id, or "" when it is known by its key.
  const std::string& id(uint32_t rule) const { return ids_[rule]; }
  const std::string& key(uint32_t rule) const { return keys_[rule]; }
  int line(uint32_t rule) const { return lines_[rule]; }

 private:
  std::vector<std::shared_ptr<RuleHits>> hits_;
  std::vector<std::string> ids_, keys_;
  std::vector<std::string> identities_;  // "id:" + id or "key:" + key: what carries over
  std::vector<int> lines_;
};

// [{"id":..,"key":..,"line":N,"hits":{"warn":N,"block":N},"last_hit":"ISO 8601"|null}, ...],
// in file order.
void write_rule_hits(json::Writer& w, const RuleHitsTable& table);

// One candidate rule's verdicts per client app, for the live report.
struct CandidateVerdicts {
  std::string id;  // "" when the rule has none
  std::string key;
  int line = 0;
  struct App {
    std::string app;
    uint64_t would_block = 0, would_warn = 0;
  };
  std::vector<App> apps;  // only apps the rule was broken by
};
std::vector<CandidateVerdicts> candidate_verdicts(const RuleHitsTable& table);

}  // namespace docguard::rules
