// Candidate rules: what the dry-run pass found is counted per rule and per client app, exported
// through MeasurementSink::on_candidate_violation and logged at most once per rule per
// interval. It never reaches the verdict, the per-collection violation counts or the violation
// log.
#include <spdlog/spdlog.h>

#include "engine_internal.h"

namespace docguard::rules {

void Engine::report_candidates(CommandPass& s, size_t first) {
  const auto& violations = s.verdict.violations;
  // Bounded like the violations' app label (tracking.max_apps): the per-app counts stay small.
  const std::string& app = app_label(s.ctx.app_name, s.rules.tracking().max_apps);
  const int64_t unix_ms = wall_ms();
  const auto t = now();
  for (size_t i = first; i < violations.size(); ++i) {
    const Violation& v = violations[i];
    if (v.hits == nullptr) continue;  // every candidate rule has counters; a bound has a rule
    v.hits->count(v.action, unix_ms);
    v.hits->count_app(app, v.action);
    if (measurements_ != nullptr) {
      measurements_->on_candidate_violation(s.stats->labels, rule_name(v.kind), v.action, app);
    }
    uint64_t suppressed = 0;
    if (!v.hits->should_log(t, CollectionStats::kLogInterval, &suppressed)) continue;
    log::Fields fields;
    const std::string& id = s.hits->id(v.rule_index);
    fields.add("rule", rule_name(v.kind))
        .add("would", action_name(v.action))
        .add("candidate", id.empty() ? s.hits->key(v.rule_index) : id);
    s.add_violation_fields(fields, v, suppressed);
    spdlog::info("{}", fields.message(v.action == Action::kBlock ? "candidate rule would block"
                                                                 : "candidate rule would warn"));
  }
}

std::vector<CandidateVerdicts> Engine::candidate_verdicts() const {
  const auto snapshot = snapshot_.load();
  if (snapshot->candidate_hits == nullptr) return {};
  return rules::candidate_verdicts(*snapshot->candidate_hits);
}

}  // namespace docguard::rules
