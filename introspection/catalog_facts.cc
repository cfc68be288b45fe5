#include "docguard/introspection/catalog_facts.h"

#include "docguard/advisor/cluster_source.h"
#include "docguard/advisor/collection_metadata.h"
#include "docguard/advisor/dump_reader.h"

namespace docguard::introspection {

void learn_indexes(rules::Engine& engine, const advisor::CollectionMetadata& m,
                   std::string_view source) {
  if (m.is_view() || m.is_timeseries()) {
    // Planned against another collection's indexes: never judged as a scan of its own.
    engine.index_catalog().set_kind(
        m.db, m.collection,
        m.is_view() ? rules::NamespaceKind::kView : rules::NamespaceKind::kTimeseries, source);
    return;
  }
  if (!m.known || !m.indexes_known) {
    engine.index_catalog().forget(m.db, m.collection);
    return;
  }
  std::vector<rules::KnownIndex> indexes;
  indexes.reserve(m.indexes.size());
  for (const advisor::IndexSpec& spec : m.indexes) {
    rules::KnownIndex index =
        rules::known_index_of({reinterpret_cast<const uint8_t*>(spec.spec.data()),
                               static_cast<uint32_t>(spec.spec.size())});
    if (index.keys.empty()) index = rules::KnownIndex{spec.name, spec.keys};
    indexes.push_back(std::move(index));
  }
  engine.index_catalog().set(m.db, m.collection, std::move(indexes), source);
}

namespace {

// Takes each collection's metadata and skips its documents.
class IndexVisitor final : public advisor::DumpVisitor {
 public:
  IndexVisitor(rules::Engine& engine, std::string_view source) : engine_(engine), source_(source) {}
  void on_collection(const advisor::CollectionMetadata& metadata) override {
    learn_indexes(engine_, metadata, source_);
  }
  base::Expected<void> on_document(std::string_view, std::string_view, const uint8_t*,
                                   uint32_t) override {
    return {};
  }

 private:
  rules::Engine& engine_;
  std::string_view source_;
};

}  // namespace

base::Expected<void> learn_indexes_from_dump(const std::string& path, rules::Engine& engine) {
  IndexVisitor visitor(engine, "dump");
  const advisor::ReadResult read = advisor::read_dump(path, visitor);
  if (!read) {
    return base::Error{base::ErrorKind::kIo, base::ErrorSource::kConfiguration,
                       "cannot read the dump: " + read.error().to_string(), path};
  }
  return {};
}

bool names_a_cluster(std::string_view facts_from) {
  return facts_from.starts_with("mongodb://") || facts_from.starts_with("mongodb+srv://");
}

base::Expected<void> learn_indexes_from_cluster(const std::string& uri, rules::Engine& engine) {
  IndexVisitor visitor(engine, "cluster");
  advisor::ClusterReadOptions options;
  options.reader.uri = uri;
  options.reader.app_name = "docguard-whatif";
  // As polite as an introspection pass: a few commands a second on connections of its own.
  options.reader.max_commands_per_second = 20;
  options.selection.sample_size = 1;  // the indexes are wanted, not the documents
  options.selection.read_statistics = false;
  options.selection.read_index_usage = false;
  if (const auto read = advisor::read_cluster(options, visitor); !read) {
    base::Error error = read.error();
    error.message = "cannot read the indexes of the cluster: " + error.message;
    return error;
  }
  return {};
}

}  // namespace docguard::introspection
