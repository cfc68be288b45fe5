// Design rules as data: what the `mode`, `rules` and `tracking` configuration keys say, and
// which bounds apply to one namespace. The settings layer reads them from the file
// (settings/rules_yaml.cc); this layer never sees YAML.
//
// How several matching rules combine (documented for users in config/docguard.example.yaml):
//   * Every rule whose `match` glob matches "db.coll" applies; order in the file does not matter.
//   * A rule's `action` defaults to the top-level `mode`; a rule with action `off` is ignored.
//   * For one limit (e.g. max_array_length) each applying rule contributes its bound. When a
//     measured value exceeds one or more of them, one violation is reported: the one from the
//     exceeded rule with the strongest action (block beats warn), and among those the strictest
//     (smallest) bound. So a value past a strict `warn` rule but below a looser `block` rule is
//     warned about and forwarded; past both, it is blocked.
//   * `array_length` entries apply to their own field path, `max_array_length` to every array;
//     both are checked and each reports its own violation.
//   * `$lookup` ratio rules only block reads when the rule says `action: block` itself; a global
//     `mode: block` makes them warn (reads are never blocked by default).
//   * A rule may also name who it applies to: `apps`, `users`, `clients` (client_scope.h). It
//     applies to a connection when its namespace matches and each of those keys matches; one
//     with none applies to everyone. Scoped and unscoped rules combine as above: the strongest
//     action, then the smallest bound, over every rule that applies to the connection.
//   * A rule may have an `id` (unique within its list), the name its hit counters keep across
//     reloads (rule_hits.h); without one it is known by its match and scope keys.
//   * `candidate_rules` has the syntax of `rules`. They are judged on the same traffic as a
//     rule set of their own, in a dry run: never blocking, never changing a byte, counted apart
//     (MeasurementSink::on_candidate_violation), so a change is seen before it is applied.
//   * If the file has no `rules` key at all, one built-in rule for "*" applies, with the
//     thresholds MongoDB's own Atlas advisor uses (kDefault* below). `rules: []` means no rules.
#pragma once

#include <array>
#include <chrono>
#include <cstdint>
#include <limits>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "docguard/base/enum_names.h"
#include "docguard/rules/client_scope.h"
#include "docguard/rules/guardrail_rule.h"
#include "docguard/rules/rule_kinds.h"
#include "docguard/schema/json_schema.h"

