// What `docguard replay` may send, decided before anything is sent: a replay against staging
// does only what production did. A request is read by the server's rule (codec's
// request_identity.h): a legacy OP_QUERY command other than the handshake, a request whose `$db`
// is missing or invalid, or one the recorded server refused for its form is never sent. A command
// is replayed only from an allow-list (reads, CRUD, cursors, transactions' ends, and the catalog
// commands a workload needs); everything else (user and role management, parameters, applyOps,
// replica-set and sharding administration, shutdown, ...) is skipped and counted by name. A request
// whose recording holds the redaction marker is never sent (it would write the marker as a password
// or a value), nor is a request docguard itself answered (a refused write never reached the
// recorded cluster).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "docguard/codec/message.h"

namespace docguard::tools {

enum class SkipReason {
  kNone,           // replay it
  kHandshake,      // hello, authentication, endSessions: libmongoc does its own
  kMarker,         // the recorder wrote a marker in place of the message
  kRedacted,       // the recorded message holds the redaction marker
  kNotAllowed,     // not on the allow-list: counted by name
  kWritesOut,      // an aggregate with $out or $merge, without --allow-writes-out
  kReadOnly,       // a write, under --read-only
  kLegacy,         // a legacy request that is not a command (OP_INSERT, OP_QUERY on a collection)
  kLegacyCommand,  // an OP_QUERY command but the handshake: the server refuses it since 5.1
  kInvalid,        // a request the server refuses by its form: no or an invalid `$db`, no name
  kMalformed,      // a message the codec cannot parse
  kRefusedWhenRecorded,  // the recorded reply refused it for its form, or as unauthorized
  kAnsweredByDocguard,   // docguard refused it: the recorded cluster never saw it
  kSecretNamespace       // it reads or writes users, roles or the key vault
};

struct ReplayPolicy {
  bool read_only = false;
  bool allow_writes_out = false;
  // Replay what the clients sent, refused requests and refused statements included, rather than
  // what docguard forwarded.
  bool as_sent_by_client = false;
};

struct RequestClass {
  SkipReason skip = SkipReason::kNone;
  std::string name;  // the command's name ("" when none could be read)
  bool is_write = false;
  bool more_to_come = false;  // no reply is expected
  // Results that cannot repeat ($sample, $rand, $$NOW, $currentDate, a change stream): the
  // operation is replayed but "not comparable", with this reason.
  std::string not_comparable;
};

// Classifies a recorded request message; `answered_by_docguard` from its side line,
// `recorded_refusal` the code of its recorded reply when that reply refused it for its form or as
// unauthorized (recorded_refusal_code below), 0 otherwise. Never throws.
RequestClass classify_request(codec::Bytes message, bool answered_by_docguard,
                              const ReplayPolicy& policy, int32_t recorded_refusal = 0);

// The code of a recorded reply when it says the server did nothing with the request because of
// its form (codec::is_form_refusal_code) or because the user was not authorized (13): a replay
// with other credentials, or against another server version, could make such a request do what
// production never did. 0 for any other reply.
int32_t recorded_refusal_code(codec::Bytes reply);

const char* skip_reason_name(SkipReason reason);

}  // namespace docguard::tools
