// Streaming reader of mongodump output in each of its layouts:
//   - a directory of <db>/<collection>.bson + .metadata.json (or a directory of one database),
//   - the same with every file gzipped (.bson.gz, .metadata.json.gz),
//   - an --archive stream (plain or gzipped): magic 0x8199e26d, a prelude of BSON header
//     documents, then namespace blocks each closed by a terminator, collections interleaved,
//   - a single .bson (or .bson.gz) file.
// Memory stays bounded whatever the size: one read buffer of at most the document limit plus a
// chunk. Every failure names the file and the byte offset (in the decompressed stream for gzip).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "docguard/advisor/collection_metadata.h"
#include "docguard/base/expected.h"

namespace docguard::advisor {

class ByteStream;  // docguard/advisor/byte_stream.h

struct ReaderLimits {
  uint32_t max_document_bytes = 16 * 1024 * 1024 + 16 * 1024;  // 16 MiB + slack
  uint32_t max_metadata_bytes = 16 * 1024 * 1024;
  uint32_t read_chunk_bytes = 1 << 20;
};

class DumpVisitor {
 public:
  virtual ~DumpVisitor() = default;
  // Called before the collection's documents (for an archive: for every collection in the
  // prelude, before any document).
  virtual void on_collection(const CollectionMetadata& metadata) = 0;
  // The bytes are a framed BSON document (length checked, terminating NUL present) valid only
  // during the call. An error stops the read (e.g. a corrupt document).
  virtual base::Expected<void> on_document(std::string_view db, std::string_view collection,
                                           const uint8_t* data, uint32_t size) = 0;
};

struct ReadError {
  std::string file;
  uint64_t offset = 0;
  bool inflated = false;  // the offset counts bytes of the inflated (gunzipped) stream
  std::string message;
  bool whole_file = false;  // about the file itself (missing, unreadable): no offset to give
  std::string to_string() const;
};

// Success, or where the read stopped and why.
using ReadResult = base::Expected<void, ReadError>;

// Reads the dump at `path` (any layout above) and calls the visitor.
ReadResult read_dump(const std::string& path, DumpVisitor& visitor,
                     const ReaderLimits& limits = {});

// Reads one stream (what read_dump does per file): an archive when it starts with the archive's
// magic number, else the BSON documents of `db`.`collection`, announced with `metadata` (may be
// null: then only the names are known).
ReadResult read_stream(ByteStream& in, const std::string& db, const std::string& collection,
                       const CollectionMetadata* metadata, DumpVisitor& visitor,
                       const ReaderLimits& limits = {});

}  // namespace docguard::advisor
