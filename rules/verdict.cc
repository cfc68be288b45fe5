// A violation's kind-specific part, read without asking which kind it is.
#include "docguard/rules/verdict.h"

namespace docguard::rules {

const Violation::SchemaDetails& Violation::schema_details() const {
  static const SchemaDetails kNone;
  const auto* held = std::get_if<SchemaDetails>(&specifics);
  return held != nullptr ? *held : kNone;
}

const Violation::UnindexedQuery& Violation::unindexed_query() const {
  static const UnindexedQuery kNone;
  const auto* held = std::get_if<UnindexedQuery>(&specifics);
  return held != nullptr ? *held : kNone;
}

}  // namespace docguard::rules
