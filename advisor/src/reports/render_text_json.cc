#include <map>

#include "docguard/advisor/report.h"
#include "docguard/advisor/text_format.h"
#include "docguard/base/json_writer.h"

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
void write_cluster_facts(json::Writer& w, const CollectionMetadata& m) {
  if (m.source != "cluster") return;
  w.member("metadata_source", "cluster")
      .member("sample_method", m.sample_method)
      .member("indexes_known", m.indexes_known);
  if (m.stats.known) {
    w.key("server_stats")
        .begin_object()
        .member("count", m.stats.documents)
        .member("size", m.stats.size_bytes)
        .member("avg_obj_size", m.stats.average_document_bytes)
        .member("storage_size", m.stats.storage_bytes)
        .end_object();
  }
  if (m.index_usage_known) {
    w.key("index_accesses").begin_object();
    for (const IndexSpec& index : m.indexes) {
      if (index.accesses) w.member(index.name, *index.accesses);
    }
    w.end_object();
  }
  w.key("unknown").begin_array();
  for (const std::string& fact : m.unknown) w.value(fact);
  w.end_array();
}

void write_collection(json::Writer& w, const CollectionProfile& p) {
  const LogHistogram& s = p.sizes();
  w.begin_object()
      .member("db", p.db())
      .member("collection", p.collection())
      .member("documents", p.documents())
      .key("size")
      .begin_object()
      .member("p50", s.quantile(0.5))
      .member("p90", s.quantile(0.9))
      .member("p99", s.quantile(0.99))
      .member("max", s.max())
      .end_object()
      .member("max_depth", p.max_depth())
      .member("has_validator", p.metadata().has_validator)
      .member("field_paths", p.fields().size())
      .member("overflow_paths", p.overflow_paths())
      .key("indexes")
      .begin_array();
  for (const IndexSpec& index : p.metadata().indexes) w.value(index.name);
  w.end_array();
  write_cluster_facts(w, p.metadata());
  w.key("arrays").begin_array();
  for (const FieldStats& field : p.fields()) {
    if (field.array < 0) continue;
    const ArrayStats& a = p.arrays()[field.array];
    w.begin_object()
        .member("path", field.path)
        .member("count", a.lengths.count())
        .member("p50", a.lengths.quantile(0.5))
        .member("p99", a.lengths.quantile(0.99))
        .member("max", a.lengths.max())
        .key("longest")
        .begin_array();
    for (const auto& longest : a.longest) {
      w.begin_object().member("_id", longest.id).member("length", longest.value).end_object();
    }
    w.end_array().end_object();
  }
  w.end_array().end_object();
}

void write_finding(json::Writer& w, const Finding& f) {
  w.begin_object()
      .member("db", f.db)
      .member("collection", f.collection)
      .member("kind", kind_name(f.kind))
      .member("severity", severity_name(f.severity))
      .member("field", f.field)
      .member("evidence", f.evidence)
      .member("pattern", f.pattern)
      .member("suggestion", f.suggestion)
      .member("source", f.source)
      .key("apps")
      .begin_array();
  for (const std::string& app : f.apps) w.value(app);
  w.end_array().end_object();
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
  json::Writer w;
  w.begin_object().member("title", input.title).member("source", input.source);
  w.key("collections").begin_array();
  for (const CollectionProfile* p : input.profiles) write_collection(w, *p);
  w.end_array().key("findings").begin_array();
  for (const Finding& f : input.findings) write_finding(w, f);
  w.end_array().key("lookups").begin_array();
  for (const LookupEdge& e : input.lookups) {
    w.begin_object()
        .member("from", e.from_ns)
        .member("to", e.to_ns)
        .member("count", e.count)
        .end_object();
  }
  w.end_array().key("approaching_limits");
  write_approaching_limits(w, input.approaching_limits);
  w.key("unknown_facts").begin_array();
  for (const std::string& fact : input.unknown_facts) w.value(fact);
  w.end_array();
  for (const ReportSection& section : input.sections) {
    for (const auto& [name, value] : section.json_members) w.key(name).raw(value);
  }
  w.end_object();
  return w.take() + "\n";
}

}  // namespace docguard::advisor
