// The engine's writes: each inserted document, update and delete statement, findAndModify and
// 8.0 bulkWrite op read into a statement of its kind (write_statement.h) and handed down the chain
// of checks: every check judges it, then every check learns from it what its verdict allows.
#include "docguard/rules/query_guardrail.h"
#include "engine_internal.h"

namespace docguard::rules {

namespace {

// The fields of an update statement beside its query.
void read_update(UpdateStatement& w, const codec::BsonView& u, bool upsert) {
  w.update = u;
  w.upsert = upsert;
}

}  // namespace

template <typename Statement>
[[gnu::always_inline]] inline void Engine::judge_statement(CommandPass& s,
                                                           const Statement& statement) {
  checks().run<phase::JudgeWrite>(s, statement);
  checks().run<phase::LearnWrite>(s, statement);
}

void Engine::judge_insert(CommandPass& s, const codec::BsonView& doc, int32_t index) {
  InsertStatement w;
  w.index = index;
  w.document = doc;
  w.shape = &ShapeCheck::measure(doc, s.cmd.first_statement);
  if (w.shape->has_id()) w.id = &w.shape->id_element();
  judge_statement(s, w);
}

// Inlined into its three readers (a statement, a bulkWrite op, findAndModify): an update
// statement costs one call less, about 35 instructions of a small update's 5,500.
[[gnu::always_inline]] inline void Engine::judge_update(CommandPass& s, const codec::BsonView& q,
                                                        const codec::BsonView& u, bool pipeline,
                                                        bool upsert, int32_t index,
                                                        const QueryParts* query) {
  if (u.empty()) {
    // An update that cannot be read: its query alone is judged.
    UpdateStatement w(q, index, query);
    read_update(w, u, upsert);
    judge_statement(s, w);
  } else if (!pipeline && !codec::is_operator_document(u)) {
    // A replacement (also an upsert's, and findAndModify's) keeps the stored _id: the
    // filter's when it names one.
    ReplacementStatement w(q, index, query);
    read_update(w, u, upsert);
    w.shape = &ShapeCheck::measure(u);
    w.names_its_id = w.shape->has_id();
    if (w.id == nullptr && w.names_its_id) w.id = &w.shape->id_element();
    judge_statement(s, w);
  } else {
    OperatorUpdateStatement w(q, index, query);
    read_update(w, u, upsert);
    w.pipeline = pipeline;
    w.shape = &ShapeCheck::measure_update(u, pipeline);
    judge_statement(s, w);
  }
}

void Engine::judge_delete(CommandPass& s, const codec::BsonView& q, int32_t index,
                          const QueryParts* query) {
  const DeleteStatement w(q, index, query);
  judge_statement(s, w);
}

void Engine::judge_update_statement(CommandPass& s, const codec::BsonView& statement,
                                    int32_t index) {
  if (statement.empty()) return;
  codec::BsonView u;
  bool pipeline = false;
  bool upsert = false;
  // The statement was validated with the message: a walk that steps over values, which reads
  // the guardrail's parts (q, hint, collation) on the way.
  QueryParts parts;
  for (codec::BsonElements field(statement); field.next();) {
    if (field.key == "u") {
      u = field.container();
      pipeline = field.holds_array();
    } else if (field.key == "upsert") {
      upsert = field.as_bool();
    } else {
      read_statement_part(field, parts);
    }
  }
  judge_update(s, parts.filter, u, pipeline, upsert, index, &parts);
}

void Engine::judge_delete_statement(CommandPass& s, const codec::BsonView& statement,
                                    int32_t index) {
  codec::BsonElements q(statement);
  if (!codec::well_framed(statement) || !q.find("q")) return;
  const QueryParts parts = statement_parts(statement);
  judge_delete(s, q.container(), index, &parts);
}

void Engine::judge_find_and_modify(CommandPass& s) {
  // One statement, the whole command: refused, the command is. Its query is the command's
  // own (query_parts), which the guardrail reads from the command view.
  s.whole_command = true;
  const codec::CommandView& cmd = s.cmd;
  if (cmd.remove) {
    judge_delete(s, cmd.query, -1, nullptr);
  } else {
    judge_update(s, cmd.query, cmd.update, cmd.update_is_pipeline, cmd.upsert, -1, nullptr);
  }
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
    const size_t before = verdict.violations.size();
    const auto index = static_cast<int32_t>(i);
    if (verb == "insert") {
      judge_insert(s, document, index);
    } else if (verb == "update" || verb == "delete") {
      const QueryParts parts = statement_parts(op);
      if (verb == "update") {
        judge_update(s, filter, mods, mods_pipeline, upsert, index, &parts);
      } else {
        judge_delete(s, filter, index, &parts);
      }
    }
    report(s, before);
  }
}

}  // namespace docguard::rules
