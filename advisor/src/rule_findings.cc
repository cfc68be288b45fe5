#include "docguard/advisor/rule_findings.h"

#include <cstdio>

#include "docguard/advisor/document_id.h"

namespace docguard::advisor {

RuleCheckingVisitor::RuleCheckingVisitor(DumpVisitor& inner,
                                         std::shared_ptr<const rules::RuleSet> rules)
    : inner_(inner), engine_(std::move(rules), nullptr, nullptr) {}

void RuleCheckingVisitor::on_collection(const CollectionMetadata& metadata) {
  inner_.on_collection(metadata);
}

bool RuleCheckingVisitor::on_document(std::string_view db, std::string_view collection,
                                      const uint8_t* data, uint32_t size, std::string* error) {
  if (!inner_.on_document(db, collection, data, size, error)) return false;
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
    Tally& t = tallies_[{std::string(db), std::string(collection), v.kind, v.field_path,
                         static_cast<int>(v.action)}];
    if (t.documents++ == 0) {
      t.first_id = document_id_text(data, size);
      t.rule_match = v.rule_match;
      t.rule_line = v.rule_line;
      t.bound = v.bound;
    }
    if (v.measured > t.max_measured) t.max_measured = v.measured;
  }
  return true;
}

void RuleCheckingVisitor::append_findings(std::vector<Finding>& out) const {
  for (const auto& [key, t] : tallies_) {
    const auto& [db, collection, rule, field, action] = key;
    Finding f;
    f.db = db;
    f.collection = collection;
    f.kind = rule_finding_kind(rule);
    f.severity =
        action == static_cast<int>(rules::Action::kBlock) ? Severity::kBlock : Severity::kWarn;
    f.field = field;
    char numbers[160];
    std::snprintf(numbers, sizeof numbers,
                  "%llu documents break it; largest measured %.0f, bound %.0f",
                  static_cast<unsigned long long>(t.documents), t.max_measured, t.bound);
    f.evidence = std::string(numbers) + " (first: _id " + t.first_id + "; rule match '" +
                 t.rule_match + "'" +
                 (t.rule_line > 0 ? ", line " + std::to_string(t.rule_line) : std::string()) + ")";
    f.pattern = "docguard rule";
    f.suggestion = std::string("Inserted through docguard these documents would be ") +
                   (f.severity == Severity::kBlock ? "refused" : "logged as violations") +
                   " by the " + rules::rule_name(rule) + " rule" +
                   (field.empty() ? "" : " on " + field) +
                   ": fix the data (or the design that lets it grow) before deploying the rule.";
    out.push_back(std::move(f));
  }
}

}  // namespace docguard::advisor
