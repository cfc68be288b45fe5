#include "docguard/cluster/cluster_reader.h"

#include <mongoc/mongoc.h>

#include <algorithm>
#include <chrono>
#include <optional>
#include <string_view>
#include <thread>

#include "discovery_wait.h"
#include "docguard/cluster/upstream_uri.h"
#include "reader_errors.h"

namespace docguard::cluster {
namespace {

using Clock = std::chrono::steady_clock;

// Longest single sleep of the pacing, so that the stop flag is noticed promptly.
constexpr auto kPauseSlice = std::chrono::milliseconds(50);
// A full read has no maxTimeMS; a batch that takes longer than this is a dead connection.
constexpr int32_t kSocketTimeoutMarginMs = 10000;

bool stopped(const std::atomic<bool>* stop) { return stop && stop->load(); }

Error stopped_error(const std::string& what) {
  return Error{"", what + ": stopped before it finished", kStopped};
}

// A bson_t a function fills and this destroys.
struct OwnedBson {
  bson_t doc = BSON_INITIALIZER;
  OwnedBson() = default;
  OwnedBson(const OwnedBson&) = delete;
  OwnedBson& operator=(const OwnedBson&) = delete;
  ~OwnedBson() { bson_destroy(&doc); }
  bson_t* get() { return &doc; }
};

ClusterReader::Document copy_of(const bson_t* doc) {
  const uint8_t* data = bson_get_data(doc);
  return ClusterReader::Document(data, data + doc->len);
}

}  // namespace

struct ClusterReader::Impl {
  ClusterReader* owner = nullptr;
  ReaderOptions options;
  Scrubber scrub;
  mongoc_uri_t* uri = nullptr;
  mongoc_client_pool_t* pool = nullptr;
  mongoc_client_t* client = nullptr;  // popped once: the reader runs one command at a time
  mongoc_read_prefs_t* read_prefs = nullptr;
  Clock::time_point last_command{};
  bool discovery_awaited = false;

  ~Impl() {
    if (client) mongoc_client_pool_push(pool, client);
    if (pool) mongoc_client_pool_destroy(pool);
    if (uri) mongoc_uri_destroy(uri);
    if (read_prefs) mongoc_read_prefs_destroy(read_prefs);
  }

  // Runs on the thread that sends the command (the reader's caller), before it is sent: the
  // one place that sees every command, getMore and killCursors included, so it counts and paces.
  static void on_command_started(const mongoc_apm_command_started_t* event) {
    auto* self = static_cast<Impl*>(mongoc_apm_command_started_get_context(event));
    self->owner->before_command();
  }

  void await_discovery() {
    if (discovery_awaited) return;
    discovery_awaited = true;
    await_first_discovery(client, options.stop);
  }

  void append_max_time(bson_t* doc) const {
    if (options.max_time_ms > 0) BSON_APPEND_INT32(doc, "maxTimeMS", options.max_time_ms);
  }

  Error fail(const bson_error_t& error, const std::string& what) const {
    return to_error(error, what, scrub);
  }

  // A command that answers with one document (listDatabases, collStats).
  Expected<Document> command(const std::string& db, const bson_t* cmd, const std::string& what) {
    if (stopped(options.stop)) return stopped_error(what);
    await_discovery();
    OwnedBson reply;
    bson_error_t error{};
    if (!mongoc_client_read_command_with_opts(client, db.c_str(), cmd, read_prefs, nullptr,
                                              reply.get(), &error)) {
      return fail(error, what);
    }
    return copy_of(reply.get());
  }

  // Drains `cursor` into `callback`, stopping between documents when asked; the cursor is
  // destroyed here (a killCursors when it was left open).
  Expected<uint64_t> drain(mongoc_cursor_t* cursor, const DocumentCallback& callback,
                           const std::string& what) {
    uint64_t count = 0;
    const bson_t* doc = nullptr;
    bool more = true;
    while (more && mongoc_cursor_next(cursor, &doc)) {
      ++count;
      more = callback(bson_get_data(doc), doc->len);
      if (more && stopped(options.stop)) {
        mongoc_cursor_destroy(cursor);
        return stopped_error(what);
      }
    }
    bson_error_t error{};
    const bool failed = more && mongoc_cursor_error(cursor, &error);
    mongoc_cursor_destroy(cursor);
    if (failed) return fail(error, what);
    return count;
  }

