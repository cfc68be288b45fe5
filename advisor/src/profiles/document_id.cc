#include "docguard/advisor/document_id.h"

#include <bson/bson.h>

#include "docguard/advisor/bson_types.h"
#include "docguard/codec/bson_elements.h"

namespace docguard::advisor {

std::string document_id_text(const uint8_t* data, uint32_t size) {
  // The framing libbson's iterator checked before it walked (length prefix, trailing NUL).
  if (size < 5 || codec::le32(data) != size || data[size - 1] != 0) return "(no _id)";
  codec::BsonElements e(data, size);
  if (!e.find("_id")) return "(no _id)";
  switch (e.type) {
    case BSON_TYPE_INT32:
      return std::to_string(e.int32());
    case BSON_TYPE_INT64:
      return std::to_string(e.int64());
    case BSON_TYPE_DOUBLE:
      return std::to_string(e.double_value());
    case BSON_TYPE_UTF8: {
      return "\"" + std::string(e.utf8().substr(0, 64)) + "\"";
    }
    case BSON_TYPE_OID: {
      char hex[25];
      bson_oid_to_string(reinterpret_cast<const bson_oid_t*>(e.oid_bytes()), hex);
      return std::string("ObjectId('") + hex + "')";
    }
    default:
      return std::string("(") + bson_type_name(e.type) + ")";
  }
}

}  // namespace docguard::advisor
