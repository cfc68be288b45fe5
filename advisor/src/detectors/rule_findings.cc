#include "docguard/advisor/rule_findings.h"

#include <algorithm>
#include <cstdio>
#include <optional>

#include "docguard/advisor/document_id.h"

namespace docguard::advisor {

RuleCheckingVisitor::RuleCheckingVisitor(DumpVisitor& inner,
                                         std::shared_ptr<const rules::RuleSet> rules)
    : inner_(inner), engine_(std::move(rules), nullptr, nullptr) {}

void RuleCheckingVisitor::on_collection(const CollectionMetadata& metadata) {
  inner_.on_collection(metadata);
}

base::Expected<void> RuleCheckingVisitor::on_document(std::string_view db,
                                                      std::string_view collection,
                                                      const uint8_t* data, uint32_t size) {
  if (auto profiled = inner_.on_document(db, collection, data, size); !profiled) return profiled;
  codec::CommandView insert;
  insert.name = "insert";
  insert.kind = codec::CommandKind::kInsert;
  insert.database = db;
  insert.collection = collection;
  insert.statements.push_back(codec::BsonView{data, size});
  insert.payload_source = codec::PayloadSource::kSequence;
  insert.payload_field = "documents";
  const rules::Verdict verdict =
      engine_.inspect(insert, rules::RequestContext{"docguard scan", ""});
  for (const rules::Violation& v : verdict.violations) {
    if (v.action == rules::Action::kOff) continue;
    const bool schema = v.kind == rules::RuleKind::kJsonSchema;
    Tally& t = tallies_[{std::string(db), std::string(collection), v.kind,
                         schema ? std::string() : v.field_path, static_cast<int>(v.action)}];
    if (schema) {
      for (const std::string& p :
           schema::failing_properties({v.schema_details().details.data(),
                                       static_cast<uint32_t>(v.schema_details().details.size())})) {
        ++t.properties[p];
      }
    }
    if (t.documents++ == 0) {
      t.first_id = document_id_text(data, size);
      t.rule_match = v.rule_match;
      t.rule_line = v.rule_line;
      t.bound = v.bound;
    }
    if (v.measured > t.max_measured) t.max_measured = v.measured;
  }
  return {};
}

void RuleCheckingVisitor::append_findings(std::vector<Finding>& out) const {
  for (const auto& [key, t] : tallies_) {
    const auto& [db, collection, rule, field, action] = key;
    const std::optional<Finding::Kind> kind = rule_finding_kind(rule);
    if (!kind) continue;  // not a kind a stored document breaks: never tallied, never filed
    Finding f;
    f.db = db;
    f.collection = collection;
    f.kind = *kind;
    f.severity =
        action == static_cast<int>(rules::Action::kBlock) ? Severity::kBlock : Severity::kWarn;
    f.field = field;
    char numbers[160];
    std::snprintf(numbers, sizeof numbers,
                  "%llu documents break it; largest measured %.0f, bound %.0f",
                  static_cast<unsigned long long>(t.documents), t.max_measured, t.bound);
    std::string summary = numbers;
    if (rule == rules::RuleKind::kJsonSchema) {
      summary = std::to_string(t.documents) + " documents fail the $jsonSchema";
      std::vector<std::pair<uint64_t, std::string>> most;
      for (const auto& [name, n] : t.properties) most.emplace_back(n, name);
      std::stable_sort(most.begin(), most.end(),
                       [](const auto& a, const auto& b) { return a.first > b.first; });
      std::string failing;
      for (size_t i = 0; i < most.size() && i < 5; ++i) {
        failing += (i ? ", " : "; failing most: ") + most[i].second + " (" +
                   std::to_string(most[i].first) + ")";
      }
      summary += failing;
    }
    f.evidence = summary + " (first: _id " + t.first_id + "; rule match '" + t.rule_match + "'" +
                 (t.rule_line > 0 ? ", line " + std::to_string(t.rule_line) : std::string()) + ")";
    f.pattern = "docguard rule";
    if (rule == rules::RuleKind::kJsonSchema) {
      f.suggestion = std::string("Written through docguard these documents would be ") +
                     (f.severity == Severity::kBlock ? "refused" : "logged as violations") +
                     " by the validator: fix the stored data (or the schema) before enforcing it, "
                     "and before `docguard validator --apply` makes the server refuse updates to "
                     "them too.";
      out.push_back(std::move(f));
      continue;
    }
    f.suggestion = std::string("Inserted through docguard these documents would be ") +
                   (f.severity == Severity::kBlock ? "refused" : "logged as violations") +
                   " by the " + rules::rule_name(rule) + " rule" +
                   (field.empty() ? "" : " on " + field) +
                   ": fix the data (or the design that lets it grow) before deploying the rule.";
    out.push_back(std::move(f));
  }
}

}  // namespace docguard::advisor
