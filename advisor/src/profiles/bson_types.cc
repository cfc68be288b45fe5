#include "docguard/advisor/bson_types.h"

namespace docguard::advisor {

const char* bson_type_name(int bit) {
  switch (bit) {
    case 0x01:
      return "double";
    case 0x02:
      return "string";
    case 0x03:
      return "object";
    case 0x04:
      return "array";
    case 0x05:
      return "binData";
    case 0x06:
      return "undefined";
    case 0x07:
      return "objectId";
    case 0x08:
      return "bool";
    case 0x09:
      return "date";
    case 0x0A:
      return "null";
    case 0x0B:
      return "regex";
    case 0x0C:
      return "dbPointer";
    case 0x0D:
      return "javascript";
    case 0x0E:
      return "symbol";
    case 0x0F:
      return "javascriptWithScope";
    case 0x10:
      return "int";
    case 0x11:
      return "timestamp";
    case 0x12:
      return "long";
    case 0x13:
      return "decimal";
    case 30:
      return "minKey";
    case 31:
      return "maxKey";
    default:
      return "";
  }
}

std::string bson_type_list(uint32_t mask) {
  std::string out;
  for (int bit = 0; bit < 32; ++bit) {
    if (!(mask & (1u << bit)) || !*bson_type_name(bit)) continue;
    if (!out.empty()) out += ", ";
    out += bson_type_name(bit);
  }
  return out;
}

}  // namespace docguard::advisor
