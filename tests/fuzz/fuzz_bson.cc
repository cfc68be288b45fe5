// The hot-path BSON structure validator: no input may make it read out of bounds (ASan), and
// whatever it accepts, libbson's iterators (which the rules use) walk to the end without error.
// (The converse does not hold: libbson is more lenient in places, e.g. it lets a trailing
// regex's options end at the document's own terminating NUL.)
#include <bson/bson.h>

#include <cstddef>
#include <cstdint>
#include <vector>

#include "docguard/codec/bson_view.h"

namespace {

bool walks_cleanly(bson_iter_t* it) {
  while (bson_iter_next(it)) {
    if (BSON_ITER_HOLDS_DOCUMENT(it) || BSON_ITER_HOLDS_ARRAY(it)) {
      bson_iter_t child;
      if (!bson_iter_recurse(it, &child) || !walks_cleanly(&child)) return false;
    }
  }
  return it->err_off == 0;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace docguard::codec;
  if (size < 5 || size > (1u << 20)) return 0;
  std::vector<uint8_t> doc(data, data + size);
  store_le32(doc.data(), static_cast<int32_t>(size));  // framing right, so elements get explored
  size_t offset = 0;
  const bool ours =
      bson_structure_valid(BsonView{doc.data(), static_cast<uint32_t>(size)}, &offset);
  if (!ours) {
    if (offset >= size) __builtin_trap();
    return 0;
  }
  bson_iter_t it;
  if (!bson_iter_init_from_data(&it, doc.data(), size) || !walks_cleanly(&it)) __builtin_trap();
  return 0;
}
