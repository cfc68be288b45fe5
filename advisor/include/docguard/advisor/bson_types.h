// BSON type codes as bits of a mask, and their $jsonSchema names.
#pragma once

#include <cstdint>
#include <string>

namespace docguard::advisor {

// One bit per BSON type: codes 1..19 map to their own bit; MinKey and MaxKey to bits 30, 31.
inline uint32_t bson_type_bit(uint8_t type) {
  if (type == 0xFF) return 1u << 30;
  if (type == 0x7F) return 1u << 31;
  return type < 30 ? (1u << type) : 0;
}

// The name $jsonSchema's bsonType uses ("double", "string", "object", "array", ...), or "".
const char* bson_type_name(int bit);

// "string, int" for a mask.
std::string bson_type_list(uint32_t mask);

constexpr uint32_t kDateBit = 1u << 0x09;
constexpr uint32_t kArrayBit = 1u << 0x04;
constexpr uint32_t kDocumentBit = 1u << 0x03;

}  // namespace docguard::advisor
