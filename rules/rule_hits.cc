#include "docguard/rules/rule_hits.h"

#include <arpa/inet.h>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <netinet/in.h>

#include <algorithm>
#include <ctime>
#include <unordered_map>

#include "docguard/base/json_writer.h"
#include "docguard/base/time_text.h"

namespace docguard::rules {

void RuleHits::count_app(std::string_view app, Action action) {
  std::lock_guard lock(apps_mutex_);
  auto it = by_app_.find(app);
  if (it == by_app_.end()) it = by_app_.emplace(std::string(app), std::array<uint64_t, 2>{}).first;
  ++it->second[action == Action::kBlock ? 1 : 0];
}

bool RuleHits::should_log(std::chrono::steady_clock::time_point now, std::chrono::seconds interval,
                          uint64_t* suppressed) {
  const int64_t t =
      std::chrono::duration_cast<std::chrono::nanoseconds>(now.time_since_epoch()).count();
  int64_t last = last_log_ns_.load(std::memory_order_relaxed);
  const int64_t gap = std::chrono::duration_cast<std::chrono::nanoseconds>(interval).count();
  // One thread wins the exchange; the others count themselves as suppressed.
  if ((last == 0 || t - last >= gap) &&
      last_log_ns_.compare_exchange_strong(last, t == 0 ? 1 : t, std::memory_order_relaxed)) {
    *suppressed = suppressed_.exchange(0, std::memory_order_relaxed);
    return true;
  }
  suppressed_.fetch_add(1, std::memory_order_relaxed);
  return false;
}

std::vector<RuleHits::AppCounts> RuleHits::by_app() const {
  std::lock_guard lock(apps_mutex_);
  std::vector<AppCounts> out;
  for (const auto& [app, counts] : by_app_) out.push_back({app, counts[0], counts[1]});
  return out;
}

std::string cidr_text(const Cidr& cidr) {
  char text[INET6_ADDRSTRLEN] = {};
  const auto& b = cidr.network.bytes;
  const bool v4 = cidr.prefix >= 96 &&
                  std::all_of(b.begin(), b.begin() + 10, [](uint8_t x) { return x == 0; }) &&
                  b[10] == 0xff && b[11] == 0xff;
  if (v4) {
    inet_ntop(AF_INET, b.data() + 12, text, sizeof text);
    return fmt::format("{}/{}", text, cidr.prefix - 96);
  }
  inet_ntop(AF_INET6, b.data(), text, sizeof text);
  return fmt::format("{}/{}", text, cidr.prefix);
}

std::string rule_key(const Rule& rule) {
  std::string key = "match=" + rule.match;
  auto list = [&](const char* name, const std::vector<std::string>& items) {
    if (items.empty()) return;
    fmt::format_to(std::back_inserter(key), " {}={}", name, fmt::join(items, ","));
  };
  list("apps", rule.scope.apps);
  list("users", rule.scope.users);
  std::vector<std::string> clients;
  for (const Cidr& c : rule.scope.clients) clients.push_back(cidr_text(c));
  list("clients", clients);
  return key;
}

RuleHitsTable::RuleHitsTable(const RuleSet& rules, const RuleHitsTable* previous) {
  std::unordered_map<std::string, std::shared_ptr<RuleHits>> carried;
  if (previous != nullptr) {
    for (size_t i = 0; i < previous->hits_.size(); ++i) {
      carried.emplace(previous->identities_[i], previous->hits_[i]);
    }
  }
  std::unordered_map<std::string, int> seen_keys;
  for (const Rule& rule : rules.rules()) {
    std::string key = rule_key(rule);
    std::string identity;
    if (!rule.id.empty()) {
      identity = "id:" + rule.id;
    } else {
      const int n = ++seen_keys[key];
      if (n > 1) key += fmt::format(" #{}", n);
      identity = "key:" + key;
    }
    auto it = carried.find(identity);
    hits_.push_back(it != carried.end() ? it->second : std::make_shared<RuleHits>());
    ids_.push_back(rule.id);
    keys_.push_back(std::move(key));
    identities_.push_back(std::move(identity));
    lines_.push_back(rule.line);
  }
}

void write_rule_hits(json::Writer& w, const RuleHitsTable& table) {
  w.begin_array();
  for (uint32_t i = 0; i < table.size(); ++i) {
    w.begin_object().key("id");
    if (table.id(i).empty()) {
      w.null();
    } else {
      w.value(table.id(i));
    }
    const RuleHits& hits = *table.at(i);
    w.member("key", table.key(i)).member("line", table.line(i));
    w.key("hits").begin_object().member("warn", hits.warn()).member("block", hits.block());
    w.end_object().key("last_hit");
    if (hits.last_hit_ms() == 0) {
      w.null();
    } else {
      w.value(base::utc_text_of_unix_ms(hits.last_hit_ms()));
    }
    w.end_object();
  }
  w.end_array();
}

std::vector<CandidateVerdicts> candidate_verdicts(const RuleHitsTable& table) {
  std::vector<CandidateVerdicts> out;
  for (uint32_t i = 0; i < table.size(); ++i) {
    CandidateVerdicts v{table.id(i), table.key(i), table.line(i), {}};
    for (const auto& a : table.at(i)->by_app()) v.apps.push_back({a.app, a.block, a.warn});
    out.push_back(std::move(v));
  }
  return out;
}

}  // namespace docguard::rules
