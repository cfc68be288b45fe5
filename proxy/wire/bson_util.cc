#include <string>

#include "docguard/wire/bson_view.h"

namespace docguard::wire {

BsonView checked_bson(Bytes data) {
  if (data.size() < 5) throw ProtocolError("bad_bson", "BSON document shorter than 5 bytes");
  const int32_t declared = load_le32(data.data());
  if (declared < 5 || static_cast<size_t>(declared) > data.size()) {
    throw ProtocolError("bad_bson", "BSON document length " + std::to_string(declared) +
                                        " does not fit in the " + std::to_string(data.size()) +
                                        " bytes left");
  }
  if (data[static_cast<size_t>(declared) - 1] != 0) {
    throw ProtocolError("bad_bson", "BSON document does not end with a NUL byte");
  }
  return BsonView{data.data(), static_cast<uint32_t>(declared)};
}

BsonView view_of(const bson_iter_t& iter) {
  uint32_t len = 0;
  const uint8_t* data = nullptr;
  if (BSON_ITER_HOLDS_DOCUMENT(&iter)) {
    bson_iter_document(&iter, &len, &data);
  } else if (BSON_ITER_HOLDS_ARRAY(&iter)) {
    bson_iter_array(&iter, &len, &data);
  }
  return BsonView{data, len};
}

std::string_view find_string(const BsonView& doc, const char* key) {
  if (doc.empty()) return {};
  bson_t b = doc.borrow();
  bson_iter_t it;
  if (bson_iter_init_find(&it, &b, key) && BSON_ITER_HOLDS_UTF8(&it)) {
    uint32_t len = 0;
    const char* s = bson_iter_utf8(&it, &len);
    return {s, len};
  }
  return {};
}

bool bson_is_valid(const BsonView& doc) {
  if (doc.empty()) return false;
  bson_t b;
  if (!bson_init_static(&b, doc.data, doc.size)) return false;
  size_t offset = 0;
  return bson_validate(&b, BSON_VALIDATE_NONE, &offset);
}

std::string to_json(const BsonView& doc) {
  if (doc.empty()) return "{}";
  bson_t b = doc.borrow();
  size_t len = 0;
  char* json = bson_as_relaxed_extended_json(&b, &len);
  if (json == nullptr) return "<invalid BSON>";
  std::string out(json, len);
  bson_free(json);
  return out;
}

}  // namespace docguard::wire
