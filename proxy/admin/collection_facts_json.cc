// /status "collections": what docguard knows of each collection, from its own reads of the
// cluster and from catalog commands seen in traffic.
#include "docguard/proxy/collection_facts_json.h"

#include <ctime>

#include "docguard/base/json_string.h"
#include "docguard/base/time_text.h"

namespace docguard::proxy {
namespace {

// "none", "error", "warn", "off", or "unknown" when the options were never read.
std::string validator_state(const advisor::CollectionMetadata& m) {
  if (!m.known) return "unknown";
  if (!m.has_validator) return "none";
  if (m.validation_level == "off") return "off";
  return m.validation_action == "warn" ? "warn" : "error";
}

}  // namespace

std::string collection_facts_json(const advisor::LiveAdvisor& advisor) {
  std::string out = "{";
  bool first = true;
  for (const auto& f : advisor.collection_facts()) {
    const advisor::CollectionMetadata& m = f.metadata;
    if (!first) out += ',';
    first = false;
    json::append_string(out, m.db + "." + m.collection);
    out += ":{\"type\":";
    json::append_string(out, m.type.empty() ? "unknown" : m.type);
    out += ",\"source\":";
    json::append_string(out, f.cluster_facts ? "cluster" : "traffic");
    if (m.stats.known) {
      out += ",\"documents\":" + std::to_string(m.stats.documents) +
             ",\"size_bytes\":" + std::to_string(m.stats.size_bytes) +
             ",\"average_document_bytes\":" + std::to_string(m.stats.average_document_bytes);
    }
    out += ",\"indexes\":";
    if (m.indexes_known) {
      out += '[';
      for (size_t i = 0; i < m.indexes.size(); ++i) {
        if (i) out += ',';
        json::append_string(out, m.indexes[i].name);
      }
      out += ']';
    } else {
      out += "null";
    }
    out += ",\"validator\":";
    json::append_string(out, validator_state(m));
    out += ",\"sample_method\":";
    json::append_string(out, m.sample_method);
    out += ",\"sampled_documents\":" + std::to_string(f.sampled_documents) + ",\"last_read\":";
    if (f.read_at > 0) {
      json::append_string(out, base::utc_text_of_unix_seconds(f.read_at));
    } else {
      out += "null";
    }
    out += ",\"unknown\":[";
    for (size_t i = 0; i < m.unknown.size(); ++i) {
      if (i) out += ',';
      json::append_string(out, m.unknown[i]);
    }
    out += "]}";
  }
  return out + "}";
}

}  // namespace docguard::proxy
