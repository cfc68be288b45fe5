#include "docguard/rules/rule_set.h"

#include <algorithm>
#include <atomic>
#include <cctype>
#include <charconv>
#include <cmath>

#include "docguard/rules/json_schema_config.h"

namespace docguard::rules {

void Limit::add(double value, Action action, const Rule& rule) {
  if (action == Action::kOff) return;
  bounds.push_back(Bound{value, action, rule.match, rule.line, rule.index});
  min = std::min(min, value);
}

const Bound* Limit::pick(double measured) const {
  const Bound* best = nullptr;
  for (const Bound& b : bounds) {
    if (!(measured > b.value)) continue;
    if (best == nullptr || b.action > best->action ||
        (b.action == best->action && b.value < best->value)) {
      best = &b;
    }
  }
  return best;
}

const Bound* Limit::strictest() const {
  const Bound* best = nullptr;
  for (const Bound& b : bounds) {
    if (best == nullptr || b.value < best->value) best = &b;
  }
  return best;
}

const Limit* NamespaceLimits::array_limit_for(std::string_view path) const {
  for (const auto& [p, limit] : array_length_by_path) {
    if (p == path) return &limit;
  }
  return nullptr;
}

namespace {
std::atomic<uint64_t> g_generation{0};
}

RuleSet::RuleSet(Action mode, std::vector<Rule> rules, TrackingLimits tracking,
                 std::shared_ptr<const RuleSet> candidates)
    : mode_(mode),
      rules_(std::move(rules)),
      tracking_(tracking),
      candidates_(std::move(candidates)),
      generation_(++g_generation) {
  for (uint32_t i = 0; i < rules_.size(); ++i) {
    rules_[i].index = i;
    if (!rules_[i].scope.empty() && rules_[i].action != Action::kOff) scoped_.push_back(i);
  }
  std::vector<uint64_t> none((scoped_.size() + 63) / 64, 0);
  scope_ids_.emplace(none, 0);
  scope_bits_.push_back(std::move(none));
}

uint32_t RuleSet::scope_of(const ClientIdentity& who) const {
  if (scoped_.empty()) return 0;
  std::vector<uint64_t> bits((scoped_.size() + 63) / 64, 0);
  for (size_t i = 0; i < scoped_.size(); ++i) {
    if (scope_matches(rules_[scoped_[i]].scope, who)) bits[i / 64] |= uint64_t{1} << (i % 64);
  }
  std::lock_guard lock(scopes_mutex_);
  auto [it, added] = scope_ids_.try_emplace(bits, static_cast<uint32_t>(scope_bits_.size()));
  if (added) scope_bits_.push_back(std::move(bits));
  return it->second;
}

NamespaceLimits RuleSet::resolve(std::string_view db, std::string_view coll, uint32_t scope) const {
  NamespaceLimits out;
  std::string ns;
  ns.reserve(db.size() + coll.size() + 1);
  ns.append(db).append(".").append(coll);
  std::vector<uint64_t> bits;
  if (!scoped_.empty()) {
    std::lock_guard lock(scopes_mutex_);
    bits = scope_bits_.at(scope < scope_bits_.size() ? scope : 0);
  }
  bool window_set = false;
  size_t scoped_index = 0;  // position of the next scoped rule in scoped_
  for (uint32_t i = 0; i < rules_.size(); ++i) {
    const Rule& r = rules_[i];
    if (r.action == Action::kOff) continue;
    bool applies = true;
    if (scoped_index < scoped_.size() && scoped_[scoped_index] == i) {
      applies = (bits[scoped_index / 64] >> (scoped_index % 64)) & 1;
      ++scoped_index;
    }
    if (!glob_match(r.match, ns)) continue;
    out.tracks_arrays = out.tracks_arrays || r.has_array_bounds();
    if (!applies) continue;
    if (r.max_document_bytes) out.document_bytes.add(*r.max_document_bytes, r.action, r);
    if (r.json_schema) {
      out.schemas.push_back({r.json_schema, Bound{0, r.action, r.match, r.line, r.index}});
    }
    if (r.max_array_length) out.array_length_any.add(*r.max_array_length, r.action, r);
    for (const auto& [path, bound] : r.array_length) {
      Limit* limit = nullptr;
      for (auto& [p, l] : out.array_length_by_path) {
        if (p == path) limit = &l;
      }
      if (limit == nullptr) limit = &out.array_length_by_path.emplace_back(path, Limit{}).second;
      limit->add(bound, r.action, r);
    }
    if (r.require_push_slice && r.action > out.push_slice_action) {
      out.push_slice_action = r.action;
      out.push_slice_match = r.match;
      out.push_slice_line = r.line;
      out.push_slice_rule = r.index;
    }
    if (r.guardrail.any()) add_guardrail(out.guardrail, r);
    if (r.max_nesting_depth) out.nesting_depth.add(*r.max_nesting_depth, r.action, r);
    if (r.max_lookup_ratio) {
      // Reads are blocked only by a rule that says so itself.
      Action a = r.action_explicit ? r.action : std::min(r.action, Action::kWarn);
      out.lookup_ratio.add(*r.max_lookup_ratio, a, r);
      // Several windows: the shortest one reacts fastest, and the stats keep one window.
      if (!window_set || r.lookup_window < out.lookup_window) out.lookup_window = r.lookup_window;
      if (!window_set || r.lookup_min_reads < out.lookup_min_reads) {
        out.lookup_min_reads = r.lookup_min_reads;
      }
      window_set = true;
    }
  }
  // The tracker follows the arrays candidate rules bound too, or their tracked lengths would
  // never be known.
  for (size_t i = 0; candidates_ != nullptr && !out.tracks_arrays && i < candidates_->rules_.size();
       ++i) {
    const Rule& r = candidates_->rules_[i];
    out.tracks_arrays = r.action != Action::kOff && r.has_array_bounds() && glob_match(r.match, ns);
  }
  return out;
}

bool glob_match(std::string_view pattern, std::string_view text) {
  // Iterative wildcard match with single-star backtracking: linear in practice.
  size_t p = 0, t = 0, star = std::string_view::npos, mark = 0;
  while (t < text.size()) {
    if (p < pattern.size() && (pattern[p] == '?' || pattern[p] == text[t])) {
      ++p;
      ++t;
    } else if (p < pattern.size() && pattern[p] == '*') {
      star = p++;
      mark = t;
    } else if (star != std::string_view::npos) {
      p = star + 1;
      t = ++mark;
    } else {
      return false;
    }
  }
  while (p < pattern.size() && pattern[p] == '*') ++p;
  return p == pattern.size();
}

std::string normalize_field_path(std::string_view path) {
  std::string out;
  out.reserve(path.size());
  while (!path.empty()) {
    size_t dot = path.find('.');
    std::string_view part = path.substr(0, dot);
    bool positional = !part.empty() &&
                      (part[0] == '$' || std::all_of(part.begin(), part.end(),
                                                     [](char c) { return c >= '0' && c <= '9'; }));
    if (!positional && !part.empty()) {
      if (!out.empty()) out.push_back('.');
      out.append(part);
    }
    if (dot == std::string_view::npos) break;
    path.remove_prefix(dot + 1);
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// YAML parsing

namespace {

class Parser : public ConfigReader {
 public:
  using ConfigReader::ConfigReader;

  Action action(const YAML::Node& node, const std::string& key) {
    if (node.IsScalar() && node.Scalar() == "false") return Action::kOff;  // YAML 1.1: off
    return choice(node, key, kActionNames);
  }

  Rule rule(const YAML::Node& node, const std::string& prefix, Action mode) {
    if (!node.IsMap()) fail(node, prefix, "expected a mapping with at least 'match'");
    Rule r;
    r.action = mode;
    r.line = node.Mark().is_null() ? 0 : node.Mark().line + 1;
    bool has_match = false;
    for (const auto& kv : node) {
      const std::string name = kv.first.as<std::string>();
      const std::string key = prefix + "." + name;
      const YAML::Node& v = kv.second;
      if (name == "id") {
        r.id = scalar(v, key);
        if (r.id.empty()) fail(v, key, "must not be empty (leave the key out for none)");
      } else if (name == "match") {
        r.match = scalar(v, key);
        if (r.match.empty()) fail(v, key, "must not be empty (use \"*\" for every namespace)");
        has_match = true;
      } else if (name == "action") {
        r.action = action(v, key);
        r.action_explicit = true;
      } else if (name == "max_document_bytes") {
        r.max_document_bytes = bytes(v, key);
      } else if (name == "max_array_length") {
        r.max_array_length = count(v, key);
      } else if (name == "array_length") {
        if (!v.IsMap()) fail(v, key, "expected a mapping of field path to maximum length");
        for (const auto& entry : v) {
          const std::string path = entry.first.as<std::string>();
          std::string normalized = normalize_field_path(path);
          if (normalized.empty()) fail(entry.first, key, "empty field path '" + path + "'");
          r.array_length.emplace_back(std::move(normalized), count(entry.second, key + "." + path));
        }
      } else if (name == "require_push_slice") {
        r.require_push_slice = boolean(v, key);
      } else if (name == "max_nesting_depth") {
        r.max_nesting_depth = count(v, key, 1000);
      } else if (name == "max_lookup_ratio") {
        r.max_lookup_ratio = ratio(v, key);
      } else if (name == "lookup_window") {
        const auto d = duration(v, key);
        if (d < std::chrono::seconds(1) || d > std::chrono::hours(24)) {
          fail(v, key, "expected a duration between 1s and 24h, got '" + scalar(v, key) + "'");
        }
        r.lookup_window = std::chrono::duration_cast<std::chrono::seconds>(d);
      } else if (name == "lookup_min_reads") {
        r.lookup_min_reads = static_cast<uint64_t>(count(v, key));
      } else if (name == "json_schema" || name == "json_schema_file") {
        if (r.json_schema) fail(kv.first, key, "a rule holds one of json_schema, json_schema_file");
        r.json_schema = name == "json_schema" ? inline_json_schema(*this, v, key)
                                              : file_json_schema(*this, v, key);
      } else if (name == "apps") {
        r.scope.apps = globs(v, key, false);
      } else if (name == "users") {
        r.scope.users = globs(v, key, true);
      } else if (name == "clients") {
        for (const auto& [item, item_key] : list(v, key)) {
          std::string why;
          auto cidr = parse_cidr(scalar(item, item_key), &why);
          if (!cidr)
            fail(item, item_key, why + " (expected an address or a range like 10.0.0.0/8)");
          r.scope.clients.push_back(*cidr);
        }
      } else if (!read_guardrail_key(*this, name, v, key, r.guardrail)) {
        fail(kv.first, key,
             "unknown key (known: id, match, action, max_document_bytes, max_array_length, "
             "array_length, require_push_slice, max_nesting_depth, max_lookup_ratio, "
             "lookup_window, lookup_min_reads, json_schema, json_schema_file, apps, users, "
             "clients, " +
                 std::string(kGuardrailKeys) + ")");
      }
    }
    if (!has_match) fail(node, prefix + ".match", "missing; every rule needs a namespace glob");
    return r;
  }

  // A scope key's entries: a list, or one scalar for a list of one. Each comes with its key.
  std::vector<std::pair<YAML::Node, std::string>> list(const YAML::Node& node,
                                                       const std::string& key) {
    std::vector<std::pair<YAML::Node, std::string>> out;
    if (node.IsScalar()) {
      out.emplace_back(node, key);
    } else if (node.IsSequence()) {
      for (size_t i = 0; i < node.size(); ++i) {
        out.emplace_back(node[i], key + "[" + std::to_string(i) + "]");
      }
    }
    if (out.empty()) {
      fail(node, key, "expected a list with at least one entry (leave the key out for everyone)");
    }
    return out;
  }

  std::vector<std::string> globs(const YAML::Node& node, const std::string& key, bool users) {
    std::vector<std::string> out;
    for (const auto& [item, item_key] : list(node, key)) {
      std::string glob = scalar(item, item_key);
      if (glob.empty()) fail(item, item_key, "must not be empty (use \"*\" for any)");
      if (users && (glob.front() == '@' || glob.back() == '@')) {
        fail(item, item_key,
             "expected a user name glob, written 'name' or 'name@db', got '" + glob + "'");
      }
      out.push_back(std::move(glob));
    }
    return out;
  }

  // A `rules` or `candidate_rules` list; ids must be unique within it.
  std::vector<Rule> rule_list(const YAML::Node& list, const std::string& name, Action mode) {
    if (!list.IsSequence() && !list.IsNull()) fail(list, name, "expected a list of rules");
    std::vector<Rule> out;
    std::map<std::string, int> id_lines;
    for (size_t i = 0; list.IsSequence() && i < list.size(); ++i) {
      const std::string prefix = name + "[" + std::to_string(i) + "]";
      Rule r = rule(list[i], prefix, mode);
      if (!r.id.empty()) {
        auto [it, added] = id_lines.emplace(r.id, r.line);
        if (!added) {
          fail(list[i]["id"], prefix + ".id",
               "duplicate id '" + r.id + "' (first used by the rule on line " +
                   std::to_string(it->second) +
                   "); ids name a rule's hit counters and must be "
                   "unique");
        }
      }
      out.push_back(std::move(r));
    }
    return out;
  }

  TrackingLimits tracking(const YAML::Node& node) {
    TrackingLimits t;
    if (!node.IsMap()) fail(node, "tracking", "expected a mapping");
    for (const auto& kv : node) {
      const std::string name = kv.first.as<std::string>();
      const std::string key = "tracking." + name;
      const YAML::Node& v = kv.second;
      auto positive = [&](uint32_t max) {
        double c = count(v, key, max);
        if (c < 1) fail(v, key, "must be at least 1");
        return static_cast<uint32_t>(c);
      };
      if (name == "max_namespaces") {
        t.max_namespaces = positive(100'000);
      } else if (name == "max_field_paths") {
        t.max_field_paths = positive(10'000);
      } else if (name == "max_tracked_documents") {
        t.max_tracked_documents = static_cast<uint32_t>(count(v, key, 10'000'000));
      } else if (name == "max_tracked_fields_per_document") {
        t.max_tracked_fields_per_document = positive(1'000);
      } else if (name == "read_sample_rate") {
        t.read_sample_rate = ratio(v, key);
      } else if (name == "max_apps") {
        t.max_apps = positive(10'000);
      } else {
        fail(kv.first, key,
             "unknown key (known: max_namespaces, max_field_paths, max_tracked_documents, "
             "max_tracked_fields_per_document, read_sample_rate, max_apps)");
      }
    }
    return t;
  }
};

Rule default_rule(Action mode) {
  Rule r;
  r.match = "*";
  r.action = mode;
  r.max_document_bytes = kDefaultMaxDocumentBytes;
  r.max_array_length = kDefaultMaxArrayLength;
  r.max_nesting_depth = kDefaultMaxNestingDepth;
  r.max_lookup_ratio = kDefaultMaxLookupRatio;
  return r;
}

}  // namespace

std::shared_ptr<const RuleSet> parse_rules(const YAML::Node& root, const std::string& file_name) {
  Parser p(file_name);
  Action mode = Action::kWarn;
  std::vector<Rule> rules;
  TrackingLimits tracking;
  if (root && !root.IsNull()) {
    if (!root.IsMap()) p.fail(root, "(top level)", "expected a mapping");
    if (const YAML::Node m = root["mode"]) mode = p.action(m, "mode");
    if (const YAML::Node t = root["tracking"]) tracking = p.tracking(t);
    if (const YAML::Node list = root["rules"]) {
      rules = p.rule_list(list, "rules", mode);
    } else {
      rules.push_back(default_rule(mode));
    }
  } else {
    rules.push_back(default_rule(mode));
  }
  std::shared_ptr<const RuleSet> candidates;
  if (root && root.IsMap()) {
    if (const YAML::Node list = root["candidate_rules"]) {
      std::vector<Rule> dry = p.rule_list(list, "candidate_rules", mode);
      if (!dry.empty())
        candidates = std::make_shared<const RuleSet>(mode, std::move(dry), tracking);
    }
  }
  return std::make_shared<const RuleSet>(mode, std::move(rules), tracking, std::move(candidates));
}

}  // namespace docguard::rules
