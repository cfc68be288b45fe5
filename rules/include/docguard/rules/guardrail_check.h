// The query guardrail as one check of the engine's chain: for each read (find, aggregate's
// leading $match/$sort, count, distinct, findAndModify) and each write statement (update,
// delete, bulkWrite ops) of a namespace some applying rule says `require_index` for, whether a
// known index serves the filter. Unserved: a violation of rule "require_index" (warn or block,
// or a candidate's count), unless an unexpired `allow` entry names the shape. Indexes not known:
// counted, never refused. Owns what it judges against (the index catalog) and its own state.
//
// Thread safety: any thread, like the engine.
#pragma once

#include <cstdint>
#include <mutex>
#include <set>
#include <string>

#include "docguard/rules/engine_sinks.h"
#include "docguard/rules/index_catalog.h"
#include "docguard/rules/namespace_registry.h"
#include "docguard/rules/query_guardrail.h"
#include "docguard/rules/rule_set.h"

namespace docguard::rules {

struct CommandPass;

class GuardrailCheck {
 public:
  explicit GuardrailCheck(MeasurementSink* measurements) : measurements_(measurements) {}
  GuardrailCheck(const GuardrailCheck&) = delete;
  GuardrailCheck& operator=(const GuardrailCheck&) = delete;

  // A new command: an operation of it that cannot be judged is counted once, whichever of its
  // passes (the rules in force, the candidates) saw it.
  static void begin_command();
  // The whole command's query (reads, findAndModify).
  void judge_read(CommandPass& pass);
  // One query: the command's (`index` -1) or one statement's.
  void judge_query(CommandPass& pass, const QueryParts& parts, int32_t index);
  // Sets verdict.max_time_ms when a guardrail rule gives this command a time limit.
  static void limit_time(CommandPass& pass);

  // What queries are judged against (index_catalog.h): fed by introspection and by the catalog
  // replies the engine sees.
  IndexCatalog& catalog() { return catalog_; }
  const IndexCatalog& catalog() const { return catalog_; }

  // Operations not judged for want of indexes per namespace, the `allow` exceptions of `rules`
  // and `candidates` (expired or not), the namespaces whose indexes are known.
  std::string status_json(const NamespaceRegistry& namespaces, const RuleSet* rules,
                          const RuleSet* candidates) const;

 private:
  MeasurementSink* measurements_;
  IndexCatalog catalog_;
  std::mutex expired_mutex_;
  // Expired `allow` exceptions already logged: "line|shape|until".
  std::set<std::string> expired_logged_;
};

}  // namespace docguard::rules
