// Sources of bytes for the dump reader: a file (gzip or not, detected by zlib); tests add their
// own over memory. Offsets count bytes of the decompressed stream, for error messages.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "docguard/base/expected.h"

namespace docguard::advisor {

class ByteStream {
 public:
  virtual ~ByteStream() = default;
  // Reads up to `capacity` bytes; returns the count (0 at the end), or -1 with error() set.
  virtual long read(uint8_t* out, size_t capacity) = 0;
  virtual const std::string& error() const = 0;
  virtual const std::string& name() const = 0;
  // True when the bytes are inflated from gzip (offsets then count inflated bytes).
  virtual bool inflated() const { return false; }
};

// Opens `path` for reading; gzip content is inflated transparently. A kIo error ("cannot open:
// No such file or directory", the path as its subject) when it cannot be opened.
base::Expected<std::unique_ptr<ByteStream>> open_file_stream(const std::string& path);

// Frames BSON documents out of a ByteStream with one reusable buffer (bounded by the document
// limit plus one read chunk). Archive terminators (int32 -1) are reported, not treated as errors.
class BsonFramer {
 public:
  BsonFramer(ByteStream& in, uint32_t max_document_bytes, uint32_t chunk_bytes);
  enum class Next { kDocument, kTerminator, kEnd, kError };
  Next next(bool allow_terminator);
  const uint8_t* data() const { return buffer_.data() + doc_start_; }
  uint32_t size() const { return doc_size_; }
  uint64_t offset() const { return doc_offset_; }  // stream offset of the current item
  const std::string& error() const { return error_; }
  uint64_t error_offset() const { return error_offset_; }
  // Copies the next n bytes without consuming them (the archive's magic); false when the
  // stream is shorter. skip() consumes bytes a successful peek() saw.
  bool peek(uint8_t* out, size_t n);
  void skip(size_t n) { begin_ += n; }

 private:
  bool fill(size_t need, bool* failed);
  Next fail(uint64_t offset, std::string message);

  ByteStream& in_;
  uint32_t max_document_bytes_;
  uint32_t chunk_bytes_;
  std::vector<uint8_t> buffer_;
  size_t begin_ = 0;            // first unread byte
  size_t end_ = 0;              // one past the last valid byte
  uint64_t buffer_offset_ = 0;  // stream offset of buffer_[0]
  size_t doc_start_ = 0;
  uint32_t doc_size_ = 0;
  uint64_t doc_offset_ = 0;
  std::string error_;
  uint64_t error_offset_ = 0;
};

}  // namespace docguard::advisor
