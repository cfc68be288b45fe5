// The $lookup window as one check of the engine's chain: each read of a namespace is counted in
// its window with whether it joins (a $lookup or $graphLookup anywhere in its pipeline, or a
// view whose pipeline joins), and a read that takes the window's share of joining reads past
// max_lookup_ratio breaks the rule. Owns what it knows of views: the collections each one's
// pipeline joins, learned from the `create` commands it sees.
//
// Thread safety: any thread, like the engine.
#pragma once

#include <atomic>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "docguard/base/hash.h"
#include "docguard/codec/command_view.h"
#include "docguard/rules/check_phases.h"
#include "docguard/rules/engine_sinks.h"
#include "docguard/rules/rule_set.h"

namespace docguard::rules {

struct CommandPass;

class LookupCheck {
 public:
  // The phases of the chain of checks it takes part in (check_phases.h).
  using Phases = phase::List<phase::JudgeRead, phase::LearnDefinition>;

  LookupCheck(MeasurementSink* measurements, AdviceSink* advice)
      : measurements_(measurements), advice_(advice) {}
  LookupCheck(const LookupCheck&) = delete;
  LookupCheck& operator=(const LookupCheck&) = delete;

  // Its phases in the chain of checks (check_chain.h).
  // A read (find, aggregate, count, distinct, an explained one): counted in its namespace's
  // window unless the pass is a dry run, and judged against max_lookup_ratio.
  void judge_read(CommandPass& pass);
  // A command that defines rather than reads or writes, with the rules in force: a `create`
  // command's view joins are remembered (at most max_namespaces views).
  void learn_definition(const codec::CommandView& cmd, const RuleSet& rules);

 private:
  MeasurementSink* measurements_;
  AdviceSink* advice_;
  // A view (its namespace key, write_namespace_key) -> collections its pipeline joins.
  mutable std::mutex views_mutex_;
  std::unordered_map<std::string, std::vector<std::string>, base::StringHash, std::equal_to<>>
      views_;
  std::atomic<bool> have_views_{false};
};

}  // namespace docguard::rules
