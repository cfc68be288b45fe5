#include "docguard/advisor/dump_reader.h"

#include <bson/bson.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <map>
#include <memory>
#include <set>
#include <utility>

#include "docguard/advisor/byte_stream.h"
#include "docguard/advisor/catalog_documents.h"
#include "docguard/codec/bson_elements.h"

namespace docguard::advisor {
namespace {

namespace fs = std::filesystem;

constexpr uint32_t kArchiveMagic = 0x8199e26d;

bool ends_with(std::string_view text, std::string_view suffix) {
  return text.size() >= suffix.size() && text.substr(text.size() - suffix.size()) == suffix;
}

ReadError make_error(const std::string& file, uint64_t offset, std::string message) {
  return ReadError{file, offset, false, std::move(message)};
}

// An error about the file itself (missing, unreadable), not about a byte in it.
ReadError file_error(const std::string& file, std::string message) {
  ReadError error = make_error(file, 0, std::move(message));
  error.whole_file = true;
  return error;
}

ReadError stream_error(const ByteStream& in, uint64_t offset, std::string message) {
  ReadError error = make_error(in.name(), offset, std::move(message));
  error.inflated = in.inflated();
  return error;
}

ReadError framer_error(const ByteStream& in, const BsonFramer& framer) {
  return stream_error(in, framer.error_offset(), framer.error());
}

// The string fields of a small header document (archive prelude and namespace headers).
struct HeaderFields {
  std::string db, collection, metadata, type;
  bool eof = false;
};

bool read_header(const uint8_t* data, uint32_t size, HeaderFields* out) {
  if (!framed_document(data, size)) return false;
  codec::BsonElements it(data, size);
  while (it.next()) {
    const std::string_view key = it.key;
    if (it.holds_utf8()) {
      std::string value(it.utf8());
      if (key == "db")
        out->db = std::move(value);
      else if (key == "collection")
        out->collection = std::move(value);
      else if (key == "metadata")
        out->metadata = std::move(value);
      else if (key == "type")
        out->type = std::move(value);
    } else if (key == "EOF" && it.holds_bool()) {
      out->eof = it.as_bool();
    }
  }
  return !it.malformed();
}

ReadResult read_archive(ByteStream& in, BsonFramer& framer, DumpVisitor& visitor) {
  framer.skip(4);
  if (framer.next(false) != BsonFramer::Next::kDocument) {
    if (!framer.error().empty()) return framer_error(in, framer);
    return stream_error(in, 4, "archive ends before its header document");
  }
  // Prelude: one document per collection, closed by a terminator.
  for (;;) {
    const auto next = framer.next(true);
    if (next == BsonFramer::Next::kTerminator) break;
    if (next == BsonFramer::Next::kError) return framer_error(in, framer);
    if (next == BsonFramer::Next::kEnd) {
      return stream_error(in, framer.offset(), "archive ends inside its prelude");
    }
    HeaderFields header;
    if (!read_header(framer.data(), framer.size(), &header) || header.collection.empty()) {
      return stream_error(in, framer.offset(), "malformed collection header in prelude");
    }
    CollectionMetadata metadata;
    if (!header.metadata.empty()) {
      if (auto parsed = parse_metadata_json(header.metadata, &metadata); !parsed) {
        return stream_error(in, framer.offset(), parsed.error().message);
      }
    }
    metadata.db = header.db;
    metadata.collection = header.collection;
    if (metadata.type.empty()) metadata.type = header.type;
    visitor.on_collection(metadata);
  }
  // Namespace blocks: a header, documents, a terminator. Blocks of collections interleave.
  for (;;) {
    const auto next = framer.next(false);
    if (next == BsonFramer::Next::kEnd) return {};
    if (next == BsonFramer::Next::kError) return framer_error(in, framer);
    HeaderFields header;
    if (!read_header(framer.data(), framer.size(), &header) || header.collection.empty()) {
      return stream_error(in, framer.offset(), "malformed namespace header");
    }
    for (;;) {
      const auto body = framer.next(true);
      if (body == BsonFramer::Next::kTerminator) break;
      if (body == BsonFramer::Next::kError) return framer_error(in, framer);
      if (body == BsonFramer::Next::kEnd) {
        return make_error(
            in.name(), framer.offset(),
            "archive ends inside the block of " + header.db + "." + header.collection);
      }
      if (auto visited =
              visitor.on_document(header.db, header.collection, framer.data(), framer.size());
          !visited) {
        return stream_error(in, framer.offset(), visited.error().message);
      }
    }
  }
}

ReadResult read_bson_documents(ByteStream& in, BsonFramer& framer, const std::string& db,
                               const std::string& collection, DumpVisitor& visitor) {
  for (;;) {
    const auto next = framer.next(false);
    if (next == BsonFramer::Next::kEnd) return {};
    if (next == BsonFramer::Next::kError) return framer_error(in, framer);
    if (auto visited = visitor.on_document(db, collection, framer.data(), framer.size());
        !visited) {
      return stream_error(in, framer.offset(), visited.error().message);
    }
  }
}

}  // namespace

ReadResult read_stream(ByteStream& in, const std::string& db, const std::string& collection,
                       const CollectionMetadata* metadata, DumpVisitor& visitor,
                       const ReaderLimits& limits) {
  BsonFramer framer(in, limits.max_document_bytes, limits.read_chunk_bytes);
  uint8_t magic[4];
  if (!framer.peek(magic, 4)) {
    if (!in.error().empty()) return stream_error(in, 0, "read error: " + in.error());
    return stream_error(in, 0, "empty or too short to hold a BSON document");
  }
  uint32_t value = 0;
  std::memcpy(&value, magic, 4);
  if (value == kArchiveMagic) return read_archive(in, framer, visitor);
  CollectionMetadata unknown;
  unknown.db = db;
  unknown.collection = collection;
  visitor.on_collection(metadata ? *metadata : unknown);
  return read_bson_documents(in, framer, db, collection, visitor);
}

namespace {

ReadResult read_metadata_file(const std::string& path, const std::string& db,
                              const std::string& collection, CollectionMetadata* out,
                              const ReaderLimits& limits) {
  auto opened = open_file_stream(path);
  if (!opened) return file_error(path, opened.error().message);
  const std::unique_ptr<ByteStream> in = std::move(opened).value();
  std::string json;
  std::vector<uint8_t> chunk(size_t{64} * 1024);
  for (;;) {
    const long n = in->read(chunk.data(), chunk.size());
    if (n < 0) return make_error(path, json.size(), "read error: " + in->error());
    if (n == 0) break;
    json.append(reinterpret_cast<const char*>(chunk.data()), static_cast<size_t>(n));
    if (json.size() > limits.max_metadata_bytes) {
      return make_error(path, json.size(), "metadata larger than the limit");
    }
  }
  if (auto parsed = parse_metadata_json(json, out); !parsed) {
    return make_error(path, 0, parsed.error().message);
  }
  out->db = db;
  out->collection = collection;
  return {};
}

std::string strip_suffixes(std::string name, std::initializer_list<const char*> suffixes) {
  for (const char* suffix : suffixes) {
    if (ends_with(name, suffix)) name.resize(name.size() - std::strlen(suffix));
  }
  return name;
}

ReadResult read_file(const fs::path& path, DumpVisitor& visitor, const ReaderLimits& limits) {
  const std::string collection = strip_suffixes(path.filename().string(), {".gz", ".bson"});
  const std::string db = path.parent_path().filename().string();
  CollectionMetadata metadata;
  bool have_metadata = false;
  for (const char* suffix : {".metadata.json", ".metadata.json.gz"}) {
    const fs::path candidate = path.parent_path() / (collection + suffix);
    std::error_code ec;
    if (!fs::is_regular_file(candidate, ec)) continue;
    if (auto read = read_metadata_file(candidate.string(), db, collection, &metadata, limits);
        !read) {
      return read;
    }
    have_metadata = true;
    break;
  }
  auto in = open_file_stream(path.string());
  if (!in) return file_error(path.string(), in.error().message);
  return read_stream(*in.value(), db, collection, have_metadata ? &metadata : nullptr, visitor,
                     limits);
}

// A database directory: <collection>.bson[.gz] with optional <collection>.metadata.json[.gz].
ReadResult read_database_directory(const fs::path& dir, DumpVisitor& visitor,
                                   const ReaderLimits& limits) {
  const std::string db = dir.filename().string();
  std::map<std::string, fs::path> data_files, metadata_files;
  for (const auto& entry : fs::directory_iterator(dir)) {
    if (!entry.is_regular_file()) continue;
    const std::string name = entry.path().filename().string();
    if (ends_with(name, ".bson") || ends_with(name, ".bson.gz")) {
      data_files[strip_suffixes(name, {".gz", ".bson"})] = entry.path();
    } else if (ends_with(name, ".metadata.json") || ends_with(name, ".metadata.json.gz")) {
      metadata_files[strip_suffixes(name, {".gz", ".json", ".metadata"})] = entry.path();
    }
  }
  std::set<std::string> collections;
  for (const auto& [name, path] : data_files) collections.insert(name);
  for (const auto& [name, path] : metadata_files) collections.insert(name);
  for (const std::string& collection : collections) {
    CollectionMetadata metadata;
    metadata.db = db;
    metadata.collection = collection;
    if (auto it = metadata_files.find(collection); it != metadata_files.end()) {
      if (auto read = read_metadata_file(it->second.string(), db, collection, &metadata, limits);
          !read) {
        return read;
      }
    }
    auto data = data_files.find(collection);
    if (data == data_files.end()) {  // a view, or a collection dumped without documents
      visitor.on_collection(metadata);
      continue;
    }
    auto opened = open_file_stream(data->second.string());
    if (!opened) return file_error(data->second.string(), opened.error().message);
    const std::unique_ptr<ByteStream> in = std::move(opened).value();
    BsonFramer framer(*in, limits.max_document_bytes, limits.read_chunk_bytes);
    visitor.on_collection(metadata);
    if (auto read = read_bson_documents(*in, framer, db, collection, visitor); !read) return read;
  }
  return {};
}

bool holds_dump_files(const fs::path& dir) {
  for (const auto& entry : fs::directory_iterator(dir)) {
    const std::string name = entry.path().filename().string();
    if (entry.is_regular_file() &&
        (ends_with(name, ".bson") || ends_with(name, ".bson.gz") ||
         ends_with(name, ".metadata.json") || ends_with(name, ".metadata.json.gz"))) {
      return true;
    }
  }
  return false;
}

}  // namespace

ReadResult read_dump(const std::string& path, DumpVisitor& visitor, const ReaderLimits& limits) {
  std::error_code ec;
  const fs::path root(path);
  if (fs::is_regular_file(root, ec)) return read_file(root, visitor, limits);
  if (!fs::is_directory(root, ec))
    return file_error(path,
                      "no such file or directory; give a mongodump --out "
                      "folder, one database's folder, a .bson file or an "
                      "--archive file");
  try {
    if (holds_dump_files(root)) return read_database_directory(root, visitor, limits);
    // The top of an --out directory: one subdirectory per database, in name order.
    std::set<fs::path> databases;
    for (const auto& entry : fs::directory_iterator(root)) {
      if (entry.is_directory() && holds_dump_files(entry.path())) databases.insert(entry.path());
    }
    if (databases.empty()) return file_error(path, "no .bson or .metadata.json files found");
    for (const fs::path& db : databases) {
      if (auto read = read_database_directory(db, visitor, limits); !read) return read;
    }
  } catch (const fs::filesystem_error& e) {
    return file_error(e.path1().string(), e.code().message());
  }
  return {};
}

}  // namespace docguard::advisor
