// The live advisor's detectors (the traffic patterns) and its report.
#include <algorithm>
#include <cstdio>

#include "docguard/advisor/detectors.h"
#include "docguard/advisor/live_advisor.h"
#include "docguard/advisor/text_format.h"
#include "live_state.h"

namespace docguard::advisor {
namespace {

std::string percent(double share) {
  char text[32];
  std::snprintf(text, sizeof text, "%.0f%%", share * 100);
  return text;
}

std::string joined(const std::set<std::string>& names) {
  std::string out;
  for (const auto& n : names) out += (out.empty() ? "" : ", ") + n;
  return out;
}

// The kinds traffic findings that reads show (their filters, pipelines, projections); the
// others rest on writes.
bool shown_by_reads(Finding::Kind kind) {
  return kind == Finding::Kind::kJoinHeavy || kind == Finding::Kind::kUnindexedReference ||
         kind == Finding::Kind::kUnindexedQuery || kind == Finding::Kind::kComputed ||
         kind == Finding::Kind::kCaseInsensitiveRegex || kind == Finding::Kind::kSubset;
}

constexpr size_t kAppsPerFinding = 5;

}  // namespace

// The document detectors: on the documents sampled from the cluster when there are some (what
// is stored), and on the documents of inserts seen in traffic for what the sample did not show.
void LiveAdvisor::detect_documents_locked(const Namespace& ns, std::vector<Finding>& out) const {
  const AdvisorSettings& s = settings_;
  auto documents = [&](const CollectionProfile& p, std::vector<Finding>& found) {
    run_document_detectors(p, s, found);
  };
  const size_t first = out.size();
  if (!ns.stored) out.insert(out.end(), ns.shared_findings.begin(), ns.shared_findings.end());
  if (ns.stored) {
    documents(*ns.stored, out);
    for (size_t i = first; i < out.size(); ++i) out[i].source = "sample";
    if (ns.metadata.indexes_known) {
      const size_t before = out.size();
      detect_too_many_indexes(*ns.stored, s, out);
      for (size_t i = before; i < out.size(); ++i) out[i].source = "metadata";
    }
  }
  std::vector<Finding> traffic;
  documents(ns.profile, traffic);
  for (Finding& f : traffic) {
    const bool shown =
        std::any_of(out.begin() + static_cast<std::ptrdiff_t>(first), out.end(),
                    [&](const Finding& g) { return g.kind == f.kind && g.field == f.field; });
    if (shown) continue;
    f.source = "traffic";
    if (f.kind == Finding::Kind::kBucket && ns.last_insert > ns.first_insert) {
      const double rate = static_cast<double>(ns.inserts) / (ns.last_insert - ns.first_insert);
      char text[96];
      std::snprintf(text, sizeof text, "; observed %.0f inserts/s (sampled)", rate);
      f.evidence += text;
    }
    out.push_back(std::move(f));
  }
}

void LiveAdvisor::detect_locked(std::vector<Finding>& out,
                                const std::vector<ApproachingLimit>& approaching,
                                const TrafficShapes& shapes) const {
  const AdvisorSettings& s = settings_;
  for (const auto& [name, ns_ptr] : namespaces_) {
    const Namespace& ns = *ns_ptr;
    const CollectionProfile& p = ns.profile;
    const size_t namespace_first = out.size();
    detect_documents_locked(ns, out);
    const size_t traffic_first = out.size();

    for (const auto& [field, pushes] : ns.unbounded_pushes) {
      if (pushes < s.live_min_pushes) continue;
      Finding f = new_finding(p, Finding::Kind::kUnboundedArray, Severity::kWarn, field);
      f.evidence = with_commas(pushes) + " $push/$addToSet updates of `" + field +
                   "` without $slice (threshold " + with_commas(s.live_min_pushes) + ")";
      f.pattern = "reference (one-to-many unbounded) or bucket";
      f.suggestion = "`" + field + "` grows with every update and nothing bounds it. Move its " +
                     "elements to their own collection with a reference to the `" + p.collection() +
                     "` document, or bucket them (one document per N elements); " +
                     "if only the latest matter, push with $each and $slice.";
      out.push_back(std::move(f));
    }

    if (ns.reads >= s.live_min_reads && ns.reads_with_lookup > 0) {
      const double ratio =
          static_cast<double>(ns.reads_with_lookup) / static_cast<double>(ns.reads);
      if (ratio >= s.lookup_ratio_warn) {
        for (const auto& [from, info] : ns.lookups) {
          Finding f = new_finding(p, Finding::Kind::kJoinHeavy, Severity::kWarn, info.local_field);
          f.evidence = with_commas(ns.reads_with_lookup) + " of " + with_commas(ns.reads) +
                       " reads join (" + percent(ratio) + ", threshold " +
                       percent(s.lookup_ratio_warn) + "); $lookup from `" + from + "`" +
                       (info.local_field.empty()
                            ? ""
                            : " on " + info.local_field + " = " + from + "." + info.foreign_field) +
                       ", " + with_commas(info.count) + " times (sampled)";
          f.pattern = "embed (one-to-one / one-to-few) or extended reference";
          f.suggestion =
              "Most reads of `" + p.collection() + "` join `" + from + "`. If each document " +
              "has one or a few `" + from + "`, embed them; otherwise copy the fields the reads " +
              "use" + (info.used_fields.empty() ? "" : " (" + joined(info.used_fields) + ")") +
              " next to `" + (info.local_field.empty() ? "the reference" : info.local_field) +
              "` (extended reference) and drop the $lookup.";
          out.push_back(std::move(f));
        }
      }
    }

    detect_unindexed_locked(ns, shapes, out);
    detect_index_list_locked(ns, out);

    for (const auto& [hash, group] : ns.groups) {
      if (group.first < s.computed_min_runs) continue;
      Finding f = new_finding(p, Finding::Kind::kComputed, Severity::kInfo, "");
      f.evidence = "the same $group pipeline (by " + group.second + ") ran " +
                   with_commas(group.first) + " times (sampled, threshold " +
                   with_commas(s.computed_min_runs) + ")";
      f.pattern = "computed";
      f.suggestion = "Store the result instead of recomputing it on every read: keep the totals " +
                     std::string("in a summary document updated by the writes ($inc), or ") +
                     "refresh it on a schedule with $merge, and read that.";
      out.push_back(std::move(f));
    }

    if (ns.regex_i > 0) {
      Finding f =
          new_finding(p, Finding::Kind::kCaseInsensitiveRegex, Severity::kWarn, ns.regex_field);
      f.evidence = with_commas(ns.regex_i) + (ns.regex_i == 1 ? " query" : " queries") +
                   " with a case-insensitive $regex on `" + ns.regex_field +
                   "` (sampled); such a regex cannot use an index efficiently";
      f.pattern = "case-insensitive index or normalised copy";
      f.suggestion = "Create an index with a collation of strength 1 or 2 and query with it, " +
                     std::string("or store a lower-cased copy of `") + ns.regex_field +
                     "` and match on that (Atlas Search for full-text needs).";
      out.push_back(std::move(f));
    }

    const double mean_bytes =
        p.documents() ? static_cast<double>(p.sizes().sum()) / static_cast<double>(p.documents())
                      : 0;
    if (ns.projected_reads >= s.live_min_reads &&
        mean_bytes >= static_cast<double>(s.subset_min_document_bytes)) {
      uint64_t projected_bytes = 0, total_bytes = 0;
      std::vector<std::pair<uint64_t, std::string>> rarely_read;
      for (const FieldStats& field : p.fields()) {
        if (field.depth != 1) continue;
        total_bytes += field.total_value_bytes;
        auto it = ns.projected_fields.find(field.path);
        const bool often = it != ns.projected_fields.end() && it->second * 2 >= ns.projected_reads;
        if (often) {
          projected_bytes += field.total_value_bytes;
        } else if (field.path != "_id") {
          rarely_read.emplace_back(field.total_value_bytes, field.path);
        }
      }
      const double share =
          total_bytes ? static_cast<double>(projected_bytes) / static_cast<double>(total_bytes) : 1;
      if (share <= s.subset_max_projected_share && !rarely_read.empty()) {
        std::sort(rarely_read.rbegin(), rarely_read.rend());
        std::string names;
        for (size_t i = 0; i < rarely_read.size() && i < 5; ++i) {
          names += (i ? ", " : "") + rarely_read[i].second;
        }
        Finding f =
            new_finding(p, Finding::Kind::kSubset, Severity::kInfo, rarely_read.front().second);
        f.evidence = with_commas(ns.projected_reads) + " reads project " + percent(share) +
                     " of documents averaging " + human_bytes(static_cast<uint64_t>(mean_bytes)) +
                     " (threshold " + percent(s.subset_max_projected_share) + ")";
        f.pattern = "subset";
        f.suggestion = "The reads use a small part of each document. Keep what they read in `" +
                       p.collection() + "` and move the rarely read fields (" + names +
                       ") to a companion collection keyed by _id, read only when needed.";
        out.push_back(std::move(f));
      }
    }

    for (size_t i = traffic_first; i < out.size(); ++i) {
      if (out[i].source == "dump") out[i].source = "traffic";
    }
    detect_validator_locked(ns, out);
    name_apps_locked(ns, out, namespace_first);
  }
  detect_collections_locked(out);
  for (const ApproachingLimit& row : approaching) {
    if (row.within_horizon) out.push_back(approaching_limit_finding(row, s));
  }
  sort_findings(out);
}

void LiveAdvisor::set_forecast_source(std::function<std::vector<rules::PathForecast>()> source) {
  forecast_source_ = std::move(source);
}

std::vector<rules::PathForecast> LiveAdvisor::forecasts() const {
  return forecast_source_ ? forecast_source_() : std::vector<rules::PathForecast>{};
}

std::vector<ApproachingLimit> LiveAdvisor::approaching_locked(
    const std::vector<rules::PathForecast>& forecasts) const {
  std::vector<ApproachingLimit> rows =
      approaching_limits(forecasts, settings_, settings_.forecast_report_rows);
  for (ApproachingLimit& row : rows) {
    auto it = namespaces_.find(row.db + "." + row.collection);
    if (it != namespaces_.end()) row.apps = it->second->push_apps.top(kAppsPerFinding);
  }
  return rows;
}

// Attributed per namespace and kind of traffic, not per finding: what it costs is three small
// maps per namespace, and the apps writing or reading a collection are the ones to talk to.
void LiveAdvisor::name_apps_locked(const Namespace& ns, std::vector<Finding>& out,
                                   size_t first) const {
  for (size_t i = first; i < out.size(); ++i) {
    Finding& f = out[i];
    if (f.source != "traffic") continue;
    const AppCounts& apps = f.kind == Finding::Kind::kUnboundedArray ? ns.push_apps
                            : shown_by_reads(f.kind)                 ? ns.read_apps
                                                                     : ns.write_apps;
    f.apps = apps.top(kAppsPerFinding);
  }
}

// Findings about a database's or the deployment's collections together, as the dump scan gives
// them: on the collections read from the cluster, whose sampled documents show their shape.
// Collections known only from traffic are left out: their inserts show only what the
// application wrote lately, and many collections are never written through docguard.
void LiveAdvisor::detect_collections_locked(std::vector<Finding>& out) const {
  std::vector<const CollectionProfile*> stored;
  for (const auto& [name, ns] : namespaces_) {
    if (ns->stored) stored.push_back(ns->stored.get());
  }
  if (stored.empty()) return;
  detect_too_many_collections(stored, settings_, out);
  detect_same_shape_collections(stored, settings_, out);
}

void LiveAdvisor::set_workload_ledger(const rules::WorkloadLedger* ledger) {
  workload_ledger_ = ledger;
}

bool LiveAdvisor::shapes_from_ledger() const {
  return workload_ledger_ != nullptr && workload_ledger_->max_shapes() > 0;
}

LiveAdvisor::TrafficShapes LiveAdvisor::ledger_shapes() const {
  TrafficShapes out;
  if (!shapes_from_ledger()) return out;
  out.from_ledger = true;
  for (const rules::WorkloadShape& shape : workload_ledger_->snapshot().shapes) {
    const std::string name = shape.info->db + "." + shape.info->collection;
    auto it = out.by_namespace.find(name);
    if (it == out.by_namespace.end()) {
      it = out.by_namespace.emplace(name, QueryShapeCounter(settings_.query_shapes_per_collection))
               .first;
    }
    it->second.record(shape.info->fields, shape.stats.count);
  }
  return out;
}

std::vector<Finding> LiveAdvisor::findings() const {
  const std::vector<rules::PathForecast> growing = forecasts();  // the engine's locks, not ours
  const TrafficShapes shapes = ledger_shapes();
  std::lock_guard lock(mutex_);
  std::vector<Finding> out;
  detect_locked(out, approaching_locked(growing), shapes);
  return out;
}

ReportInput LiveAdvisor::report_locked(const std::vector<rules::PathForecast>& forecasts,
                                       const TrafficShapes& shapes) const {
  ReportInput input;
  input.source = "live traffic through docguard (commands sampled 1 in " +
                 std::to_string(settings_.live_sample_every) + ")";
  if (expect_cluster_facts_) {
    input.source +=
        " and docguard's own reads of the cluster (indexes, validators, a sample of "
        "each collection's documents)";
  }
  input.settings = settings_;
  for (const auto& [name, ns] : namespaces_) {
    // What is stored (the sample) when it was read, else what the inserts showed.
    if (ns->stored && ns->stored->documents() > 0) {
      input.profiles.push_back(ns->stored.get());
    } else if (ns->profile.documents() > 0) {
      input.profiles.push_back(&ns->profile);
    }
    for (const auto& [from, info] : ns->lookups) {
      input.lookups.push_back({name, ns->profile.db() + "." + from, info.count});
    }
  }
  input.approaching_limits = approaching_locked(forecasts);
  detect_locked(input.findings, input.approaching_limits, shapes);
  input.unknown_facts = unknown_facts_locked();
  return input;
}

std::string LiveAdvisor::render(ReportFormat format, std::vector<ReportSection> sections) const {
  const std::vector<rules::PathForecast> growing = forecasts();
  const TrafficShapes shapes = ledger_shapes();
  std::lock_guard lock(mutex_);
  ReportInput input = report_locked(growing, shapes);
  input.sections = std::move(sections);
  return advisor::render(input, format);
}

}  // namespace docguard::advisor
