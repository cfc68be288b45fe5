// The workload observer: a command's operations identified by shape, counted and judged
// against the known indexes.
#include "docguard/rules/workload_observer.h"

#include <algorithm>

#include "docguard/base/hash.h"
#include "docguard/rules/query_guardrail.h"

namespace docguard::rules {

using codec::CommandKind;

namespace {

const IndexKeys kIdIndex = {{"_id", "1"}};

// What one kept shape may hold, whatever the client sends (BSON keys have no length limit in a
// message): its text, its namespace's and command's names, and the field paths and operator
// names it is judged by.
constexpr size_t kMaxShapeText = 1024;
constexpr size_t kMaxNameBytes = 256;
constexpr size_t kMaxFieldBytes = 2048;
constexpr size_t kMaxPlanBytes = 1024;

// The plan inputs of a query as one BSON document: {f, s, p, hn, hk, c, t}.
std::string plan_of(const QueryParts& parts) {
  if (parts.filter.size + parts.sort.size + parts.pipeline.size + parts.hint_keys.size +
          parts.collation.size + parts.hint_name.size() >
      kMaxPlanBytes) {
    return {};
  }
  bson_t doc = BSON_INITIALIZER;
  auto put = [&doc](const char* key, const codec::BsonView& v, bool array) {
    bson_t child;
    if (v.empty() || !bson_init_static(&child, v.data, v.size)) return;
    if (array) {
      bson_append_array(&doc, key, -1, &child);
    } else {
      bson_append_document(&doc, key, -1, &child);
    }
  };
  put("f", parts.filter, false);
  put("s", parts.sort, false);
  put("p", parts.pipeline, true);
  put("hk", parts.hint_keys, false);
  put("c", parts.collation, false);
  if (!parts.hint_name.empty()) {
    bson_append_utf8(&doc, "hn", -1, parts.hint_name.data(),
                     static_cast<int>(parts.hint_name.size()));
  }
  if (parts.tailable) bson_append_bool(&doc, "t", -1, true);
  std::string out(reinterpret_cast<const char*>(bson_get_data(&doc)), doc.len);
  bson_destroy(&doc);
  return out;
}

QueryParts parts_of_plan(const std::string& plan) {
  QueryParts parts;
  const codec::BsonView doc{reinterpret_cast<const uint8_t*>(plan.data()),
                            static_cast<uint32_t>(plan.size())};
  for (codec::BsonElements e(doc); e.next();) {
    if (e.key == "f") parts.filter = e.container();
    if (e.key == "s") parts.sort = e.container();
    if (e.key == "p") parts.pipeline = e.container();
    if (e.key == "hk") parts.hint_keys = e.container();
    if (e.key == "c") parts.collation = e.container();
    if (e.key == "hn") parts.hint_name = e.utf8();
    if (e.key == "t") parts.tailable = e.as_bool();
  }
  return parts;
}

// `text` cut to at most `max` bytes at a UTF-8 character's start, marked as cut.
std::string bounded(std::string_view text, size_t max) {
  if (text.size() <= max) return std::string(text);
  size_t end = max - 3;
  while (end > 0 && (static_cast<unsigned char>(text[end]) & 0xC0) == 0x80) --end;
  return std::string(text.substr(0, end)) + "...";
}

size_t field_bytes(const QueryShape& shape) {
  size_t bytes = 0;
  for (const auto& f : shape.equality) bytes += f.size();
  for (const auto& f : shape.range) bytes += f.size();
  for (const auto& k : shape.sort) bytes += k.field.size();
  for (const auto& op : shape.skipped) bytes += op.size();
  return bytes;
}

// 1: an index serves the shape, 0: none of the known ones does and they are all known, -1: not
// known. The shape's fields only: a filter whose fields are all under $or or $text is not judged.
int8_t judge_shape(const ShapeInfo& info, const NamespaceIndexes* known) {
  if (info.exempt) return 1;
  // A plan not kept: its fields alone cannot tell what its hint, sort, collation or partial
  // indexes decide, so neither "indexed" nor "unindexed" is said of it.
  if (info.plan_too_large) return -1;
  if (!info.plan.empty()) {
    // The guardrail's own judgement (plan_judgement.cc) of the shape's first query.
    switch (judge_plan(parts_of_plan(info.plan), known, nullptr).verdict) {
      case IndexVerdict::kServed:
        return 1;
      case IndexVerdict::kUnserved:
        return 0;
      case IndexVerdict::kUnknown:
        return -1;
    }
  }
  const QueryShape& shape = info.fields;
  if (shape.empty()) return shape.skipped.empty() ? 1 : -1;  // no filter: nothing to index
  if (index_serves(shape, kIdIndex)) return 1;
  if (known != nullptr) {
    for (const KnownIndex& index : known->indexes) {
      if (index_serves(shape, index.keys)) return 1;
    }
  }
  if (!shape.skipped.empty()) return -1;  // $or branches may each be served
  return known != nullptr && known->complete ? 0 : -1;
}

// The caller answers a command that broke nothing (most) itself, without the call.
WorkloadVerdict verdict_of(const Verdict& verdict, const Verdict* dry, int32_t index) {
  const auto& blocked = verdict.blocked_statements;
  if (verdict.block_command || std::binary_search(blocked.begin(), blocked.end(), index)) {
    return WorkloadVerdict::kBlocked;
  }
  auto concerns = [index](const Violation& v) {
    return v.statement_index < 0 || v.statement_index == index;
  };
  const auto& violations = verdict.violations;
  if (std::any_of(violations.begin(), violations.end(), concerns)) return WorkloadVerdict::kWarned;
  if (dry != nullptr && std::any_of(dry->violations.begin(), dry->violations.end(), concerns)) {
    return WorkloadVerdict::kCandidate;
  }
  return WorkloadVerdict::kPassed;
}

// Whether the guardrail found no index for statement `index` (-1: the command's query).
bool no_index_for(const Verdict& verdict, int32_t index) {
  return std::any_of(verdict.violations.begin(), verdict.violations.end(), [index](const auto& v) {
    return v.kind == RuleKind::kRequireIndex &&
           (v.statement_index < 0 || v.statement_index == index);
  });
}

std::shared_ptr<const ShapeInfo> describe_shape(const codec::CommandView& cmd,
                                                const HashedQuery& query,
                                                const codec::BsonView& statement) {
  QueryParts parts;
  parts.filter = query.filter;
  parts.sort = query.sort;
  parts.projection = query.projection;
  parts.pipeline = query.pipeline;
  auto info = std::make_shared<ShapeInfo>();
  // The namespace's own names, not its labels: past tracking.max_namespaces the labels are
  // "_other" for all, and each shape is still judged against its own collection's indexes.
  info->db = bounded(cmd.database, kMaxNameBytes);
  info->collection = bounded(cmd.collection, kMaxNameBytes);
  info->command = bounded(cmd.name, kMaxNameBytes);
  std::string text;
  append_shape_text(text, parts);
  info->shape = bounded(text, kMaxShapeText);
  bson_t filter, sort, pipeline;
  auto with = [](const codec::BsonView& v, bson_t* out) {
    return !v.empty() && bson_init_static(out, v.data, v.size) ? out : nullptr;
  };
  if (!parts.pipeline.empty()) {
    info->fields = pipeline_query_shape(with(parts.pipeline, &pipeline));
  } else {
    info->fields = query_shape(with(parts.filter, &filter), with(parts.sort, &sort));
  }
  if (field_bytes(info->fields) > kMaxFieldBytes) {
    info->fields = QueryShape{};  // too large to keep: judged as not known
    info->fields.skipped = {"(too large)"};
  }
  info->exempt = exempt_namespace(cmd.database, cmd.collection);
  // Once per new shape: the whole command's (or statement's) hint, collation and tailable too.
  const QueryParts plan_parts = statement.empty() ? query_parts(cmd) : statement_parts(statement);
  info->plan = plan_of(plan_parts);
  info->plan_too_large =
      info->plan.empty() && (!plan_parts.filter.empty() || !plan_parts.pipeline.empty());
  return info;
}

}  // namespace

uint32_t WorkloadObserver::observe(const codec::CommandView& cmd, std::string_view app_name,
                                   const CollectionStats* stats, const Verdict* dry,
                                   Verdict& verdict) {
  if (ledger_.max_shapes() == 0) return 0;  // off: nothing more of the ledger costs
  const bool statements = cmd.kind == CommandKind::kUpdate || cmd.kind == CommandKind::kDelete;
  const bool read = cmd.kind == CommandKind::kFind || cmd.kind == CommandKind::kAggregate ||
                    cmd.kind == CommandKind::kCount || cmd.kind == CommandKind::kDistinct ||
                    cmd.kind == CommandKind::kFindAndModify;
  if ((!statements && !read) || cmd.database.empty() || cmd.collection.empty()) return 0;
  if (stats == nullptr) return 0;
  // Past tracking.max_namespaces every namespace shares the overflow statistics and their id:
  // the ledger tells those namespaces apart by name.
  uint64_t namespace_key = stats->labels.id;
  if (stats->labels.db == kOverflowLabel) {
    namespace_key = base::hash_bytes(cmd.collection, base::hash_bytes(cmd.database));
  }
  const uint64_t seed = workload_seed(namespace_key, static_cast<uint32_t>(cmd.kind));
  const uint64_t catalog_version = catalog_.version();
  WorkloadMarks& marks = verdict.workload;
  uint32_t unindexed = 0;
  {
    WorkloadLedger::Local table = ledger_.local();
    WorkloadSketch& sketch = table.sketch();
    marks.table = table.table();
    auto note = [&](const HashedQuery& query, int32_t index, const codec::BsonView& statement)
        __attribute__((always_inline)) {
      const uint64_t key = workload_shape_hash(query, seed);
      SketchEntry* entry = sketch.find(key);
      if (entry == nullptr) entry = &sketch.admit(key, describe_shape(cmd, query, statement));
      ShapeStats& s = entry->stats;
      ++s.count;
      // Most commands break nothing: passed, without the call.
      const WorkloadVerdict judged = verdict.violations.empty() && dry == nullptr
                                         ? WorkloadVerdict::kPassed
                                         : verdict_of(verdict, dry, index);
      ++s.verdicts[static_cast<size_t>(judged)];
      // Most operations pass: only the others are asked whether the guardrail refused them.
      if (judged != WorkloadVerdict::kPassed && no_index_for(verdict, index)) ++s.unserved;
      const uint32_t app = s.app_line(app_name);
      ++s.apps[app].count;
      WorkloadSketch::charge(*entry, 1, 0);
      if (entry->judged_at != catalog_version) {
        entry->indexed =
            judge_shape(*entry->info, catalog_.find_cached(cmd.database, cmd.collection));
        entry->judged_at = catalog_version;
      }
      if (entry->indexed == 0) ++unindexed;
      // A refused statement never reaches the server: the reply's time, documents and errors
      // are the forwarded statements' alone.
      if (judged == WorkloadVerdict::kBlocked) return;
      ++marks.ops;
      // One mark per shape and app, however the batch's statements alternate between shapes.
      for (WorkloadMark& mark : marks.marks) {
        if (mark.key == key && mark.app == app) {
          ++mark.ops;
          return;
        }
      }
      if (marks.marks.size() < WorkloadMarks::kMaxMarks) {
        marks.marks.push_back(WorkloadMark{key, entry, 1, app});
      }
    };
    if (read) {
      // What describe() found: no other walk of the command.
      if (cmd.kind == CommandKind::kAggregate) {
        note(HashedQuery{{}, {}, {}, cmd.pipeline, std::nullopt}, -1, {});
      } else {
        // The guardrail may have asked query_scalar_key of the same filter already.
        note(HashedQuery{cmd.query, cmd.sort, cmd.projection, {}, cmd.query_scalar_key()}, -1, {});
      }
    } else {
      // An ordered batch stops at its first refused statement: the ones after it are never
      // sent, so they are neither passed nor refused.
      const auto& blocked = verdict.blocked_statements;
      const size_t sent = cmd.ordered && !blocked.empty() && !verdict.block_command
                              ? static_cast<size_t>(blocked.front()) + 1
                              : cmd.statements.size();
      for (size_t i = 0; i < cmd.statements.size() && i < sent; ++i) {
        HashedQuery query;
        for (codec::BsonElements field(cmd.statements[i]); field.next();) {
          if (field.key == "q") {
            query.filter = field.container();
            break;
          }
        }
        note(query, static_cast<int32_t>(i), cmd.statements[i]);
      }
    }
  }
  return unindexed;
}

WorkloadSnapshot WorkloadObserver::report() const {
  WorkloadSnapshot snapshot = ledger_.snapshot();
  for (WorkloadShape& shape : snapshot.shapes) {
    const auto known = catalog_.find(shape.info->db, shape.info->collection);
    shape.indexed = judge_shape(*shape.info, known.get());
    // Served as its first query was judged, yet some of its queries were not: the plan depends
    // on more than the shape keeps (values, options), so neither is said of the shape.
    if (shape.indexed == 1 && shape.stats.unserved > 0 && !shape.info->exempt) shape.indexed = -1;
    if (shape.indexed == 0) shape.index = suggest_index(shape.info->fields);
  }
  return snapshot;
}

}  // namespace docguard::rules
