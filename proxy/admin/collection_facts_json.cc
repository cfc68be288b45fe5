// /status "collections": what docguard knows of each collection, from its own reads of the
// cluster and from catalog commands seen in traffic.
#include "docguard/proxy/collection_facts_json.h"

#include "docguard/base/json_writer.h"
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
  json::Writer w;
  w.begin_object();
  for (const auto& f : advisor.collection_facts()) {
    const advisor::CollectionMetadata& m = f.metadata;
    w.key(m.db + "." + m.collection).begin_object();
    w.member("type", m.type.empty() ? "unknown" : m.type);
    w.member("source", f.cluster_facts ? "cluster" : "traffic");
    if (m.stats.known) {
      w.member("documents", m.stats.documents).member("size_bytes", m.stats.size_bytes);
      w.member("average_document_bytes", m.stats.average_document_bytes);
    }
    w.key("indexes");
    if (m.indexes_known) {
      w.begin_array();
      for (const auto& index : m.indexes) w.value(index.name);
      w.end_array();
    } else {
      w.null();
    }
    w.member("validator", validator_state(m)).member("sample_method", m.sample_method);
    w.member("sampled_documents", f.sampled_documents).key("last_read");
    if (f.read_at > 0) {
      w.value(base::utc_text_of_unix_seconds(f.read_at));
    } else {
      w.null();
    }
    w.key("unknown").begin_array();
    for (const std::string& part : m.unknown) w.value(part);
    w.end_array().end_object();
  }
  w.end_object();
  return w.take();
}

}  // namespace docguard::proxy
