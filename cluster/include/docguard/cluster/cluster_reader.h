// docguard's own reader of a cluster: the live scan (`docguard scan mongodb://...`) and the
// proxy's periodic introspection read collections, indexes, statistics and documents with it.
//
// It is polite: one command at a time, each with maxTimeMS, read preference secondaryPreferred
// (a secondary when there is one), an optional ceiling on commands per second (the pause is taken
// on the calling thread), and a stop flag that ends a pause or a long read promptly. Replies are
// raw BSON; what they mean is the advisor's business.
//
// A ClusterReader is used by one thread at a time (it keeps one client popped from its own pool).
// Credentials are set on the URI and never appear in an error message: every message names the
// URI with its password replaced by "****".
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "docguard/cluster/expected.h"

namespace docguard::cluster {

struct ReaderOptions {
  std::string uri;  // mongodb:// or mongodb+srv://
  // Set on the URI when present (they replace any user and password written in it).
  std::optional<std::string> username;
  std::optional<std::string> password;
  // The handshake's application name, unless the URI has appName.
  std::string app_name = "docguard-introspection";
  // maxTimeMS of every command. A read of every document (read_documents with n == 0) gets none:
  // the server counts a cursor's time over all its getMores, so a large collection would be cut
  // off; it is bounded by the socket timeout per batch and the stop flag instead.
  int32_t max_time_ms = 10000;
  double max_commands_per_second = 0;  // 0: unpaced
  // When set and true, a pause ends at once and a read stops between documents (the call then
  // fails with ErrorKind::kStopped). May be changed from any thread.
  std::atomic<bool>* stop = nullptr;
};

// How read_documents read a collection.
enum class ReadMethod { kSample, kFind, kAll };
const char* read_method_name(ReadMethod method);  // "$sample", "find", "all"

// A reader's failures that are not the server's answer have these kinds: kStopped (the stop
// flag was set), kConnect (no server could be selected, or the URI's DNS), kNetwork (a
// connection failed or timed out mid-command), kBadReply (a reply docguard could not make sense
// of), kConfiguration (the URI or a credential was refused).

// The Error for a command the server refused with `code`: its kind says what the code means
// (kNotAuthorized, kNotSupported, kTimeout; kRefused for any other code).
Error server_error(std::string message, int32_t code);
bool is_unauthorized(const Error& error);   // 13 Unauthorized, 18 AuthenticationFailed
bool is_not_supported(const Error& error);  // the server lacks the command or stage

class ClusterReader {
 public:
  using Document = std::vector<uint8_t>;  // one whole BSON document
  // Called for each document read; the bytes are valid during the call only. Return false to
  // stop reading (read_documents then succeeds with what was read).
  using DocumentCallback = std::function<bool(const uint8_t* data, uint32_t size)>;

  // Checks the URI and credentials and creates the pool; no network traffic yet (the first
  // command connects, and so reports an unreachable server or a failed authentication).
  static Expected<std::unique_ptr<ClusterReader>> open(const ReaderOptions& options);
  ~ClusterReader();
  ClusterReader(const ClusterReader&) = delete;
  ClusterReader& operator=(const ClusterReader&) = delete;

  // The URI with the password replaced by "****": safe to print.
  const std::string& redacted_uri() const { return redacted_uri_; }
  // The database the URI names ("mongodb://host/shop" -> "shop"), empty when none.
  const std::string& uri_database() const { return uri_database_; }

  // Names of the databases, without admin, local and config (listDatabases, nameOnly).
  Expected<std::vector<std::string>> list_databases();
  // listCollections entries ({name, type, options, info, idIndex}) as the server sends them.
  Expected<std::vector<Document>> list_collections(const std::string& db);
  // listIndexes documents ({v, key, name, unique, ...}).
  Expected<std::vector<Document>> list_indexes(const std::string& db, const std::string& coll);
  // The storage statistics: $collStats {storageStats: {}}'s storageStats document, or, when the
  // server has no $collStats, the collStats command's reply (the same fields: count, size,
  // avgObjSize, storageSize).
  Expected<Document> collection_stats(const std::string& db, const std::string& coll);
  // $indexStats documents ({name, key, accesses: {ops, since}, ...}). A server without the
  // stage gives an error that is_not_supported() recognises.
  Expected<std::vector<Document>> index_stats(const std::string& db, const std::string& coll);
  // n > 0: about n documents with $sample (find with limit n when the server refuses $sample,
  // and always for a time-series collection, where $sample reads buckets); n == 0: every
  // document with find, as mongodump reads. Documents stream through the cursor one batch at a
  // time.
  Expected<ReadMethod> read_documents(const std::string& db, const std::string& coll, uint64_t n,
                                      const DocumentCallback& callback, bool timeseries = false);

  // A command that writes (introspection's lease and the facts it shares with its
  // fleet, in a database docguard is given for it): sent to the primary with maxTimeMS, its
  // reply returned. A reply with ok: 0 or a write error is an Error with the server's code.
  Expected<Document> write_on_primary(const std::string& db, std::span<const uint8_t> command);

  // Commands sent so far (getMore and killCursors included; the handshake and authentication
  // are not counted).
  uint64_t commands_sent() const { return commands_sent_.load(std::memory_order_relaxed); }

 private:
  struct Impl;
  ClusterReader();
  void before_command();  // counts and paces; called on the thread running the command

  std::unique_ptr<Impl> impl_;
  std::string redacted_uri_;
  std::string uri_database_;
  std::atomic<uint64_t> commands_sent_{0};
};

}  // namespace docguard::cluster
