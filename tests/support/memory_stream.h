// The dump reader on bytes in memory, for tests and the fuzz target: docguard itself reads
// dumps from files (advisor::read_dump), so a stream over memory is test code.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string>

#include "docguard/advisor/byte_stream.h"
#include "docguard/advisor/dump_reader.h"

namespace docguard::testing {

class MemoryStream final : public advisor::ByteStream {
 public:
  MemoryStream(std::string name, const uint8_t* data, size_t size)
      : name_(std::move(name)), data_(data), size_(size) {}
  long read(uint8_t* out, size_t capacity) override {
    const size_t n = std::min(capacity, size_ - position_);
    if (n) std::memcpy(out, data_ + position_, n);
    position_ += n;
    return static_cast<long>(n);
  }
  const std::string& error() const override { return error_; }
  const std::string& name() const override { return name_; }

 private:
  std::string name_;
  const uint8_t* data_;
  size_t size_;
  size_t position_ = 0;
  std::string error_;
};

// Reads one archive or BSON stream held in memory, as read_dump reads one file. `name` is used
// in errors and, for a BSON stream, as "db.collection" or "collection".
inline advisor::ReadResult read_stream_from_memory(const std::string& name, const uint8_t* data,
                                                   size_t size, advisor::DumpVisitor& visitor,
                                                   const advisor::ReaderLimits& limits = {}) {
  MemoryStream in(name, data, size);
  const size_t dot = name.find('.');
  const std::string db = dot == std::string::npos ? "" : name.substr(0, dot);
  const std::string collection = dot == std::string::npos ? name : name.substr(dot + 1);
  return advisor::read_stream(in, db, collection, nullptr, visitor, limits);
}

}  // namespace docguard::testing