  // A command answering with a cursor (listCollections, listIndexes): sent to a server chosen by
  // the read preference, and its getMores to the same server.
  Expected<std::vector<Document>> cursor_command(const std::string& db, const bson_t* cmd,
                                                 const std::string& what) {
    if (stopped(options.stop)) return stopped_error(what);
    await_discovery();
    bson_error_t error{};
    mongoc_server_description_t* server =
        mongoc_client_select_server(client, false, read_prefs, &error);
    if (!server) return fail(error, what);
    OwnedBson opts;
    BSON_APPEND_INT32(opts.get(), "serverId",
                      static_cast<int32_t>(mongoc_server_description_id(server)));
    mongoc_server_description_destroy(server);
    bson_t reply;
    if (!mongoc_client_read_command_with_opts(client, db.c_str(), cmd, read_prefs, opts.get(),
                                              &reply, &error)) {
      bson_destroy(&reply);
      return fail(error, what);
    }
    // Takes the reply (and destroys it).
    mongoc_cursor_t* cursor =
        mongoc_cursor_new_from_command_reply_with_opts(client, &reply, opts.get());
    std::vector<Document> out;
    auto drained = drain(
        cursor,
        [&out](const uint8_t* data, uint32_t size) {
          out.emplace_back(data, data + size);
          return true;
        },
        what);
    if (!drained) return drained.error();
    return out;
  }

  Expected<uint64_t> aggregate(const std::string& db, const std::string& coll,
                               const bson_t* pipeline, const DocumentCallback& callback,
                               const std::string& what) {
    if (stopped(options.stop)) return stopped_error(what);
    await_discovery();
    mongoc_collection_t* collection =
        mongoc_client_get_collection(client, db.c_str(), coll.c_str());
    OwnedBson opts;
    append_max_time(opts.get());
    mongoc_cursor_t* cursor = mongoc_collection_aggregate(collection, MONGOC_QUERY_NONE, pipeline,
                                                          opts.get(), read_prefs);
    auto result = drain(cursor, callback, what);
    mongoc_collection_destroy(collection);
    return result;
  }

