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

#include "docguard/rules/check_phases.h"
#include "docguard/rules/command_pass.h"
#include "docguard/rules/engine_sinks.h"
#include "docguard/rules/index_catalog.h"
#include "docguard/rules/namespace_registry.h"
#include "docguard/rules/query_guardrail.h"
#include "docguard/rules/rule_set.h"
#include "docguard/rules/write_statement.h"

namespace docguard::rules {

class GuardrailCheck {
 public:
  // The phases of the chain of checks it takes part in (check_phases.h).
  using Phases = phase::List<phase::BeginCommand, phase::Start, phase::JudgeRead, phase::JudgeWrite,
                             phase::LearnCatalogReply>;

  explicit GuardrailCheck(MeasurementSink* measurements) : measurements_(measurements) {}
  GuardrailCheck(const GuardrailCheck&) = delete;
  GuardrailCheck& operator=(const GuardrailCheck&) = delete;

  // Its phases in the chain of checks (check_chain.h).
  // A new command: an operation of it that cannot be judged is counted once, whichever of its
  // passes (the rules in force, the candidates) saw it.
  static void begin_command();
  // Before anything is judged: a guardrail rule's time limit for a command without its own
  // (verdict.max_time_ms).
  static void start(CommandPass& pass) {
    if (pass.limits->guardrail.max_time_ms > 0 && !pass.dry_run) limit_time(pass);
  }
  // A read's query (find, aggregate, count, distinct; an explained read is never refused).
  void judge_read(CommandPass& pass);
  // A write statement's query, or findAndModify's: judged before what it writes, as the server
  // plans a statement's query before it writes anything.
  void judge_write(CommandPass& pass, const QueryingStatement& statement) {
    if (statement.command_query) {
      judge_read(pass);
    } else if (statement.query != nullptr) {
      judge_query(pass, *statement.query, statement.index);
    }
  }

  // The successful reply to a catalog command (listIndexes, createIndexes, dropIndexes, drop,
  // ...): what it says of the namespace's indexes goes into the catalog.
  void learn_catalog_reply(const codec::CommandView& request, const codec::BsonView& reply) {
    learn_from_catalog_reply(catalog_, request, reply);
  }

  // What queries are judged against (index_catalog.h): fed by introspection and by the catalog
  // replies the engine sees.
  IndexCatalog& catalog() { return catalog_; }
  const IndexCatalog& catalog() const { return catalog_; }

  // Operations not judged for want of indexes per namespace, the `allow` exceptions of `rules`
  // and `candidates` (expired or not), the namespaces whose indexes are known.
  std::string status_json(const NamespaceRegistry& namespaces, const RuleSet* rules,
                          const RuleSet* candidates) const;

 private:
  // One query: the command's (`index` -1) or one statement's.
  void judge_query(CommandPass& pass, const QueryParts& parts, int32_t index);
  // Sets verdict.max_time_ms when the command is one the time limit applies to.
  static void limit_time(CommandPass& pass);

  MeasurementSink* measurements_;
  IndexCatalog catalog_;
  std::mutex expired_mutex_;
  // Expired `allow` exceptions already logged: "line|shape|until".
  std::set<std::string> expired_logged_;
};

}  // namespace docguard::rules
