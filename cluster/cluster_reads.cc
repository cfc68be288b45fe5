// The reads of ClusterReader: databases, collections, indexes and their usage, storage
// statistics (summed over shards), and documents ($sample, or find).
#include <optional>
#include <string_view>

#include "docguard/cluster/cluster_reader.h"
#include "docguard/codec/bson_elements.h"
#include "reader_impl.h"

namespace docguard::cluster {

Expected<std::vector<std::string>> ClusterReader::list_databases() {
  codec::ScopedBson cmd;
  BSON_APPEND_INT32(cmd.get(), "listDatabases", 1);
  BSON_APPEND_BOOL(cmd.get(), "nameOnly", true);
  impl_->append_max_time(cmd.get());
  auto reply = impl_->command("admin", cmd.get(), "listDatabases");
  if (!reply) return reply.error();
  std::vector<std::string> names;
  codec::BsonElements it(reply->data(), static_cast<uint32_t>(reply->size()));
  if (!it.find("databases") || !it.holds_array()) {
    return bad_reply("listDatabases", "the reply has no databases array");
  }
  for (codec::BsonElements databases(it.container()); databases.next();) {
    if (!databases.holds_document()) continue;
    codec::BsonElements entry(databases.container());
    if (!entry.find("name") || !entry.holds_utf8()) continue;
    const std::string name(entry.utf8());
    if (name == "admin" || name == "local" || name == "config") continue;
    names.push_back(name);
  }
  return names;
}

Expected<std::vector<ClusterReader::Document>> ClusterReader::list_collections(
    const std::string& db) {
  codec::ScopedBson cmd;
  BSON_APPEND_INT32(cmd.get(), "listCollections", 1);
  bson_t cursor;
  BSON_APPEND_DOCUMENT_BEGIN(cmd.get(), "cursor", &cursor);
  bson_append_document_end(cmd.get(), &cursor);
  impl_->append_max_time(cmd.get());
  return impl_->cursor_command(db, cmd.get(), "listCollections on " + db);
}

Expected<std::vector<ClusterReader::Document>> ClusterReader::list_indexes(
    const std::string& db, const std::string& coll) {
  codec::ScopedBson cmd;
  BSON_APPEND_UTF8(cmd.get(), "listIndexes", coll.c_str());
  bson_t cursor;
  BSON_APPEND_DOCUMENT_BEGIN(cmd.get(), "cursor", &cursor);
  bson_append_document_end(cmd.get(), &cursor);
  impl_->append_max_time(cmd.get());
  return impl_->cursor_command(db, cmd.get(), "listIndexes on " + db + "." + coll);
}

Expected<std::vector<ClusterReader::Document>> ClusterReader::index_stats(const std::string& db,
                                                                          const std::string& coll) {
  bson_t* pipeline = BCON_NEW("pipeline", "[", "{", "$indexStats", "{", "}", "}", "]");
  std::vector<Document> out;
  auto read = impl_->aggregate(
      db, coll, pipeline,
      [&out](const uint8_t* data, uint32_t size) {
        out.emplace_back(data, data + size);
        return true;
      },
      "$indexStats on " + db + "." + coll);
  bson_destroy(pipeline);
  if (!read) return read.error();
  return out;
}

Expected<ClusterReader::Document> ClusterReader::collection_stats(const std::string& db,
                                                                  const std::string& coll) {
  const std::string what = "$collStats on " + db + "." + coll;
  bson_t* pipeline =
      BCON_NEW("pipeline", "[", "{", "$collStats", "{", "storageStats", "{", "}", "}", "}", "]");
  // A sharded collection gives one document per shard: their storageStats are summed.
  int64_t count = 0, size = 0, storage_size = 0;
  uint64_t documents = 0;
  std::optional<Document> only;
  auto read = impl_->aggregate(
      db, coll, pipeline,
      [&](const uint8_t* data, uint32_t length) {
        codec::BsonElements stats(data, length);
        if (!stats.find("storageStats") || !stats.holds_document()) return true;
        const codec::BsonView stats_doc = stats.container();
        only = Document(stats_doc.data, stats_doc.data + stats_doc.size);
        ++documents;
        for (codec::BsonElements field(stats_doc); field.next();) {
          if (!field.holds_number()) continue;
          if (field.key == "count") count += field.as_int64();
          if (field.key == "size") size += field.as_int64();
          if (field.key == "storageSize") storage_size += field.as_int64();
        }
        return true;
      },
      what);
  bson_destroy(pipeline);
  if (read && documents == 1) return std::move(*only);
  if (read && documents > 1) {
    codec::ScopedBson merged;
    BSON_APPEND_INT64(merged.get(), "count", count);
    BSON_APPEND_INT64(merged.get(), "size", size);
    BSON_APPEND_INT64(merged.get(), "avgObjSize", count > 0 ? size / count : 0);
    BSON_APPEND_INT64(merged.get(), "storageSize", storage_size);
    BSON_APPEND_INT64(merged.get(), "shards", static_cast<int64_t>(documents));
    return copy_of(merged.get());
  }
  if (read) return bad_reply(what, "the reply has no storageStats");
  if (!is_not_supported(read.error())) return read.error();
  // Servers without the stage still have the command, with the same field names.
  codec::ScopedBson cmd;
  BSON_APPEND_UTF8(cmd.get(), "collStats", coll.c_str());
  impl_->append_max_time(cmd.get());
  return impl_->command(db, cmd.get(), "collStats on " + db + "." + coll);
}

Expected<ReadMethod> ClusterReader::read_documents(const std::string& db, const std::string& coll,
                                                   uint64_t n, const DocumentCallback& callback,
                                                   bool timeseries) {
  const std::string ns = db + "." + coll;
  if (n == 0) {
    auto all = impl_->find(db, coll, 0, callback, "find on " + ns);
    if (!all) return all.error();
    return ReadMethod::kAll;
  }
  if (!timeseries) {
    bson_t* pipeline = BCON_NEW("pipeline", "[", "{", "$sample", "{", "size",
                                BCON_INT64(static_cast<int64_t>(n)), "}", "}", "]");
    uint64_t delivered = 0;
    auto sampled = impl_->aggregate(
        db, coll, pipeline,
        [&](const uint8_t* data, uint32_t size) {
          ++delivered;
          return callback(data, size);
        },
        "$sample on " + ns);
    bson_destroy(pipeline);
    if (sampled) return ReadMethod::kSample;
    // Only a refusal before any document falls back; a failure midway is a failure.
    if (delivered > 0 || !is_not_supported(sampled.error())) return sampled.error();
  }
  auto found = impl_->find(db, coll, n, callback, "find on " + ns);
  if (!found) return found.error();
  return ReadMethod::kFind;
}

}  // namespace docguard::cluster