  Expected<uint64_t> find(const std::string& db, const std::string& coll, uint64_t limit,
                          const DocumentCallback& callback, const std::string& what) {
    if (stopped(options.stop)) return stopped_error(what);
    await_discovery();
    mongoc_collection_t* collection =
        mongoc_client_get_collection(client, db.c_str(), coll.c_str());
    OwnedBson filter, opts;
    if (limit > 0) {
      BSON_APPEND_INT64(opts.get(), "limit", static_cast<int64_t>(limit));
      append_max_time(opts.get());
    }
    mongoc_cursor_t* cursor =
        mongoc_collection_find_with_opts(collection, filter.get(), opts.get(), read_prefs);
    auto result = drain(cursor, callback, what);
    mongoc_collection_destroy(collection);
    return result;
  }
};

ClusterReader::ClusterReader() : impl_(std::make_unique<Impl>()) {}
ClusterReader::~ClusterReader() = default;

Expected<std::unique_ptr<ClusterReader>> ClusterReader::open(const ReaderOptions& options) {
  ensure_mongoc_initialized();
  std::unique_ptr<ClusterReader> reader(new ClusterReader());
  Impl& impl = *reader->impl_;
  impl.owner = reader.get();
  impl.options = options;
  reader->redacted_uri_ = redact_uri(options.uri);
  impl.scrub.raw_uri = options.uri;
  impl.scrub.redacted_uri = reader->redacted_uri_;
  if (options.password && !options.password->empty())
    impl.scrub.secrets.push_back(*options.password);

  bson_error_t error{};
  impl.uri = mongoc_uri_new_with_error(options.uri.c_str(), &error);
  if (!impl.uri) {
    return Error{"", "invalid URI " + reader->redacted_uri_ + ": " + impl.scrub(error.message),
                 kInvalidUri};
  }
  if (const char* written = mongoc_uri_get_password(impl.uri); written && *written) {
    impl.scrub.secrets.emplace_back(written);
  }
  if (options.username && !mongoc_uri_set_username(impl.uri, options.username->c_str())) {
    return Error{"", "the user name is not valid UTF-8", kInvalidUri};
  }
  if (options.password && !mongoc_uri_set_password(impl.uri, options.password->c_str())) {
    return Error{"", "the password is not valid UTF-8", kInvalidUri};
  }
  // Bounds a wait the URI leaves open: finding a server, and one batch of a full read.
  if (!mongoc_uri_has_option(impl.uri, MONGOC_URI_SERVERSELECTIONTIMEOUTMS) &&
      options.max_time_ms > 0) {
    mongoc_uri_set_option_as_int32(impl.uri, MONGOC_URI_SERVERSELECTIONTIMEOUTMS,
                                   options.max_time_ms);
  }
  if (!mongoc_uri_has_option(impl.uri, MONGOC_URI_SOCKETTIMEOUTMS) && options.max_time_ms > 0) {
    mongoc_uri_set_option_as_int32(impl.uri, MONGOC_URI_SOCKETTIMEOUTMS,
                                   options.max_time_ms + kSocketTimeoutMarginMs);
  }
  if (const char* db = mongoc_uri_get_database(impl.uri)) reader->uri_database_ = db;

  // Resolves mongodb+srv:// (SRV and TXT records) and applies the URI's TLS options.
  impl.pool = mongoc_client_pool_new_with_error(impl.uri, &error);
  if (!impl.pool) return impl.fail(error, "cannot use " + reader->redacted_uri_);
  mongoc_client_pool_set_error_api(impl.pool, MONGOC_ERROR_API_VERSION_2);
  if (!mongoc_uri_get_appname(impl.uri) && !options.app_name.empty()) {
    mongoc_client_pool_set_appname(impl.pool, options.app_name.c_str());
  }
  // Callbacks must be set before the first pop.
  mongoc_apm_callbacks_t* callbacks = mongoc_apm_callbacks_new();
  mongoc_apm_set_command_started_cb(callbacks, &Impl::on_command_started);
  mongoc_client_pool_set_apm_callbacks(impl.pool, callbacks, &impl);
  mongoc_apm_callbacks_destroy(callbacks);
  impl.client = mongoc_client_pool_pop(impl.pool);
  impl.read_prefs = mongoc_read_prefs_new(MONGOC_READ_SECONDARY_PREFERRED);
  return reader;
}

void ClusterReader::before_command() {
  commands_sent_.fetch_add(1, std::memory_order_relaxed);
  const double rate = impl_->options.max_commands_per_second;
  if (rate <= 0) return;
  const auto interval =
      std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(1.0 / rate));
  const Clock::time_point due = impl_->last_command + interval;
  for (auto now = Clock::now(); now < due && !stopped(impl_->options.stop); now = Clock::now()) {
    std::this_thread::sleep_for(std::min<Clock::duration>(due - now, kPauseSlice));
  }
  impl_->last_command = Clock::now();
}

Expected<ClusterReader::Document> ClusterReader::write_on_primary(const std::string& db,
                                                                  const Document& command) {
  const std::string what = "a write to " + db;
  if (stopped(impl_->options.stop)) return stopped_error(what);
  bson_t cmd;
  if (!bson_init_static(&cmd, command.data(), command.size())) {
    return Error{"", what + ": not a BSON document", kBadReply};
  }
  OwnedBson opts, reply;
  impl_->append_max_time(opts.get());
  bson_error_t error{};
  if (!mongoc_client_write_command_with_opts(impl_->client, db.c_str(), &cmd, opts.get(),
                                             reply.get(), &error)) {
    return impl_->fail(error, what);
  }
  // libmongoc reports ok: 0 as a failure, but a write error inside an ok reply as success.
  if (auto failed = first_write_error(reply.get(), what)) return *failed;
  return copy_of(reply.get());
}

