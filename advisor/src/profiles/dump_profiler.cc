#include "docguard/advisor/dump_profiler.h"

namespace docguard::advisor {

CollectionProfile& DumpProfiler::profile_for(std::string_view db, std::string_view collection) {
  if (last_ && last_->db() == db && last_->collection() == collection) return *last_;
  std::string ns;
  ns.reserve(db.size() + collection.size() + 1);
  ns.append(db).append(".").append(collection);
  auto it = by_namespace_.find(ns);
  if (it == by_namespace_.end()) {
    it = by_namespace_
             .emplace(ns, std::make_unique<CollectionProfile>(std::string(db),
                                                              std::string(collection), settings_))
             .first;
  }
  last_ = it->second.get();
  return *last_;
}

void DumpProfiler::on_collection(const CollectionMetadata& metadata) {
  profile_for(metadata.db, metadata.collection).set_metadata(metadata);
}

base::Expected<void> DumpProfiler::on_document(std::string_view db, std::string_view collection,
                                               const uint8_t* data, uint32_t size) {
  bytes_ += size;
  return profile_for(db, collection).add_document(data, size);
}

std::vector<const CollectionProfile*> DumpProfiler::profiles() const {
  std::vector<const CollectionProfile*> out;
  for (const auto& [ns, profile] : by_namespace_) out.push_back(profile.get());
  return out;
}

}  // namespace docguard::advisor
