// The catalog's documents on arbitrary bytes: index specifications, collection options, create
// and collMod commands, the cluster's listCollections / statistics / $indexStats replies, the
// facts a fleet shares, and the live advisor's catalog replies. Every parser must end in a
// value or a refusal: no crash, no read past the input, and facts it wrote must read back.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "docguard/advisor/catalog_documents.h"
#include "docguard/advisor/cluster_metadata.h"
#include "docguard/advisor/live_advisor.h"
#include "docguard/advisor/shared_facts.h"

namespace {

using namespace docguard;

// The input as one BSON document of exactly its size (libbson checks the framing).
const char* const kCommands[] = {
    "createIndexes", "dropIndexes",     "collMod",          "create",      "drop",
    "listIndexes",   "listCollections", "renameCollection", "dropDatabase"};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1 || size > (1u << 20)) return 0;
  const uint8_t selector = data[0];
  const std::vector<uint8_t> doc(data + 1, data + size);
  const auto length = static_cast<uint32_t>(doc.size());

  advisor::IndexSpec index;
  advisor::read_index_spec(doc.data(), length, &index);
  advisor::CollectionMetadata metadata;
  advisor::apply_create_options(doc.data(), length, &metadata);
  advisor::apply_collmod(doc.data(), length, &metadata);
  (void)advisor::apply_collection_entry(advisor::BsonBytes{doc.data(), doc.size()}, &metadata);
  (void)advisor::apply_collection_stats(advisor::BsonBytes{doc.data(), doc.size()}, &metadata);
  (void)advisor::apply_index_documents({doc}, &metadata);
  (void)advisor::apply_index_stats({doc}, &metadata);

  advisor::SharedCollection shared;
  if (advisor::read_shared_collection(doc.data(), length, &shared)) {
    const std::vector<uint8_t> again = advisor::shared_collection_bson(shared);
    advisor::SharedCollection reread;
    if (!advisor::read_shared_collection(again.data(), static_cast<uint32_t>(again.size()),
                                         &reread)) {
      __builtin_trap();  // what docguard wrote, it must read back
    }
  }

  // A catalog command whose body and reply are the input.
  static advisor::LiveAdvisor live{advisor::AdvisorSettings{}};
  codec::CommandView request;
  request.name = kCommands[selector % (sizeof kCommands / sizeof kCommands[0])];
  request.database = "db";
  request.collection = "c";
  request.body = codec::BsonView{doc.data(), length};
  live.on_catalog_reply(request, codec::BsonView{doc.data(), length});
  (void)live.collection_facts();
  return 0;
}
