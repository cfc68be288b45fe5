// $jsonSchema rules in the engine: each schema that applies to the namespace and connection
// judges a whole document (insert, replacement, upsert by replacement) or what an operator
// update changes. A failure is one json_schema violation per schema carrying the server's
// errInfo.details, so a blocked write is answered exactly as a server validator answers it; an
// update that cannot be judged without the stored document passes and is counted.
#include <bson/bson.h>

#include "docguard/rules/json_schema.h"
#include "engine_internal.h"

namespace docguard::rules {

namespace {

std::vector<uint8_t> details_of(const bson_t* out) {
  bson_iter_t it;
  uint32_t len = 0;
  const uint8_t* data = nullptr;
  if (bson_iter_init_find(&it, out, "details") && BSON_ITER_HOLDS_DOCUMENT(&it)) {
    bson_iter_document(&it, &len, &data);
  }
  return data == nullptr ? std::vector<uint8_t>{} : std::vector<uint8_t>(data, data + len);
}

}  // namespace

void Engine::judge_schemas(Scope& s, const codec::BsonView& doc, int32_t index,
                           const bson_iter_t* id, bool operator_update) {
  for (const SchemaLimit& limit : s.limits->schemas) {
    const JsonSchema& schema = *limit.schema;
    bson_t out = BSON_INITIALIZER;  // stays on the stack unless a failure is explained
    bool failed = false;
    if (!operator_update) {
      failed = !schema.matches(doc);
      if (failed) schema.explain(doc, &out, "details");
    } else {
      switch (schema.judge_update(doc, &out)) {
        case UpdateJudgement::kPass:
          break;
        case UpdateJudgement::kFail:
          failed = true;
          break;
        case UpdateJudgement::kUnjudged:
          if (!s.dry_run && measurements_ != nullptr) {
            measurements_->on_schema_unjudged(s.stats->labels);
          }
          break;
      }
    }
    if (failed) {
      std::vector<uint8_t> details = details_of(&out);
      const auto names =
          failing_properties({details.data(), static_cast<uint32_t>(details.size())});
      s.add(RuleKind::kJsonSchema, limit.bound, names.empty() ? "" : names.front(), 0, index, id);
      s.verdict.violations.back().details = std::move(details);
    }
    bson_destroy(&out);
  }
}

}  // namespace docguard::rules
