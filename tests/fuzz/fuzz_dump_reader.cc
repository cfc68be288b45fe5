// The dump reader on arbitrary bytes: archive framing (magic, prelude, namespace blocks,
// terminators) or a BSON stream, and the profile's own BSON walker on every framed document.
// Any input must end in success or a ReadError whose offset lies inside the input.
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <vector>

#include "docguard/advisor/collection_profile.h"
#include "docguard/advisor/dump_reader.h"
#include "memory_stream.h"

namespace {

using namespace docguard::advisor;

// Walks each document from an allocation of exactly its size, so that ASan sees any read past
// a document's end (the reader's own buffer is larger and would hide it).
class ExactCopyProfiler final : public DumpVisitor {
 public:
  void on_collection(const CollectionMetadata& metadata) override {
    profile(metadata.db, metadata.collection).set_metadata(metadata);
  }
  docguard::base::Expected<void> on_document(std::string_view db, std::string_view collection,
                                             const uint8_t* data, uint32_t size) override {
    const std::vector<uint8_t> copy(data, data + size);
    return profile(db, collection).add_document(copy.data(), size);
  }

 private:
  CollectionProfile& profile(std::string_view db, std::string_view collection) {
    auto& slot = profiles_[std::string(db) + "." + std::string(collection)];
    if (!slot) {
      AdvisorSettings settings;
      settings.max_field_paths = 64;  // keep each run small; the bounds are still exercised
      slot =
          std::make_unique<CollectionProfile>(std::string(db), std::string(collection), settings);
    }
    return *slot;
  }
  std::map<std::string, std::unique_ptr<CollectionProfile>> profiles_;
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  ExactCopyProfiler profiler;
  ReaderLimits limits;
  limits.max_document_bytes = 1 << 20;
  limits.read_chunk_bytes = 4096;  // documents straddle chunks: the buffer's compaction runs
  const auto read =
      docguard::testing::read_stream_from_memory("fuzz.input", data, size, profiler, limits);
  if (!read && read.error().offset > size) __builtin_trap();
  return 0;
}
