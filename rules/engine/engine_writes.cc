// The engine's writes: each inserted document, update and delete statement and 8.0 bulkWrite op
// handed down the chain of checks in order (shape, $jsonSchema, then what the shape check
// learns once the statement's verdict is known; the guardrail for a statement's filter).
#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <cmath>
#include <cstring>

#include "docguard/rules/query_guardrail.h"
#include "engine_internal.h"

namespace docguard::rules {

namespace {
// Stands for a stored ObjectId docguard cannot see (judging a replacement without _id).
constexpr uint8_t kPlaceholderObjectId[12] = {};
}  // namespace

void Engine::inspect_insert(CommandPass& s, const codec::BsonView& doc, int32_t index) {
  const DocumentShape& shape = ShapeCheck::measure(doc);
  ShapeCheck::judge(s, shape, true, index, shape.has_id() ? &shape.id_element() : nullptr);
  if (!s.limits->schemas.empty()) {
    if (shape.has_id()) {
      schema_.judge(s, doc, index, &shape.id_element(), SchemaCheck::Written::kInsert);
    } else {
      // Without an _id, the server gives the document a new ObjectId before validating it.
      bson_value_t id;
      id.value_type = BSON_TYPE_OID;
      bson_oid_init(&id.value.v_oid, nullptr);
      bson_t id_doc = BSON_INITIALIZER;
      bson_append_value(&id_doc, "_id", 3, &id);
      codec::BsonElements id_element(&id_doc);
      if (id_element.find("_id")) {
        schema_.judge_with_id(s, doc, false, id, index, &id_element, SchemaCheck::Written::kInsert);
      }
      bson_destroy(&id_doc);
    }
  }
  shape_.learn_insert(s, shape, index);
}

void Engine::inspect_delete(CommandPass& s, const codec::BsonView& q) { shape_.forget(s, q); }

void Engine::inspect_update(CommandPass& s, const codec::BsonView& q, const codec::BsonView& u,
                            bool u_is_pipeline, bool upsert, int32_t index) {
  if (u.empty()) return;
  codec::BsonElements q_id(q);
  const bool has_q_id = id_equality(q, &q_id);

  if (!u_is_pipeline && !codec::is_operator_document(u)) {
    // Replacement (also upserts and findAndModify replacements): the whole new document.
    const DocumentShape& shape = ShapeCheck::measure(u);
    const codec::BsonElements* id =
        has_q_id ? &q_id : (shape.has_id() ? &shape.id_element() : nullptr);
    ShapeCheck::judge(s, shape, true, index, id);
    if (!s.limits->schemas.empty()) {
      // A replacement keeps the stored _id: the query's when it names one, else an ObjectId
      // (the default _id) stands for it, and errInfo's failingDocumentId is then unknown.
      bson_value_t stored;
      stored.value_type = BSON_TYPE_OID;
      bson_oid_init_from_data(&stored.value.v_oid, kPlaceholderObjectId);
      bson_value_t given;
      if (has_q_id && q_id.borrow_value(&given)) {
        bson_value_destroy(&stored);
        bson_value_copy(&given, &stored);
      }
      schema_.judge_with_id(s, u, shape.has_id(), stored, index, id,
                            shape.has_id() || has_q_id
                                ? SchemaCheck::Written::kReplacement
                                : SchemaCheck::Written::kReplacementOfUnknownId);
      bson_value_destroy(&stored);
    }
    shape_.learn_replacement(s, shape, id, index);
    return;
  }

  const UpdateShape& update = ShapeCheck::measure_update(u, u_is_pipeline);
  const codec::BsonElements* id = has_q_id ? &q_id : nullptr;
  if (!s.limits->schemas.empty()) {
    schema_.judge(
        s, u, index, id,
        upsert ? SchemaCheck::Written::kOperatorUpsert : SchemaCheck::Written::kOperatorUpdate);
  }
  shape_.judge_update(s, update, id, index);
}

void Engine::inspect_bulk_write(const codec::CommandView& cmd, const RequestContext& ctx,
                                const RuleSnapshot& snapshot, bool dry_run, Verdict& verdict) {
  // Per op: {insert: nsIdx, document} | {update: nsIdx, filter, updateMods, upsert, multi} |
  // {delete: nsIdx, filter}; the namespace is nsInfo[nsIdx].ns.
  const RuleSet& rules = dry_run ? *snapshot.candidates : *snapshot.rules;
  const uint32_t scope = scope_of(ctx, rules, dry_run);
  const std::string_view app =
      !dry_run && (measurements_ != nullptr || advice_ != nullptr)
          ? std::string_view(app_label(ctx.app_name, rules.tracking().max_apps))
          : std::string_view();
  for (size_t i = 0; i < cmd.statements.size(); ++i) {
    // An ordered bulkWrite stops at its first refused op: later ones never run.
    if (!dry_run && cmd.ordered && !verdict.blocked_statements.empty()) break;
    const codec::BsonView& op = cmd.statements[i];
    codec::BsonElements field(op);
    if (!codec::well_framed(op) || !field.next()) continue;
    const std::string_view verb = field.key;
    if (!field.holds_int()) continue;
    const int64_t ns_index = field.as_int64();
    if (ns_index < 0 || static_cast<size_t>(ns_index) >= cmd.ns_info.size()) continue;
    const std::string_view ns =
        codec::find_string(cmd.ns_info[static_cast<size_t>(ns_index)], "ns");
    const size_t dot = ns.find('.');
    if (dot == std::string_view::npos) continue;
    const std::string_view db = ns.substr(0, dot);
    const std::string_view coll = ns.substr(dot + 1);
    CollectionStats* stats = stats_for(db, coll, *snapshot.rules);
    // Per op, like insert/update/delete batches: the proxy forwards the allowed ops and merges
    // the per-op results of the reply's cursor.
    CommandPass s{cmd,     ctx,   rules,
                  verdict, stats, limits_for(stats, db, coll, rules, scope, dry_run),
                  db,      coll,  &clock_};
    s.hits = dry_run ? snapshot.candidate_hits.get() : snapshot.hits.get();
    s.dry_run = dry_run;
    s.app = app;
    codec::BsonView document, filter, mods;
    bool mods_pipeline = false;
    bool upsert = false;
    while (field.next()) {
      const std::string_view k = field.key;
      if (k == "document") document = field.container();
      if (k == "filter") filter = field.container();
      if (k == "updateMods") {
        mods = field.container();
        mods_pipeline = field.holds_array();
      }
      if (k == "upsert") upsert = field.as_bool();
    }
    const auto index = static_cast<int32_t>(i);
    const size_t before = verdict.violations.size();
    if (verb == "insert") {
      inspect_insert(s, document, index);
    } else if (verb == "update") {
      inspect_update(s, filter, mods, mods_pipeline, upsert, index);
      guardrail_.judge_query(s, statement_parts(op), index);
    } else if (verb == "delete") {
      inspect_delete(s, filter);
      guardrail_.judge_query(s, statement_parts(op), index);
    }
    report(s, before);
  }
}

}  // namespace docguard::rules
