// Writes a command makes to a collection other than the one it names: an aggregate's $out or
// $merge, mapReduce's out, applyOps' insert and update entries. The server validates the
// documents they write against the target's validator, which docguard does not see (they come
// from the pipeline or the stored data): a $jsonSchema rule on the target cannot judge them, so
// each such command is counted as unjudged there, never refused.
#include <algorithm>
#include <array>
#include <string>
#include <utility>

#include "docguard/codec/bson_elements.h"
#include "docguard/codec/command_view.h"
#include "engine_internal.h"

namespace docguard::rules {

namespace {

using codec::BsonElements;
using Target = std::pair<std::string_view, std::string_view>;  // db, collection

// {db, coll} (the $out and $merge document forms), else `coll` in `db`.
Target target_of(const BsonElements& e, std::string_view db, const char* coll_key) {
  if (e.holds_utf8()) return {db, e.utf8()};
  if (!e.holds_document()) return {};
  const codec::BsonView doc = e.container();
  const std::string_view named_db = codec::find_string(doc, "db");
  return {named_db.empty() ? db : named_db, codec::find_string(doc, coll_key)};
}

// Where the last stage of an aggregate writes ({} when it writes nowhere).
Target pipeline_target(const codec::CommandView& cmd) {
  if (!codec::well_framed(cmd.pipeline)) return {};
  BsonElements last(nullptr, 0);
  for (BsonElements stage(cmd.pipeline); stage.next();) last = stage;
  if (last.value == nullptr || !last.holds_document()) return {};
  BsonElements op(last.container());
  if (!op.next()) return {};
  if (op.key == "$out") return target_of(op, cmd.database, "coll");
  if (op.key != "$merge") return {};
  if (op.holds_utf8()) return {cmd.database, op.utf8()};
  if (!op.holds_document()) return {};
  BsonElements into(op.container());
  return into.find("into") ? target_of(into, cmd.database, "coll") : Target{};
}

// mapReduce's out: "coll", {replace | merge | reduce: "coll", db}; {inline: 1} writes nowhere.
Target map_reduce_target(const codec::CommandView& cmd) {
  BsonElements out(cmd.body);
  if (!out.find("out")) return {};
  if (out.holds_utf8()) return {cmd.database, out.utf8()};
  if (!out.holds_document()) return {};
  const codec::BsonView spec = out.container();
  const std::string_view db = codec::find_string(spec, "db");
  for (const char* action : {"replace", "merge", "reduce"}) {
    const std::string_view coll = codec::find_string(spec, action);
    if (!coll.empty()) return {db.empty() ? cmd.database : db, coll};
  }
  return {};
}

}  // namespace

void Engine::count_writes_elsewhere(const codec::CommandView& cmd, const RequestContext& ctx,
                                    const RuleSet& rules) {
  if (measurements_ == nullptr) return;
  const auto tell = [&](Target t) {
    if (t.first.empty() || t.second.empty()) return;
    CollectionStats* stats = stats_for(t.first, t.second, rules);
    const auto limits =
        resolved_limits(stats, t.first, t.second, rules, scope_of(ctx, rules), false);
    if (!limits->schemas.empty()) measurements_->on_schema_unjudged(stats->labels);
  };
  if (cmd.kind == CommandKind::kAggregate) {
    tell(pipeline_target(cmd));
  } else if (cmd.name == "mapReduce" || cmd.name == "mapreduce") {
    tell(map_reduce_target(cmd));
  } else if (cmd.name == "applyOps") {
    BsonElements ops(cmd.body);
    if (!ops.find("applyOps") || !ops.holds_array() || !codec::well_framed(ops.container())) {
      return;
    }
    // Each namespace once per command, and at most 16 of them.
    std::array<Target, 16> told{};
    size_t count = 0;
    for (BsonElements op(ops.container()); op.next() && count < told.size();) {
      if (!op.holds_document()) continue;
      const std::string_view kind = codec::find_string(op.container(), "op");
      if (kind != "i" && kind != "u") continue;
      const Target t = codec::split_namespace(codec::find_string(op.container(), "ns"));
      if (t.first.empty() ||
          std::find(told.begin(), told.begin() + count, t) != told.begin() + count) {
        continue;
      }
      told[count++] = t;
      tell(t);
    }
  }
}

}  // namespace docguard::rules