Expected<std::vector<std::string>> ClusterReader::list_databases() {
  OwnedBson cmd;
  BSON_APPEND_INT32(cmd.get(), "listDatabases", 1);
  BSON_APPEND_BOOL(cmd.get(), "nameOnly", true);
  impl_->append_max_time(cmd.get());
  auto reply = impl_->command("admin", cmd.get(), "listDatabases");
  if (!reply) return reply.error();
  bson_t doc;
  bson_init_static(&doc, reply->data(), reply->size());
  std::vector<std::string> names;
  bson_iter_t it, databases;
  if (!bson_iter_init_find(&it, &doc, "databases") || !BSON_ITER_HOLDS_ARRAY(&it) ||
      !bson_iter_recurse(&it, &databases)) {
    return Error{"", "listDatabases: the reply has no databases array", kBadReply};
  }
  while (bson_iter_next(&databases)) {
    bson_iter_t entry;
    if (!BSON_ITER_HOLDS_DOCUMENT(&databases) || !bson_iter_recurse(&databases, &entry) ||
        !bson_iter_find(&entry, "name") || !BSON_ITER_HOLDS_UTF8(&entry)) {
      continue;
    }
    const std::string name = bson_iter_utf8(&entry, nullptr);
    if (name == "admin" || name == "local" || name == "config") continue;
    names.push_back(name);
  }
  return names;
}

Expected<std::vector<ClusterReader::Document>> ClusterReader::list_collections(
    const std::string& db) {
  OwnedBson cmd;
  BSON_APPEND_INT32(cmd.get(), "listCollections", 1);
  bson_t cursor;
  BSON_APPEND_DOCUMENT_BEGIN(cmd.get(), "cursor", &cursor);
  bson_append_document_end(cmd.get(), &cursor);
  impl_->append_max_time(cmd.get());
  return impl_->cursor_command(db, cmd.get(), "listCollections on " + db);
}

Expected<std::vector<ClusterReader::Document>> ClusterReader::list_indexes(
    const std::string& db, const std::string& coll) {
  OwnedBson cmd;
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
        bson_t doc;
        bson_iter_t stats;
        if (!bson_init_static(&doc, data, length) ||
            !bson_iter_init_find(&stats, &doc, "storageStats") ||
            !BSON_ITER_HOLDS_DOCUMENT(&stats)) {
          return true;
        }
        uint32_t stats_length = 0;
        const uint8_t* stats_data = nullptr;
        bson_iter_document(&stats, &stats_length, &stats_data);
        only = Document(stats_data, stats_data + stats_length);
        ++documents;
        bson_iter_t field;
        if (bson_iter_recurse(&stats, &field)) {
          while (bson_iter_next(&field)) {
            const std::string_view key = bson_iter_key(&field);
            if (!BSON_ITER_HOLDS_NUMBER(&field)) continue;
            if (key == "count") count += bson_iter_as_int64(&field);
            if (key == "size") size += bson_iter_as_int64(&field);
            if (key == "storageSize") storage_size += bson_iter_as_int64(&field);
          }
        }
        return true;
      },
      what);
  bson_destroy(pipeline);
  if (read && documents == 1) return std::move(*only);
  if (read && documents > 1) {
    OwnedBson merged;
    BSON_APPEND_INT64(merged.get(), "count", count);
    BSON_APPEND_INT64(merged.get(), "size", size);
    BSON_APPEND_INT64(merged.get(), "avgObjSize", count > 0 ? size / count : 0);
    BSON_APPEND_INT64(merged.get(), "storageSize", storage_size);
    BSON_APPEND_INT64(merged.get(), "shards", static_cast<int64_t>(documents));
    return copy_of(merged.get());
  }
  if (read) return Error{"", what + ": the reply has no storageStats", kBadReply};
  if (!is_not_supported(read.error())) return read.error();
  // Servers without the stage still have the command, with the same field names.
  OwnedBson cmd;
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
