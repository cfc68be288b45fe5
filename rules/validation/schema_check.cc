// The $jsonSchema check: the schemas of a namespace on a written document or an operator
// update, the server's errInfo.details for a failure, and the census of stored documents.
#include "docguard/rules/schema_check.h"

#include <bson/bson.h>

#include <algorithm>

#include "docguard/schema/json_schema.h"
#include "upsert_image.h"

namespace docguard::rules {

namespace {

// Room kept in errInfo's size bound for failingDocumentId and the keys beside the details.
constexpr size_t kErrInfoBesideDetails = size_t{16} * 1024;

std::vector<uint8_t> details_of(const bson_t* out) {
  codec::BsonElements details(out);
  if (!details.find("details") || !details.holds_document()) return {};
  const codec::BsonView doc = details.container();
  return std::vector<uint8_t>(doc.data, doc.data + doc.size);
}

// Whether whole details name no failing rule ({schemaRulesNotSatisfied: []}): docguard's matcher
// and its explanation disagree (a document with a field name twice, which the two read
// differently), so the failure is not certain.
bool names_no_rule(const bson_t* out) {
  codec::BsonElements details(out);
  if (!details.find("details") || !details.holds_document()) return false;
  codec::BsonElements rules(details.container());
  return rules.find("schemaRulesNotSatisfied") && rules.holds_array() && rules.value_size <= 5;
}

// The rule's id, else its key, as /status and the reports name it.
std::string rule_name_of(const RuleSet& rules, const RuleHitsTable* hits, uint32_t index) {
  if (hits != nullptr) return hits->id(index).empty() ? hits->key(index) : hits->id(index);
  const Rule& r = rules.rules().at(index);
  return r.id.empty() ? rule_key(r) : r.id;
}

// The document a $jsonSchema judges when the written one has no _id, kept for its capacity.
std::vector<uint8_t>& post_image() {
  thread_local std::vector<uint8_t> image;
  return image;
}

// Stands for a stored ObjectId docguard cannot see (judging a replacement without _id).
constexpr uint8_t kPlaceholderObjectId[12] = {};

}  // namespace

void SchemaCheck::learn_read(const ReadDocument& read) {
  if (!read.from_store) return;  // the census is of stored documents, read by docguard itself
  census_stored_document(*read.rules, false, read.db, read.coll, read.document);
  if (const auto& candidates = read.rules->candidates()) {
    census_stored_document(*candidates, true, read.db, read.coll, read.document);
  }
}

void SchemaCheck::census_stored_document(const RuleSet& rules, bool candidates, std::string_view db,
                                         std::string_view coll, const codec::BsonView& document) {
  std::string ns;
  for (const Rule& r : rules.rules()) {
    if (!r.json_schema || r.action == Action::kOff) continue;
    if (ns.empty()) ns.append(db).append(".").append(coll);
    if (!glob_match(r.match, ns)) continue;
    const bool failing = !r.json_schema->matches(document);
    std::vector<std::string> properties;
    if (failing) {
      bson_t out = BSON_INITIALIZER;
      r.json_schema->explain(document, &out, "details");
      const std::vector<uint8_t> details = details_of(&out);
      properties =
          schema::failing_properties({details.data(), static_cast<uint32_t>(details.size())});
      bson_destroy(&out);
    }
    census_.stored(db, coll, r.id.empty() ? rule_key(r) : r.id, candidates, failing, properties);
  }
}

void SchemaCheck::judge_insert(CommandPass& s, const InsertStatement& w) {
  if (w.id != nullptr) {
    judge(s, w.document, w.index, w.id, Written::kInsert);
    return;
  }
  // Without an _id, the server gives the document a new ObjectId before validating it.
  bson_value_t id;
  id.value_type = BSON_TYPE_OID;
  bson_oid_init(&id.value.v_oid, nullptr);
  bson_t id_doc = BSON_INITIALIZER;
  bson_append_value(&id_doc, "_id", 3, &id);
  codec::BsonElements id_element(&id_doc);
  if (id_element.find("_id")) {
    judge_with_id(s, w.document, false, id, w.index, &id_element, Written::kInsert);
  }
  bson_destroy(&id_doc);
}

void SchemaCheck::judge_replacement(CommandPass& s, const ReplacementStatement& w) {
  // A replacement keeps the stored _id: the query's when it names one, else an ObjectId (the
  // default _id) stands for it, and errInfo's failingDocumentId is then unknown.
  bson_value_t stored;
  stored.value_type = BSON_TYPE_OID;
  bson_oid_init_from_data(&stored.value.v_oid, kPlaceholderObjectId);
  bson_value_t given;
  if (w.filter_id != nullptr && w.filter_id->borrow_value(&given)) {
    bson_value_destroy(&stored);
    bson_value_copy(&given, &stored);
  }
  const bool has_id = w.names_its_id;
  judge_with_id(
      s, w.update, has_id, stored, w.index, w.id,
      has_id || w.filter_id != nullptr ? Written::kReplacement : Written::kReplacementOfUnknownId);
  bson_value_destroy(&stored);
}

void SchemaCheck::judge_operator_update(CommandPass& s, const OperatorUpdateStatement& w) {
  const bool told = judge(s, w.update, w.index, w.id,
                          w.upsert ? Written::kOperatorUpsert : Written::kOperatorUpdate);
  // Once per statement: an update already refused or counted is not counted again.
  if (w.upsert && !w.pipeline && !told) judge_upsert_insert(s, w);
}

void SchemaCheck::judge_upsert_insert(CommandPass& s, const OperatorUpdateStatement& w) {
  // When the query matches nothing the server inserts the query's equalities with $set and
  // $setOnInsert applied, and validates that document as an insert. Whether it inserts depends
  // on the stored documents: a failing image is never refused, it is counted as unjudged.
  bson_t image = BSON_INITIALIZER;
  const bool built = upsert_insert_image(w.filter, w.update, &image);
  bool fails = false;
  for (const SchemaLimit& limit : s.limits->schemas) {
    if (!built || fails) break;
    if (s.cmd.bypass_document_validation && limit.honor_bypass) continue;
    fails = !limit.schema->matches({bson_get_data(&image), image.len});
  }
  bson_destroy(&image);
  if (fails && !s.dry_run && measurements_ != nullptr) {
    measurements_->on_schema_unjudged(s.stats->labels);
  }
}

bool SchemaCheck::judge(CommandPass& s, const codec::BsonView& doc, int32_t index,
                        const codec::BsonElements* id, Written written) {
  bool bypassed = false;
  bool told = false;  // a failure added, or an unjudged write counted
  for (const SchemaLimit& limit : s.limits->schemas) {
    // The server skips its validator for a write that sets bypassDocumentValidation (an
    // authorized user's choice); a rule may opt out to see such writes anyway.
    if (s.cmd.bypass_document_validation && limit.honor_bypass) {
      bypassed = true;
      continue;
    }
    const schema::JsonSchema& schema = *limit.schema;
    bson_t out = BSON_INITIALIZER;  // stays on the stack unless a failure is explained
    bool failed = false;
    schema::DetailsSize size = schema::DetailsSize::kFull;
    const bool operators =
        written == Written::kOperatorUpdate || written == Written::kOperatorUpsert;
    if (!operators) {
      failed = !schema.matches(doc);
      // The bound holds the whole errInfo: the details, and the _id and keys beside them.
      if (failed) {
        size = schema.explain_within(doc, schema::kMaxValidationErrorBytes - kErrInfoBesideDetails,
                                     &out, "details");
      }
    } else {
      switch (schema.judge_update(doc, written == Written::kOperatorUpsert, &out)) {
        case schema::UpdateJudgement::kPass:
          break;
        case schema::UpdateJudgement::kFail:
          failed = true;
          break;
        case schema::UpdateJudgement::kUnjudged:
          told = true;
          if (!s.dry_run && measurements_ != nullptr) {
            measurements_->on_schema_unjudged(s.stats->labels);
          }
          break;
      }
    }
    if (failed && written == Written::kReplacementOfUnknownId) {
      // The stand-in _id may be what fails (a schema typing _id, an enum of whole documents):
      // only a failure of another named property is certain, whatever the stored _id.
      const std::vector<uint8_t> details = details_of(&out);
      const auto names =
          schema::failing_properties({details.data(), static_cast<uint32_t>(details.size())});
      const bool certain = std::any_of(names.begin(), names.end(),
                                       [](const std::string& name) { return name != "_id"; });
      if (!certain) {
        failed = false;
        told = true;
        if (!s.dry_run && measurements_ != nullptr)
          measurements_->on_schema_unjudged(s.stats->labels);
      }
    }
    if (failed && limit.moderate && written != Written::kInsert) {
      // validationLevel moderate: the server judges an update only when the stored document
      // was valid, which docguard cannot see; the update passes, counted as unjudged.
      failed = false;
      told = true;
      if (!s.dry_run && measurements_ != nullptr)
        measurements_->on_schema_unjudged(s.stats->labels);
    }
    if (failed && size == schema::DetailsSize::kFull && names_no_rule(&out)) {
      failed = false;
      told = true;
      if (!s.dry_run && measurements_ != nullptr)
        measurements_->on_schema_unjudged(s.stats->labels);
    }
    if (failed) {
      told = true;
      std::vector<uint8_t> details = details_of(&out);
      const auto names =
          schema::failing_properties({details.data(), static_cast<uint32_t>(details.size())});
      s.add(RuleKind::kJsonSchema, limit.bound, names.empty() ? "" : names.front(), 0, index, id);
      s.verdict.violations.back().specifics = Violation::SchemaDetails{std::move(details), size};
      census_.write_failed(s.db, s.coll, rule_name_of(s.rules, s.hits, limit.bound.rule), s.dry_run,
                           s.ctx.app_name, s.now());
    }
    bson_destroy(&out);
  }
  if (bypassed && !s.dry_run && measurements_ != nullptr) {
    measurements_->on_schema_bypassed(s.stats->labels, s.app);
  }
  return told;
}

void SchemaCheck::judge_with_id(CommandPass& s, const codec::BsonView& doc, bool has_id,
                                const bson_value_t& id, int32_t index,
                                const codec::BsonElements* failing_id, Written written) {
  if (has_id) {
    judge(s, doc, index, failing_id, written);
    return;
  }
  // The server validates the document it stores, which always has an _id, placed first.
  bson_t with_id = BSON_INITIALIZER;
  bson_t given;
  bson_append_value(&with_id, "_id", 3, &id);
  if (bson_init_static(&given, doc.data, doc.size)) bson_concat(&with_id, &given);
  std::vector<uint8_t>& image = post_image();
  image.assign(bson_get_data(&with_id), bson_get_data(&with_id) + with_id.len);
  bson_destroy(&with_id);
  judge(s, {image.data(), static_cast<uint32_t>(image.size())}, index, failing_id, written);
}

}  // namespace docguard::rules
