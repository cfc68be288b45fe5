#include "docguard/introspection/catalog_facts.h"

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
  explicit IndexVisitor(rules::Engine& engine) : engine_(engine) {}
  void on_collection(const advisor::CollectionMetadata& metadata) override {
    learn_indexes(engine_, metadata, "dump");
  }
  base::Expected<void> on_document(std::string_view, std::string_view, const uint8_t*,
                                   uint32_t) override {
    return {};
  }

 private:
  rules::Engine& engine_;
};

}  // namespace

base::Expected<void> learn_indexes_from_dump(const std::string& path, rules::Engine& engine) {
  IndexVisitor visitor(engine);
  const advisor::ReadResult read = advisor::read_dump(path, visitor);
  if (!read) {
    return base::Error{base::ErrorKind::kIo, base::ErrorSource::kConfiguration,
                       "cannot read the dump: " + read.error().to_string(), path};
  }
  return {};
}

}  // namespace docguard::introspection
