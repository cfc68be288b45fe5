// What `docguard replay` sends for a recorded request: the recorded OP_MSG (or legacy OP_QUERY
// command) turned into one command document libmongoc can run against another cluster.
//
// The recorded bytes are the client's; they name things that only meant something on the
// recorded cluster and connection, so the rewrite
//   - folds kind-1 document sequences back into the body's array field (libmongoc sends a
//     command as one document);
//   - drops $clusterTime (signed by the recorded cluster), $db (the database is passed apart)
//     and $readPreference (given to libmongoc, which does the server selection);
//   - takes the lsid out: the replay runs the command in the live session that stands for the
//     recorded lsid for the whole replay (libmongoc would add a second lsid to a body that has
//     one), so a replayed retryable write keeps its txnNumber sequence in a session of its own;
//   - rewrites the cursor id of getMore and killCursors from the recorded cluster's to the
//     live one's (CursorMap: filled from the replies as the replay goes), when it is sent;
//   - drops the statements of a batch docguard refused (the side file names them), so what is
//     sent is what docguard forwarded.
// Handshakes and authentication are not replayed: libmongoc does its own with the target URI's
// credentials.
#pragma once

#include <cstdint>
#include <mutex>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>

#include "docguard/codec/bson_view.h"
#include "docguard/codec/message.h"

namespace docguard::tools {

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
  kSend,             // run `command` on `database`
  kHandshake,        // hello, authentication, markers: libmongoc does its own
  kUnsupported,      // a legacy request, or one the server refuses by its form: never sent
  kSecretNamespace,  // what would be sent reads or writes users, roles or keys: never sent
  kEmpty             // every statement of the batch was refused by docguard: nothing was forwarded
};

struct ReplayRequest {
  RequestAction action = RequestAction::kSend;
  std::string name;      // the command name as sent ("find", "getMore")
  std::string database;  // the request's `$db`, as the server reads it (request_identity.h)
  codec::OwnedBson command;
  std::string read_preference;  // $readPreference.mode, empty for the default (primary)
  // The recorded lsid (a view into the recorded message); empty when the request had none.
  codec::BsonView lsid;
  bool is_write = false;  // anything that is not a read: skipped by --read-only
  // getMore / killCursors: the recorded cursor ids they name (before the rewrite), so the
  // comparison attaches their batches to the operation that opened the cursor.
  int64_t recorded_cursor = 0;
  uint32_t server_id = 0;  // getMore: the live cursor's server, 0 when unknown
  bool more_to_come = false;
};

// Rewrites a recorded request message (OP_MSG, header included); `refused` are the statements
// docguard refused of a batch it forwarded in part. Never throws: a message the codec cannot
// parse, a legacy OP_QUERY and a request the server refuses for its form come back kUnsupported,
// one whose command as rewritten touches a secret namespace kSecretNamespace.
ReplayRequest rewrite_request(codec::Bytes message, const CursorMap& cursors,
                              std::span<const int32_t> refused = {});

// Why a request rewrite_request did not make kSend is not sent, in the report's words
// (`not_replayed`): "answered_by_docguard", "secret_namespace", "handshake" or "invalid_request".
const char* skip_reason_of(RequestAction action);

// The reply document of a recorded reply message (OP_MSG body or OP_REPLY's first document);
// empty when there is none.
codec::BsonView reply_document(codec::Bytes message);

bool is_handshake_command(std::string_view name);

}  // namespace docguard::tools
