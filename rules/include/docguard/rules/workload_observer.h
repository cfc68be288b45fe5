// The workload ledger as an observer of the engine's verdicts: after the checks have judged a
// command, each read and each update / delete statement is identified by its shape's hash,
// counted with its verdict and app, and judged (once per shape and index catalog version)
// against the known indexes for docguard_unindexed_operations_total. It decides nothing: the
// verdict is final before it runs, and it only writes the verdict's workload marks.
//
// Thread safety: any thread, like the engine.
#pragma once

#include <cstdint>
#include <string_view>

#include "docguard/codec/command_view.h"
#include "docguard/rules/collection_stats.h"
#include "docguard/rules/index_catalog.h"
#include "docguard/rules/verdict.h"
#include "docguard/rules/workload_ledger.h"

namespace docguard::rules {

class WorkloadObserver {
 public:
  // `catalog`, the guardrail's, outlives the observer.
  explicit WorkloadObserver(const IndexCatalog& catalog) : catalog_(catalog) {}
  WorkloadObserver(const WorkloadObserver&) = delete;
  WorkloadObserver& operator=(const WorkloadObserver&) = delete;

  // One judged command of namespace `stats` (null: none judged): its operations noted in the
  // ledger, their marks into verdict.workload. `dry`: the candidate rules' verdict, when there
  // are candidate rules. Returns how many of its operations no known index serves.
  uint32_t observe(const codec::CommandView& cmd, std::string_view app_name,
                   const CollectionStats* stats, const Verdict* dry, Verdict& verdict);

  // The ledger: replies recorded by the conversation (WorkloadLedger::record).
  WorkloadLedger& ledger() { return ledger_; }
  // Its snapshot, each shape judged against the indexes known now (indexed, index).
  WorkloadSnapshot report() const;

 private:
  const IndexCatalog& catalog_;
  WorkloadLedger ledger_;
};

}  // namespace docguard::rules
