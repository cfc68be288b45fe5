// The proxy's rules applied to a dump: every document goes through the rules engine as if it
// were inserted into its collection, and the violations become findings (kind "rule:<rule>",
// severity from the rule's action), one per namespace, rule and field with the count behind it.
// A $jsonSchema rule (json_schema) gives one finding per namespace and action: the census of the
// stored documents that fail the validator, with the properties failing most.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include "docguard/advisor/dump_reader.h"
#include "docguard/advisor/finding.h"
#include "docguard/rules/engine.h"

namespace docguard::advisor {

// Forwards everything to `inner` and checks each document against `rules`.
class RuleCheckingVisitor final : public DumpVisitor {
 public:
  RuleCheckingVisitor(DumpVisitor& inner, std::shared_ptr<const rules::RuleSet> rules);
  void on_collection(const CollectionMetadata& metadata) override;
  base::Expected<void> on_document(std::string_view db, std::string_view collection,
                                   const uint8_t* data, uint32_t size) override;
  void append_findings(std::vector<Finding>& out) const;

 private:
  struct Tally {
    uint64_t documents = 0;
    double max_measured = 0;
    double bound = 0;
    std::string rule_match;
    int rule_line = 0;
    std::string first_id;  // the first offending document's _id
    // json_schema: documents failing per top-level property (the census' "failing most").
    std::map<std::string, uint64_t> properties;
  };
  DumpVisitor& inner_;
  rules::Engine engine_;
  // (db, collection, rule, field, action) -> tally
  std::map<std::tuple<std::string, std::string, rules::RuleKind, std::string, int>, Tally> tallies_;
};

}  // namespace docguard::advisor
