#include <map>

#include "docguard/advisor/report.h"
#include "docguard/advisor/text_format.h"

namespace docguard::advisor {
namespace {

std::string upper(std::string text) {
  for (char& c : text) c = static_cast<char>(c >= 'a' && c <= 'z' ? c - 32 : c);
  return text;
}

std::string findings_of(const ReportInput& input, const std::string& db,
                        const std::string& collection) {
  std::string out;
  for (const Finding& f : input.findings) {
    if (f.db != db || f.collection != collection) continue;
    out += "  " + upper(severity_name(f.severity)) + "  " + kind_name(f.kind) +
           (f.field.empty() ? "" : "  `" + f.field + "`") + "\n";
    out += "        evidence:   " + f.evidence + " [" + f.source + "]\n";
    if (!f.apps.empty()) {
      out += "        apps:       ";
      for (size_t i = 0; i < f.apps.size(); ++i) out += (i ? ", " : "") + f.apps[i];
      out += "\n";
    }
    out += "        pattern:    " + f.pattern + "\n";
    out += "        suggestion: " + f.suggestion + "\n";
  }
  return out;
}

// What a cluster read adds to a collection's entry: how its documents were read, the server's
// statistics, index usage, and what could not be read. Nothing for a dump.
std::string cluster_facts_json(const CollectionMetadata& m) {
  if (m.source != "cluster") return "";
  std::string out = ", \"metadata_source\": \"cluster\", \"sample_method\": \"" +
                    json_escape(m.sample_method) +
                    "\", \"indexes_known\": " + (m.indexes_known ? "true" : "false");
  if (m.stats.known) {
    out += ", \"server_stats\": {\"count\": " + std::to_string(m.stats.documents) +
           ", \"size\": " + std::to_string(m.stats.size_bytes) +
           ", \"avg_obj_size\": " + std::to_string(m.stats.average_document_bytes) +
           ", \"storage_size\": " + std::to_string(m.stats.storage_bytes) + "}";
  }
  if (m.index_usage_known) {
    out += ", \"index_accesses\": {";
    bool first = true;
    for (const IndexSpec& index : m.indexes) {
      if (!index.accesses) continue;
      out += std::string(first ? "" : ", ") + "\"" + json_escape(index.name) +
             "\": " + std::to_string(*index.accesses);
      first = false;
    }
    out += "}";
  }
  out += ", \"unknown\": [";
  for (size_t i = 0; i < m.unknown.size(); ++i) {
    out += std::string(i ? ", " : "") + "\"" + json_escape(m.unknown[i]) + "\"";
  }
  return out + "]";
}

}  // namespace

std::string render_text(const ReportInput& input) {
  uint64_t documents = 0, bytes = 0;
  for (const CollectionProfile* p : input.profiles) {
    documents += p->documents();
    bytes += p->sizes().sum();
  }
  std::map<Severity, int> counts;
  for (const Finding& f : input.findings) ++counts[f.severity];
  std::string out = input.title + ": " + input.source + "\n" + with_commas(input.profiles.size()) +
                    " collections, " + with_commas(documents) + " documents, " +
                    human_bytes(bytes) + "; findings: " + std::to_string(counts[Severity::kBlock]) +
                    " block, " + std::to_string(counts[Severity::kWarn]) + " warn, " +
                    std::to_string(counts[Severity::kInfo]) + " info\n";
  std::string last_db;
  for (const CollectionProfile* p : input.profiles) {
    if (p->db() != last_db) {
      const std::string database_wide = findings_of(input, p->db(), "");
      if (!database_wide.empty()) out += "\n" + p->db() + ":\n" + database_wide;
      last_db = p->db();
    }
    const LogHistogram& s = p->sizes();
    out += "\n" + p->ns() + ": " + with_commas(p->documents()) + " docs, size p50 " +
           human_bytes(s.quantile(0.5)) + " p90 " + human_bytes(s.quantile(0.9)) + " p99 " +
           human_bytes(s.quantile(0.99)) + " max " + human_bytes(s.max()) + ", depth " +
           std::to_string(p->max_depth()) + ", " + metadata_summary(p->metadata()) + "\n";
    out += findings_of(input, p->db(), p->collection());
  }
  out += approaching_limits_text(input.approaching_limits);
  if (!input.unknown_facts.empty()) {
    out += "\nunknown facts (findings that need them are left out):\n";
    for (const std::string& line : input.unknown_facts) out += "  " + line + "\n";
  }
  return out;
}

std::string render_json(const ReportInput& input) {
  std::string out = "{\"title\": \"" + json_escape(input.title) + "\", \"source\": \"" +
                    json_escape(input.source) + "\",\n \"collections\": [";
  for (size_t i = 0; i < input.profiles.size(); ++i) {
    const CollectionProfile& p = *input.profiles[i];
    const LogHistogram& s = p.sizes();
    out += std::string(i ? "," : "") + "\n  {\"db\": \"" + json_escape(p.db()) +
           "\", \"collection\": \"" + json_escape(p.collection()) +
           "\", \"documents\": " + std::to_string(p.documents()) +
           ", \"size\": {\"p50\": " + std::to_string(s.quantile(0.5)) +
           ", \"p90\": " + std::to_string(s.quantile(0.9)) +
           ", \"p99\": " + std::to_string(s.quantile(0.99)) +
           ", \"max\": " + std::to_string(s.max()) +
           "}, \"max_depth\": " + std::to_string(p.max_depth()) +
           ", \"has_validator\": " + (p.metadata().has_validator ? "true" : "false") +
           ", \"field_paths\": " + std::to_string(p.fields().size()) +
           ", \"overflow_paths\": " + std::to_string(p.overflow_paths()) + ", \"indexes\": [";
    for (size_t k = 0; k < p.metadata().indexes.size(); ++k) {
      out += std::string(k ? ", " : "") + "\"" + json_escape(p.metadata().indexes[k].name) + "\"";
    }
    out += "]";
    out += cluster_facts_json(p.metadata());
    out += ", \"arrays\": [";
    bool first = true;
    for (const FieldStats& field : p.fields()) {
      if (field.array < 0) continue;
      const ArrayStats& a = p.arrays()[field.array];
      out += std::string(first ? "" : ",") + "\n    {\"path\": \"" + json_escape(field.path) +
             "\", \"count\": " + std::to_string(a.lengths.count()) +
             ", \"p50\": " + std::to_string(a.lengths.quantile(0.5)) +
             ", \"p99\": " + std::to_string(a.lengths.quantile(0.99)) +
             ", \"max\": " + std::to_string(a.lengths.max()) + ", \"longest\": [";
      for (size_t k = 0; k < a.longest.size(); ++k) {
        out += std::string(k ? ", " : "") + "{\"_id\": \"" + json_escape(a.longest[k].id) +
               "\", \"length\": " + std::to_string(a.longest[k].value) + "}";
      }
      out += "]}";
      first = false;
    }
    out += "]}";
  }
  out += "],\n \"findings\": [";
  for (size_t i = 0; i < input.findings.size(); ++i) {
    const Finding& f = input.findings[i];
    out += std::string(i ? "," : "") + "\n  {\"db\": \"" + json_escape(f.db) +
           "\", \"collection\": \"" + json_escape(f.collection) + "\", \"kind\": \"" +
           kind_name(f.kind) + "\", \"severity\": \"" + severity_name(f.severity) +
           "\", \"field\": \"" + json_escape(f.field) + "\", \"evidence\": \"" +
           json_escape(f.evidence) + "\", \"pattern\": \"" + json_escape(f.pattern) +
           "\", \"suggestion\": \"" + json_escape(f.suggestion) + "\", \"source\": \"" + f.source +
           "\", \"apps\": [";
    for (size_t k = 0; k < f.apps.size(); ++k) {
      out += std::string(k ? ", " : "") + "\"" + json_escape(f.apps[k]) + "\"";
    }
    out += "]}";
  }
  out += "],\n \"lookups\": [";
  for (size_t i = 0; i < input.lookups.size(); ++i) {
    const LookupEdge& e = input.lookups[i];
    out += std::string(i ? ", " : "") + "{\"from\": \"" + json_escape(e.from_ns) +
           "\", \"to\": \"" + json_escape(e.to_ns) + "\", \"count\": " + std::to_string(e.count) +
           "}";
  }
  out += "],\n \"approaching_limits\": " + approaching_limits_json(input.approaching_limits);
  out += ",\n \"unknown_facts\": [";
  for (size_t i = 0; i < input.unknown_facts.size(); ++i) {
    out += std::string(i ? ", " : "") + "\"" + json_escape(input.unknown_facts[i]) + "\"";
  }
  out += "]";
  for (const ReportSection& section : input.sections) {
    for (const auto& [name, value] : section.json_members) {
      out += ",\n \"" + json_escape(name) + "\": " + value;
    }
  }
  return out + "}\n";
}

}  // namespace docguard::advisor
