// The query guardrail's part of a rule: `require_index`, `max_time_ms`, `max_time_ms_writes` and
// `allow` (rule_set.h has the rest of the rule language). Parsed with the rule, resolved with
// the rule's other keys per namespace and connection scope.
//
//   rules:
//     - id: ci-needs-indexes
//       match: "shop.*"
//       apps: ["ci-*"]
//       action: block
//       require_index: true        # refuse (or warn about) queries no known index serves
//       max_time_ms: 2000          # added to reads that carry no maxTimeMS
//       max_time_ms_writes: true   # ... and to writes too (default false)
//       allow:                     # shapes this rule tolerates, each with an owner and an end
//         - {shape: "{status: ?}", owner: team-x, until: 2027-01-31}
//
// How several rules combine: the strongest action among the applying rules with require_index
// decides (block beats warn), and the first such rule in the file names the refusal; their
// `allow` entries all apply. max_time_ms: the smallest of the applying rules' values.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace docguard::rules {

enum class Action;

// One `allow` entry: a shape text (exactly what a refusal's errInfo.shape says), who owns the
// exception and until when it applies.
struct AllowedShape {
  std::string shape;
  std::string owner;
  std::string until;            // as written: YYYY-MM-DD (UTC)
  int64_t expires_unix_ms = 0;  // the end of that day: the exception applies through `until`
  int line = 0;
};

// The largest max_time_ms a rule may add: a day.
inline constexpr int64_t kMaxTimeMsLimit = 24LL * 3600 * 1000;

struct GuardrailRule {
  bool require_index = false;
  int64_t max_time_ms = 0;  // 0: none
  bool max_time_ms_writes = false;
  std::vector<AllowedShape> allow;

  bool any() const { return require_index || max_time_ms > 0; }
};

// The guardrail keys in force for one namespace and connection scope.
struct GuardrailLimits {
  Action require_index{};  // Action::kOff: no rule requires an index here
  std::string rule_name;   // the deciding rule's id, or its match when it has none
  std::string match;
  int line = 0;
  uint32_t rule = 0;  // its index in the RuleSet (hit counters)
  std::vector<AllowedShape> allow;
  int64_t max_time_ms = 0;  // 0: nothing added
  bool max_time_ms_writes = false;
};

// "2027-01-31" -> the first millisecond after that day (UTC); -1 when not such a date.
int64_t end_of_day_unix_ms(std::string_view date);

}  // namespace docguard::rules