namespace docguard::rules {

enum class Action { kOff, kWarn, kBlock };
inline constexpr auto kActionNames = base::enum_names<Action>(
    {{Action::kOff, "off"}, {Action::kWarn, "warn"}, {Action::kBlock, "block"}}, "?");
inline const char* action_name(Action action) { return kActionNames.name(action); }

// Defaults: Atlas advisor thresholds (what MongoDB itself flags
// in production; Compass's stricter hints, 250 elements, are mentioned in the example config).
inline constexpr double kDefaultMaxDocumentBytes = 2'000'000;  // Atlas: > 2 MB
inline constexpr double kDefaultMaxArrayLength = 10'000;       // Atlas: > 10,000 elements
inline constexpr double kDefaultMaxNestingDepth = 100;         // documented server limit
inline constexpr double kDefaultMaxLookupRatio = 0.5;          // Atlas: > 50% of queries
inline constexpr std::chrono::seconds kDefaultLookupWindow{60};
// A ratio over very few reads says nothing; Atlas also requires > 100 queries. We judge earlier.
inline constexpr uint64_t kDefaultLookupMinReads = 20;

// Bounds on the memory used by statistics and tracking. Each is a hard cap; what does not fit
// is counted in an overflow bucket named "_other".
struct TrackingLimits {
  // Namespaces with their own statistics (~4 KiB each plus field paths).
  uint32_t max_namespaces = 256;
  // Array field paths with their own statistics per namespace (~250 bytes each).
  uint32_t max_field_paths = 64;
  // Documents whose array lengths are remembered (LRU by namespace + _id, ~200 bytes each).
  uint32_t max_tracked_documents = 10'000;
  // Array paths remembered per tracked document.
  uint32_t max_tracked_fields_per_document = 8;
  // Share of read replies (cursor batches) whose documents are measured.
  double read_sample_rate = 0.01;
  // Client app names with their own `app` label on violation counters (per process; the label
  // set only grows, and apps past the bound count as "_other").
  uint32_t max_apps = 64;
};

// One `rules:` entry as written. Unset limits are std::nullopt.
struct Rule {
  std::string id;     // "" when not written
  std::string match;  // glob over "db.coll": '*' any run of characters, '?' one character
  Action action = Action::kWarn;
  bool action_explicit = false;  // written in the rule rather than inherited from `mode`
  // The bounds of the kinds whose key is a number (max_document_bytes, max_array_length,
  // max_nesting_depth, max_lookup_ratio; each kind's row says), by RuleKind.
  std::array<std::optional<double>, kRuleKindCount> bounds{};
  std::vector<std::pair<std::string, double>> array_length;  // normalized field path -> bound
  bool require_push_slice = false;
  std::chrono::seconds lookup_window = kDefaultLookupWindow;
  uint64_t lookup_min_reads = kDefaultLookupMinReads;
  RuleScope scope;  // who the rule applies to; empty: everyone
  // `json_schema` / `json_schema_file`: a $jsonSchema judged on every written document.
  std::shared_ptr<const schema::JsonSchema> json_schema;
  // A validator file's validationLevel: moderate lets updates pass that docguard cannot show
  // to apply to a valid stored document (off and validationAction warn change `action`).
  bool schema_moderate = false;
  // `honor_bypass` (default true): a write with bypassDocumentValidation skips the schema.
  bool honor_bypass = true;
  GuardrailRule guardrail;  // require_index, max_time_ms, allow (guardrail_rule.h)
  int line = 0;             // 1-based line in the file, for messages
  uint32_t index = 0;       // position in its RuleSet's rules(), set by the RuleSet

  std::optional<double>& bound(RuleKind kind) { return bounds[static_cast<size_t>(kind)]; }
  const std::optional<double>& bound(RuleKind kind) const {
    return bounds[static_cast<size_t>(kind)];
  }
  bool has_array_bounds() const {
    return bound(RuleKind::kMaxArrayLength) || !array_length.empty();
  }
};

// One rule's contribution to one limit.
struct Bound {
  double value = 0;
  Action action = Action::kWarn;
  std::string match;
  int line = 0;       // the deciding rule's line in the config file (0: the built-in default)
  uint32_t rule = 0;  // and its index in the RuleSet (its hit counters: RuleHitsTable::at)
};

// All contributions to one limit; `min` lets the hot path skip the list when nothing exceeds.
struct Limit {
  std::vector<Bound> bounds;
  double min = std::numeric_limits<double>::infinity();

  bool empty() const { return bounds.empty(); }
  void add(double value, Action action, const Rule& rule);
  // The bound to report for `measured`, or nullptr when no bound is exceeded.
  const Bound* exceeded(double measured) const { return measured > min ? pick(measured) : nullptr; }
  // The strictest bound regardless of action (used to judge tracked documents).
  const Bound* strictest() const;

 private:
  const Bound* pick(double measured) const;
};

// One rule's $jsonSchema for a namespace: each applying schema is judged on its own, and a
// document failing one is refused or warned about by that rule's action.
struct SchemaLimit {
  std::shared_ptr<const schema::JsonSchema> schema;
  Bound bound;  // value unused
  bool moderate = false;
  bool honor_bypass = true;
};

// The combined bounds for one namespace.
struct NamespaceLimits {
  // The limits of the kinds bounded by a number, by RuleKind (empty for the other kinds).
  std::array<Limit, kRuleKindCount> limits;
  const Limit& limit(RuleKind kind) const { return limits[static_cast<size_t>(kind)]; }
  Limit& limit(RuleKind kind) { return limits[static_cast<size_t>(kind)]; }
  std::vector<std::pair<std::string, Limit>> array_length_by_path;
  Action push_slice_action = Action::kOff;
  std::string push_slice_match;
  int push_slice_line = 0;
  uint32_t push_slice_rule = 0;
  std::chrono::seconds lookup_window = kDefaultLookupWindow;
  uint64_t lookup_min_reads = kDefaultLookupMinReads;
  std::vector<SchemaLimit> schemas;
  // Some rule for this namespace bounds arrays, for these connections or for others: the
  // document tracker must follow the namespace's arrays whoever writes them.
  bool tracks_arrays = false;
  GuardrailLimits guardrail;

