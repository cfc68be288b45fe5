#include "docguard/advisor/document_id.h"

#include <bson/bson.h>

#include "docguard/advisor/bson_types.h"
#include "docguard/codec/bson_view.h"

namespace docguard::advisor {

std::string document_id_text(const uint8_t* data, uint32_t size) {
  bson_iter_t it;
  if (!bson_iter_init_from_data(&it, data, size) || !bson_iter_find(&it, "_id")) {
    return "(no _id)";
  }
  switch (bson_iter_type(&it)) {
    case BSON_TYPE_INT32:
      return std::to_string(bson_iter_int32(&it));
    case BSON_TYPE_INT64:
      return std::to_string(bson_iter_int64(&it));
    case BSON_TYPE_DOUBLE:
      return std::to_string(bson_iter_double(&it));
    case BSON_TYPE_UTF8: {
      return "\"" + std::string(codec::utf8_of(it).substr(0, 64)) + "\"";
    }
    case BSON_TYPE_OID: {
      char hex[25];
      bson_oid_to_string(bson_iter_oid(&it), hex);
      return std::string("ObjectId('") + hex + "')";
    }
    default:
      return std::string("(") + bson_type_name(bson_iter_type(&it)) + ")";
  }
}

}  // namespace docguard::advisor
