// Builds one CollectionProfile per namespace from a dump: the DumpVisitor the scan uses.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "docguard/advisor/collection_profile.h"
#include "docguard/advisor/dump_reader.h"

namespace docguard::advisor {

class DumpProfiler final : public DumpVisitor {
 public:
  explicit DumpProfiler(const AdvisorSettings& settings) : settings_(settings) {}
  void on_collection(const CollectionMetadata& metadata) override;
  base::Expected<void> on_document(std::string_view db, std::string_view collection,
                                   const uint8_t* data, uint32_t size) override;

  // Profiles in namespace order (valid while the profiler lives).
  std::vector<const CollectionProfile*> profiles() const;
  uint64_t bytes() const { return bytes_; }

 private:
  CollectionProfile& profile_for(std::string_view db, std::string_view collection);

  AdvisorSettings settings_;
  std::map<std::string, std::unique_ptr<CollectionProfile>, std::less<>> by_namespace_;
  CollectionProfile* last_ = nullptr;  // documents arrive in runs of one collection
  uint64_t bytes_ = 0;
};

}  // namespace docguard::advisor
