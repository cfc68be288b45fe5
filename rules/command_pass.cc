// What every check reports through: a broken rule into the verdict, and the log fields a
// violation is told with.
#include "docguard/rules/command_pass.h"

#include <bson/bson.h>
#include <fmt/format.h>

#include <string>
#include <utility>

namespace docguard::rules {

int64_t wall_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

void CommandPass::add(RuleKind kind, const Bound& bound, std::string_view path, double measured,
                      int32_t index, const codec::BsonElements* id, Action action) {
  Violation v;
  v.kind = kind;
  v.rule_match = bound.match;
  v.rule_line = bound.line;
  v.rule_index = bound.rule;
  if (hits != nullptr) v.hits = hits->at(bound.rule);
  v.field_path = std::string(path);
  v.measured = measured;
  v.bound = bound.value;
  v.action = action;
  v.statement_index = index;
  if (id != nullptr) {
    bson_t b = BSON_INITIALIZER;
    if (id->append_to(&b, "_id")) {
      const uint8_t* data = bson_get_data(&b);
      v.failing_id.assign(data, data + b.len);
    }
    bson_destroy(&b);
  }
  if (action == Action::kBlock) {
    if (whole_command || index < 0) {
      verdict.block_command = true;
    } else {
      verdict.blocked_statements.push_back(index);
    }
  }
  verdict.violations.push_back(std::move(v));
}

void CommandPass::add_violation_fields(log::Fields& fields, const Violation& v,
                                       uint64_t suppressed) const {
  fields.add("ns", fmt::format("{}.{}", db, coll))
      .add("field", v.field_path)
      .add("measured", v.measured)
      .add("bound", v.bound)
      .add("match", v.rule_match)
      .add("rule_line", static_cast<int64_t>(v.rule_line))
      .add("command", cmd.name)
      .add("statement", static_cast<int64_t>(v.statement_index))
      .add("app", ctx.app_name)
      .add("user", ctx.user)
      .add("peer", ctx.peer)
      .add("suppressed_since_last", static_cast<int64_t>(suppressed));
}

}  // namespace docguard::rules
