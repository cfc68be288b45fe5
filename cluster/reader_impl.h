// Private to the cluster library: the reader's libmongoc state and the calls every read is made
// of (one command, a cursor drained, an aggregate, a find), shared by cluster_reader.cc (opening,
// pacing, writes) and cluster_reads.cc (the catalog, statistics and document reads).
#pragma once

#include <mongoc/mongoc.h>

#include <atomic>
#include <chrono>
#include <string>
#include <vector>

#include "discovery_wait.h"
#include "docguard/cluster/cluster_reader.h"
#include "docguard/codec/bson_view.h"
#include "reader_errors.h"

namespace docguard::cluster {

using Clock = std::chrono::steady_clock;

inline bool stopped(const std::atomic<bool>* stop) { return stop && stop->load(); }

inline Error stopped_error(const std::string& what) {
  return Error{ErrorKind::kStopped, ErrorSource::kDocguard, what + ": stopped before it finished"};
}

inline ClusterReader::Document copy_of(const bson_t* doc) {
  const uint8_t* data = bson_get_data(doc);
  return ClusterReader::Document(data, data + doc->len);
}

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

  // Before each command: the stop flag, the first discovery wait, and, while no server has
  // answered yet, a wait that notices the stop flag (libmongoc's own selection would not).
  Expected<void> ready(const std::string& what) {
    if (stopped(options.stop)) return stopped_error(what);
    if (!discovery_awaited) {
      discovery_awaited = true;
      await_first_discovery(client, options.stop);
    }
    const std::chrono::milliseconds limit(
        mongoc_uri_get_option_as_int32(uri, MONGOC_URI_SERVERSELECTIONTIMEOUTMS, 30000));
    if (!await_answering_server(client, limit, options.stop)) {
      if (stopped(options.stop)) return stopped_error(what);
      // What libmongoc's selection reports after the same wait.
      bson_error_t error{};
      bson_set_error(&error, MONGOC_ERROR_SERVER_SELECTION, MONGOC_ERROR_SERVER_SELECTION_FAILURE,
                     "No suitable servers found: `serverSelectionTimeoutMS` expired: no server "
                     "answered");
      return fail(error, what);
    }
    return {};
  }

  void append_max_time(bson_t* doc) const {
    if (options.max_time_ms > 0) BSON_APPEND_INT32(doc, "maxTimeMS", options.max_time_ms);
  }

  Error fail(const bson_error_t& error, const std::string& what) const {
    return to_error(error, what, scrub);
  }

  // A command that answers with one document (listDatabases, collStats).
  Expected<Document> command(const std::string& db, const bson_t* cmd, const std::string& what) {
    if (auto go = ready(what); !go) return go.error();
    codec::ScopedBson reply;
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
    if (auto go = ready(what); !go) return go.error();
    bson_error_t error{};
    mongoc_server_description_t* server =
        mongoc_client_select_server(client, false, read_prefs, &error);
    if (!server) return fail(error, what);
    codec::ScopedBson opts;
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
    if (auto go = ready(what); !go) return go.error();
    mongoc_collection_t* collection =
        mongoc_client_get_collection(client, db.c_str(), coll.c_str());
    codec::ScopedBson opts;
    append_max_time(opts.get());
    mongoc_cursor_t* cursor = mongoc_collection_aggregate(collection, MONGOC_QUERY_NONE, pipeline,
                                                          opts.get(), read_prefs);
    auto result = drain(cursor, callback, what);
    mongoc_collection_destroy(collection);
    return result;
  }

  Expected<uint64_t> find(const std::string& db, const std::string& coll, uint64_t limit,
                          const DocumentCallback& callback, const std::string& what) {
    if (auto go = ready(what); !go) return go.error();
    mongoc_collection_t* collection =
        mongoc_client_get_collection(client, db.c_str(), coll.c_str());
    codec::ScopedBson filter, opts;
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

}  // namespace docguard::cluster
