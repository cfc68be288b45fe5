// The workload ledger in the engine: each read and each update / delete statement identified by
// its shape's hash, counted with its verdict and app, and judged (once per shape and index
// catalog version) against the known indexes for docguard_unindexed_operations_total.
#include <algorithm>
#include <functional>

#include "../engine_internal.h"
#include "docguard/rules/query_guardrail.h"

namespace docguard::rules {

namespace {

const IndexKeys kIdIndex = {{"_id", "1"}};

// What one kept shape may hold, whatever the client sends (BSON keys have no length limit in a
// message): its text, its namespace's and command's names, and the field paths and operator
// names it is judged by.
constexpr size_t kMaxShapeText = 1024;
constexpr size_t kMaxNameBytes = 256;
constexpr size_t kMaxFieldBytes = 2048;

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

std::shared_ptr<const ShapeInfo> describe_shape(const codec::CommandView& cmd,
                                                const QueryParts& parts) {
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
  return info;
}

}  // namespace

void Engine::note_workload(const codec::CommandView& cmd, const RequestContext& ctx,
                           const RuleSet& rules, const Verdict* dry, Verdict& verdict) {
  if (workload_.max_shapes() == 0) return;  // off: nothing more of the ledger costs
  const bool statements = cmd.kind == CommandKind::kUpdate || cmd.kind == CommandKind::kDelete;
  const bool read = cmd.kind == CommandKind::kFind || cmd.kind == CommandKind::kAggregate ||
                    cmd.kind == CommandKind::kCount || cmd.kind == CommandKind::kDistinct ||
                    cmd.kind == CommandKind::kFindAndModify;
  if ((!statements && !read) || cmd.database.empty() || cmd.collection.empty()) return;
  // The namespace judge() just looked up.
  CollectionStats* stats = scratch().judged_stats;
  if (stats == nullptr) return;
  // Past tracking.max_namespaces every namespace shares the overflow statistics and their id:
  // the ledger tells those namespaces apart by name.
  uint64_t namespace_key = stats->labels.id;
  if (stats->labels.db == kOverflowLabel) {
    namespace_key = std::hash<std::string_view>{}(cmd.database) * 0x9E3779B97F4A7C15ull ^
                    std::hash<std::string_view>{}(cmd.collection);
  }
  const uint64_t seed = workload_seed(namespace_key, static_cast<uint32_t>(cmd.kind));
  const uint64_t catalog_version = index_catalog_.version();
  WorkloadMarks& marks = verdict.workload;
  uint32_t unindexed = 0;
  {
    WorkloadLedger::Local table = workload_.local();
    WorkloadSketch& sketch = table.sketch();
    marks.table = table.table();
    auto note = [&](const QueryParts& parts, int32_t index) {
      const uint64_t key = workload_shape_hash(parts, seed);
      SketchEntry* entry = sketch.find(key);
      if (entry == nullptr) entry = &sketch.admit(key, describe_shape(cmd, parts));
      ShapeStats& s = entry->stats;
      ++s.count;
      const WorkloadVerdict judged = verdict_of(verdict, dry, index);
      ++s.verdicts[static_cast<size_t>(judged)];
      const uint32_t app = s.app_line(ctx.app_name);
      ++s.apps[app].count;
      WorkloadSketch::charge(*entry, 1, 0);
      if (entry->judged_at != catalog_version) {
        entry->indexed =
            judge_shape(*entry->info, index_catalog_.find_cached(cmd.database, cmd.collection));
        entry->judged_at = catalog_version;
      }
      if (entry->indexed == 0) ++unindexed;
      // A refused statement never reaches the server: the reply's time, documents and errors
      // are the forwarded statements' alone.
      if (judged == WorkloadVerdict::kBlocked) return;
      ++marks.ops;
      if (!marks.marks.empty() && marks.marks.back().key == key && marks.marks.back().app == app) {
        ++marks.marks.back().ops;
      } else if (marks.marks.size() < WorkloadMarks::kMaxMarks) {
        marks.marks.push_back(WorkloadMark{key, entry, 1, app});
      }
    };
    if (read) {
      // What describe() found: no other walk of the command.
      QueryParts parts;
      if (cmd.kind == CommandKind::kAggregate) {
        parts.pipeline = cmd.pipeline;
      } else {
        parts.filter = cmd.query;
        parts.sort = cmd.sort;
        parts.projection = cmd.projection;
      }
      note(parts, -1);
    } else {
      for (size_t i = 0; i < cmd.statements.size(); ++i) {
        QueryParts parts;
        for (codec::BsonElements field(cmd.statements[i]); field.next();) {
          if (field.key == "q") {
            parts.filter = field.container();
            break;
          }
        }
        note(parts, static_cast<int32_t>(i));
      }
    }
  }
  if (unindexed > 0 && measurements_ != nullptr) {
    const std::string& app = app_label(ctx.app_name, rules.tracking().max_apps);
    for (uint32_t i = 0; i < unindexed; ++i)
      measurements_->on_unindexed_operation(stats->labels, app);
  }
}

WorkloadSnapshot Engine::workload_report() const {
  WorkloadSnapshot snapshot = workload_.snapshot();
  for (WorkloadShape& shape : snapshot.shapes) {
    const auto known = index_catalog_.find(shape.info->db, shape.info->collection);
    shape.indexed = judge_shape(*shape.info, known.get());
    if (shape.indexed == 0) shape.index = suggest_index(shape.info->fields);
  }
  return snapshot;
}

}  // namespace docguard::rules
