// The _id of a BSON document in shell notation, for evidence ("the longest: _id 17").
#pragma once

#include <cstdint>
#include <string>

namespace docguard::advisor {

// 42, "text", ObjectId('64b...'), or a type name for other types; "(no _id)" when absent.
std::string document_id_text(const uint8_t* data, uint32_t size);

}  // namespace docguard::advisor
