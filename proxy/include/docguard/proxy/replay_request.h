// What `docguard replay` sends for a recorded request: the recorded OP_MSG (or legacy OP_QUERY
// command) turned into one command document libmongoc can run against another cluster.
//
// The recorded bytes are the client's; they name things that only meant something on the
// recorded cluster and connection, so the rewrite
//   - folds kind-1 document sequences back into the body's array field (libmongoc sends a
//     command as one document);
//   - drops $clusterTime (signed by the recorded cluster), $db (the database is passed apart)
//     and $readPreference (given to libmongoc, which does the server selection);
//   - takes the lsid out: each recorded lsid gets a key of its own (a fresh session id, the same
//     every time that lsid comes back), and the replay runs the command in a libmongoc session
//     of its own for that key (libmongoc would add a second lsid to a body that has one), so a
//     replayed retryable write keeps its txnNumber sequence in a new session;
//   - rewrites the cursor id of getMore and killCursors from the recorded cluster's to the
//     live one's (CursorMap: filled from the replies as the replay goes).
// Handshakes and authentication are not replayed: libmongoc does its own with the target URI's
// credentials.
#pragma once

#include <cstdint>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>

#include "docguard/codec/bson_view.h"
#include "docguard/codec/message.h"

namespace docguard::proxy {

// Recorded lsid -> the replay's session key, a fresh session id; the runner keeps a libmongoc
// session per key and connection.
class SessionMap {
 public:
  // The replay's lsid document ({id: <UUID>}) for a recorded lsid's bytes.
  codec::BsonView replay_lsid(codec::BsonView recorded);
  size_t size() const;

 private:
  mutable std::mutex mu_;
  std::unordered_map<std::string, codec::OwnedBson> lsids_;
};

// Recorded cursor id -> the live cursor id (and the server that holds it). Shared: a cursor
// opened on one connection may be continued on another.
class CursorMap {
 public:
  struct Live {
    int64_t id = 0;
    uint32_t server_id = 0;  // libmongoc's server id: getMore must go where the cursor is
  };
  void put(int64_t recorded, Live live);
  // The live cursor for a recorded id; nullopt-like {0, 0} when the replay has none.
  Live find(int64_t recorded) const;
  void erase(int64_t recorded);

 private:
  mutable std::mutex mu_;
  std::unordered_map<int64_t, Live> cursors_;
};

enum class RequestAction {
  kSend,        // run `command` on `database`
  kHandshake,   // hello, authentication, markers: libmongoc does its own
  kUnsupported  // a legacy request the replay cannot express as a command
};

struct ReplayRequest {
  RequestAction action = RequestAction::kSend;
  std::string name;      // the command name as sent ("find", "getMore")
  std::string database;  // from $db (OP_QUERY: from the collection name)
  codec::OwnedBson command;
  std::string read_preference;  // $readPreference.mode, empty for the default (primary)
  // The replay's session key for the recorded lsid ({id: <fresh UUID>}, owned by the
  // SessionMap); empty when the request had none.
  codec::BsonView lsid;
  bool is_write = false;  // anything that is not a read: skipped by --read-only
  // getMore / killCursors: the recorded cursor ids they name (before the rewrite), so the
  // comparison attaches their batches to the operation that opened the cursor.
  int64_t recorded_cursor = 0;
  uint32_t server_id = 0;  // getMore: the live cursor's server, 0 when unknown
  bool more_to_come = false;
};

// Rewrites a recorded request message (OP_MSG or OP_QUERY, header included). Never throws: a
// message the codec cannot parse comes back kUnsupported.
ReplayRequest rewrite_request(codec::Bytes message, SessionMap& sessions, const CursorMap& cursors);

// The reply document of a recorded reply message (OP_MSG body or OP_REPLY's first document);
// empty when there is none.
codec::BsonView reply_document(codec::Bytes message);

// Commands that only read: the rest are writes for --read-only (an aggregate with $out or
// $merge writes too).
bool is_read_command(std::string_view name, const codec::BsonView& body);
bool is_handshake_command(std::string_view name);

}  // namespace docguard::proxy
