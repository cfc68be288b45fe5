// The rule language's YAML: `mode`, `rules`, `candidate_rules` and `tracking` into the rules
// layer's structs (rules/include/docguard/rules/rule_set.h says what they mean).
#include <map>

#include "config_reader.h"
#include "docguard/rules/rule_kinds.h"
#include "docguard/settings/settings_reader.h"
#include "docguard/settings/yaml_settings.h"
#include "guardrail_yaml.h"
#include "json_schema_yaml.h"

namespace docguard::settings {

using rules::Action;
using rules::kActionNames;
using rules::Rule;
using rules::RuleSet;
using rules::TrackingLimits;

namespace {

using rules::RuleKey;

// The row of a rule kind whose key is a bound (max_document_bytes: 16MB), or null.
const rules::RuleKindRow* bound_key(std::string_view name) {
  for (size_t i = 0; i < rules::kRuleKindCount; ++i) {
    const rules::RuleKindRow& row = rules::rule_kind(static_cast<rules::RuleKind>(i));
    if (rules::is_number_key(row.key) && name == row.name) return &row;
  }
  return nullptr;
}

// Every key a rule may hold, for the message that refuses another: the rule kinds' keys come
// from their rows, so a new kind is listed without a change here.
std::string known_rule_keys() {
  std::string out = "id, match, action";
  for (size_t i = 0; i < rules::kRuleKindCount; ++i) {
    const rules::RuleKindRow& row = rules::rule_kind(static_cast<rules::RuleKind>(i));
    if (row.key != RuleKey::kNone) out += std::string(", ") + row.name;
  }
  out +=
      ", lookup_window, lookup_min_reads, json_schema_file, honor_bypass, apps, users, clients, ";
  return out + std::string(kGuardrailKeys);
}

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
    ValidatorFile validator;
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
      } else if (const rules::RuleKindRow* row = bound_key(name)) {
        r.bound(row->kind) = row->key == RuleKey::kBytes   ? bytes(v, key)
                             : row->key == RuleKey::kRatio ? ratio(v, key)
                             : row->most > 0               ? count(v, key, row->most)
                                                           : count(v, key);
      } else if (name == "array_length") {
        if (!v.IsMap()) fail(v, key, "expected a mapping of field path to maximum length");
        for (const auto& entry : v) {
          const std::string path = entry.first.as<std::string>();
          std::string normalized = rules::normalize_field_path(path);
          if (normalized.empty()) fail(entry.first, key, "empty field path '" + path + "'");
          r.array_length.emplace_back(std::move(normalized), count(entry.second, key + "." + path));
        }
      } else if (name == "require_push_slice") {
        r.require_push_slice = boolean(v, key);
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
        if (name == "json_schema") {
          r.json_schema = inline_json_schema(*this, v, key);
        } else {
          validator = file_json_schema(*this, v, key);
          r.json_schema = validator.schema;
        }
      } else if (name == "honor_bypass") {
        r.honor_bypass = boolean(v, key);
      } else if (name == "apps") {
        r.scope.apps = globs(v, key, false);
      } else if (name == "users") {
        r.scope.users = globs(v, key, true);
      } else if (name == "clients") {
        for (const auto& [item, item_key] : list(v, key)) {
          auto cidr = rules::parse_cidr(scalar(item, item_key));
          if (!cidr) {
            fail(item, item_key,
                 cidr.error().message + " (expected an address or a range like 10.0.0.0/8)");
          }
          r.scope.clients.push_back(*cidr);
        }
      } else if (!read_guardrail_key(*this, name, v, key, r.guardrail)) {
        fail(kv.first, key, "unknown key (known: " + known_rule_keys() + ")");
      }
    }
    if (!has_match) fail(node, prefix + ".match", "missing; every rule needs a namespace glob");
    // The validator file's own options, as the server would apply them: off judges nothing,
    // warn never refuses, moderate lets updates pass that docguard cannot show to apply to a
    // valid stored document.
    if (validator.level == "off") r.action = Action::kOff;
    if (validator.action == "warn" && r.action == Action::kBlock) r.action = Action::kWarn;
    r.schema_moderate = validator.level == "moderate";
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
  r.bound(rules::RuleKind::kMaxDocumentBytes) = rules::kDefaultMaxDocumentBytes;
  r.bound(rules::RuleKind::kMaxArrayLength) = rules::kDefaultMaxArrayLength;
  r.bound(rules::RuleKind::kMaxNestingDepth) = rules::kDefaultMaxNestingDepth;
  r.bound(rules::RuleKind::kMaxLookupRatio) = rules::kDefaultMaxLookupRatio;
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

std::shared_ptr<const RuleSet> default_rules() { return parse_rules(YAML::Node(), "<defaults>"); }

}  // namespace docguard::settings