  const Limit* array_limit_for(std::string_view path) const;
};

class RuleSet {
 public:
  // `candidates`: the file's candidate_rules (null when it has none), judged in a dry run.
  RuleSet(Action mode, std::vector<Rule> rules, TrackingLimits tracking,
          std::shared_ptr<const RuleSet> candidates = nullptr);

  Action mode() const { return mode_; }
  const std::vector<Rule>& rules() const { return rules_; }
  const TrackingLimits& tracking() const { return tracking_; }
  const std::shared_ptr<const RuleSet>& candidates() const { return candidates_; }
  // Changes on every RuleSet built, so cached NamespaceLimits know when they are stale.
  uint64_t generation() const { return generation_; }

  // Which rules with scope keys apply to a connection, as an id shared by every connection they
  // equally apply to: 0 when none does (always, without scoped rules). An id means the same for
  // this RuleSet's life. Computed once per connection (ConnectionScopeId), not per command.
  bool has_scoped_rules() const { return !scoped_.empty(); }
  uint32_t scope_of(const ClientIdentity& who) const;

  // Combines every rule matching "db.coll" that applies to connections of `scope` (see the file
  // comment): the unscoped ones, and the scoped ones scope_of() found.
  NamespaceLimits resolve(std::string_view db, std::string_view coll, uint32_t scope = 0) const;

 private:
  Action mode_;
  std::vector<Rule> rules_;
  TrackingLimits tracking_;
  std::shared_ptr<const RuleSet> candidates_;
  uint64_t generation_;
  // Indices in rules_ of the rules with scope keys; a scope is a bit set over this list.
  std::vector<uint32_t> scoped_;
  // Scope ids, interned as connections arrive. Their number is bounded by the distinct sets of
  // scoped rules that can match together, not by connections or names.
  mutable std::mutex scopes_mutex_;
  mutable std::vector<std::vector<uint64_t>> scope_bits_;  // by id; [0] is the empty set
  mutable std::map<std::vector<uint64_t>, uint32_t> scope_ids_;
};

// One connection's scope id, remembered between its commands: found again only when the rule
// set changes or the connection's identity does (forget()). Used by one thread at a time. The
// candidate rules have a slot of their own, so judging both sets does not thrash one slot.
class ConnectionScopeId {
 public:
  explicit ConnectionScopeId(std::string_view peer) : address_(parse_peer_address(peer)) {}
  // The app name or the user changed.
  void forget() { active_ = candidate_ = Slot{}; }
  uint32_t id(const RuleSet& rules, std::string_view app, std::string_view user,
              bool candidate = false) {
    Slot& slot = candidate ? candidate_ : active_;
    if (slot.generation != rules.generation()) {
      slot.id = rules.scope_of(ClientIdentity{app, user, address_ ? &*address_ : nullptr});
      slot.generation = rules.generation();
    }
    return slot.id;
  }

 private:
  struct Slot {
    uint64_t generation = 0;
    uint32_t id = 0;
  };
  std::optional<IpAddress> address_;
  Slot active_, candidate_;
};

// Helper, exposed for tests and for the settings reader (glob_match is client_scope.h's).
// Field path as rules name it: positional parts ("0", "$", "$[]", "$[x]") removed.
std::string normalize_field_path(std::string_view path);

}  // namespace docguard::rules
