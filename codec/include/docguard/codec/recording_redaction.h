// What a traffic recording may hold of a message: the message with every secret taken out, or a
// marker when docguard cannot read the message well enough to be sure (never the raw bytes).
// Secrets, by policy (redaction_policy.h): fields that hold them at any depth, in requests and
// replies; every field but the envelope of authentication, user-management and parameter
// commands; the documents of secret namespaces (users, roles, the key vault, the user's own);
// authentication steps wherever they appear; $clusterTime (its signature is the cluster's key at
// work). Compressed messages come out decompressed, checksums dropped.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "docguard/codec/bson_view.h"
#include "docguard/codec/message.h"
#include "docguard/codec/redaction_policy.h"
#include "docguard/codec/sensitive_cursors.h"

namespace docguard::codec {

// The text that stands where a secret was.
inline constexpr std::string_view kRedactedMarker = "[redacted by docguard]";
// The key of a marker message's only field: why the message itself is not in the recording.
inline constexpr std::string_view kUnrecordedKey = "$docguardUnrecorded";

struct RecordableMessage {
  std::vector<uint8_t> bytes;  // a whole wire message, safe to write
  // A request whose reply carries secrets too (authentication, parameters, a secret
  // namespace's documents): the caller passes this to redact_reply for the reply to it. A reply
  // kept to its status as a sensitive request's (or a sensitive cursor's).
  bool sensitive = false;
  bool marker = false;  // the message could not be read: `bytes` is a marker message
  // A getMore's cursor id: the caller passes it to redact_reply with the reply to it, which
  // forgets the cursor when that reply exhausts it.
  int64_t cursor = 0;
  // An OP_MSG with moreToCome: a request that expects no reply, or an exhaust cursor's reply
  // that the next reply answers (by this reply's request id) without a request in between.
  bool more_to_come = false;
};

// A client's request as it may be recorded. With `cursors`, a getMore or killCursors that names
// one of them is sensitive (and a killCursors forgets the cursors it kills). Never throws.
RecordableMessage redact_request(Bytes message, uint32_t max_message_bytes,
                                 const RedactionPolicy& policy = default_redaction_policy(),
                                 SensitiveCursors* cursors = nullptr);
// An upstream reply as it may be recorded; `to_sensitive` when its request was sensitive (all
// of the reply but its status is then replaced, as it is for every reply when the policy keeps
// no reply documents). With `cursors`, a sensitive request's reply that opens a cursor has it
// remembered, and one that exhausts its request's cursor (`asked_cursor`, the getMore's) has
// it forgotten; a reply whose cursor id is one of `cursors` is taken for a sensitive one.
// Never throws.
RecordableMessage redact_reply(Bytes message, bool to_sensitive, uint32_t max_message_bytes,
                               const RedactionPolicy& policy = default_redaction_policy(),
                               SensitiveCursors* cursors = nullptr, int64_t asked_cursor = 0);

// Whether a command document, run on database `db`, reads or writes a secret namespace of
// `policy` (its own collection, a stage's, a rename's, an applyOps entry's): what the replay asks
// of exactly the command and database it is about to send. A document that cannot be read
// counts as one that does.
bool command_touches_secret_namespace(const BsonView& command, std::string_view db,
                                      const RedactionPolicy& policy = default_redaction_policy());

// An OP_MSG {$docguardUnrecorded: why, $db: "admin"} with the given ids: what is written in place
// of a message docguard could not read.
std::vector<uint8_t> unrecorded_marker(int32_t request_id, int32_t response_to,
                                       std::string_view why);

}  // namespace docguard::codec
