// The $jsonSchema rules as one check of the engine's chain: each schema that applies to the
// namespace and connection judges a whole document (insert, replacement, upsert by replacement)
// or what an operator update changes. A failure is one json_schema violation per schema carrying
// the server's errInfo.details, so a blocked write is answered exactly as a server validator
// answers it; an update that cannot be judged without the stored document passes and is
// counted. Owns the validators' census (schema_census.h).
//
// Thread safety: any thread, like the engine.
#pragma once

#include <bson/bson.h>

#include <cstdint>
#include <string_view>
#include <vector>

#include "docguard/codec/bson_elements.h"
#include "docguard/codec/bson_view.h"
#include "docguard/rules/check_phases.h"
#include "docguard/rules/command_pass.h"
#include "docguard/rules/engine_sinks.h"
#include "docguard/rules/read_document.h"
#include "docguard/rules/rule_set.h"
#include "docguard/rules/schema_census.h"
#include "docguard/rules/write_statement.h"

namespace docguard::rules {

class SchemaCheck {
 public:
  // The phases of the chain of checks it takes part in (check_phases.h).
  using Phases = phase::List<phase::JudgeWrite, phase::LearnRead>;

  explicit SchemaCheck(MeasurementSink* measurements) : measurements_(measurements) {}
  SchemaCheck(const SchemaCheck&) = delete;
  SchemaCheck& operator=(const SchemaCheck&) = delete;

  // Its phase in the chain of checks (check_chain.h): the namespace's $jsonSchema rules on a
  // written document as the server stores it (an insert without _id gets a new ObjectId, a
  // replacement keeps the stored _id), or on what an operator update changes.
  void judge_write(CommandPass& pass, const InsertStatement& insert) {
    if (!pass.limits->schemas.empty()) judge_insert(pass, insert);
  }
  void judge_write(CommandPass& pass, const ReplacementStatement& replacement) {
    if (!pass.limits->schemas.empty()) judge_replacement(pass, replacement);
  }
  void judge_write(CommandPass& pass, const OperatorUpdateStatement& update) {
    if (!pass.limits->schemas.empty()) judge_operator_update(pass, update);
  }
  // A document docguard read from the store, judged by every $jsonSchema rule of its namespace
  // (in force and candidate) for the census.
  void learn_read(const ReadDocument& read);

  // Each validator's census: sampled stored documents failing it, the properties failing most,
  // and writes failing it per app over the last hour.
  std::vector<ValidatorCensus> census(SchemaCensus::Clock::time_point now) const {
    return census_.snapshot(now);
  }

 private:
  // What a write puts before the schemas. kReplacementOfUnknownId: a replacement without _id
  // whose query does not name the stored one; a stand-in ObjectId is judged, and a failure that
  // may come from it is not certain.
  enum class Written : uint8_t {
    kInsert,
    kReplacement,
    kReplacementOfUnknownId,
    kOperatorUpdate,
    kOperatorUpsert
  };
  // The schemas on a whole document, or on what an operator update changes; `id` is errInfo's
  // failingDocumentId. True when it refused the write or counted it as unjudged.
  bool judge(CommandPass& pass, const codec::BsonView& doc, int32_t index,
             const codec::BsonElements* id, Written written);
  // A whole written document judged as the server stores it: one without _id gets `id` first;
  // `failing_id` is errInfo's id.
  void judge_with_id(CommandPass& pass, const codec::BsonView& doc, bool has_id,
                     const bson_value_t& id, int32_t index, const codec::BsonElements* failing_id,
                     Written written);
  void judge_insert(CommandPass& pass, const InsertStatement& insert);
  void judge_replacement(CommandPass& pass, const ReplacementStatement& replacement);
  void judge_operator_update(CommandPass& pass, const OperatorUpdateStatement& update);
  // An upsert's would-be insert (upsert_image.h): a failure counted as unjudged, never refused.
  void judge_upsert_insert(CommandPass& pass, const OperatorUpdateStatement& update);

  void census_stored_document(const RuleSet& rules, bool candidates, std::string_view db,
                              std::string_view coll, const codec::BsonView& document);

  MeasurementSink* measurements_;
  SchemaCensus census_;
};

}  // namespace docguard::rules
