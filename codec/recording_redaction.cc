#include "docguard/codec/recording_redaction.h"

#include <bson/bson.h>

#include <algorithm>
#include <array>
#include <span>

#include "docguard/codec/bson_elements.h"
#include "docguard/codec/bson_view.h"
#include "docguard/codec/op_compressed.h"
#include "docguard/codec/op_msg.h"
#include "docguard/codec/op_query.h"
#include "docguard/codec/request_identity.h"
#include "document_redactor.h"
#include "field_references.h"
#include "status_reply.h"

namespace docguard::codec {
namespace {

// Commands whose fields (but the name) hold passwords, SCRAM messages or parameter values that
// may be secrets (ldapQueryPassword, a cluster parameter's value): their reply is kept to its
// status too.
constexpr std::array<std::string_view, 12> kSensitiveCommands = {
    "saslStart",           "saslContinue",       "authenticate",   "createUser",   "updateUser",
    "copydbsaslstart",     "getnonce",           "copydbgetnonce", "setParameter", "getParameter",
    "setClusterParameter", "getClusterParameter"};
// Of these, the ones whose name's value may itself be a secret ({setClusterParameter: {...}}).
constexpr std::array<std::string_view, 2> kSecretCommandValue = {"setClusterParameter",
                                                                 "getClusterParameter"};
// What stays of a sensitive request, or of one that touches a secret namespace: routing, the
// mechanism's name and the session, never a payload or a document.
constexpr std::array<std::string_view, 16> kKeptInSensitiveRequest = {
    "$db",         "mechanism",        "conversationId", "autoAuthorize",   "options",
    "roles",       "mechanisms",       "lsid",           "$readPreference", "txnNumber",
    "autocommit",  "startTransaction", "ordered",        "collection",      "batchSize",
    "writeConcern"};
enum class Role { kRequest, kSensitiveRequest, kReply, kStatusReply };

struct Rewritten {
  ScopedBson doc;
  bool changed = false;
};

// A request body under its role: a sensitive one keeps its name and envelope only.
bool rewrite_request_body(const BsonView& in, Role role, DocumentRedactor& redactor, bson_t* out) {
  if (role != Role::kSensitiveRequest) return redactor.copy(in, out);
  bson_t source = in.borrow();
  bson_iter_t it;
  if (in.empty() || !bson_iter_init(&it, &source)) return false;
  bool first = true;
  while (bson_iter_next(&it)) {
    const std::string_view key = key_of(it);
    const bool is_name = first;
    first = false;
    if (key == "$clusterTime") {
      redactor.replace(out, key);  // counted as a change; the marker is harmless here
      continue;
    }
    const bool keep = is_name ? !among(kSecretCommandValue, key) &&
                                    !BSON_ITER_HOLDS_DOCUMENT(&it) && !BSON_ITER_HOLDS_ARRAY(&it)
                              : among(kKeptInSensitiveRequest, key);
    if (!keep) {
      redactor.replace(out, key);
    } else if (!redactor.copy_element(it, out)) {
      return false;
    }
  }
  return true;
}

bool rewrite_reply_body(const BsonView& in, Role role, DocumentRedactor& redactor, bson_t* out) {
  if (role != Role::kStatusReply) return redactor.copy(in, out);
  return rewrite_status_reply(in, redactor, out);
}

// The command's name and database, looking inside a legacy {$query: {...}} wrapper.
std::pair<std::string_view, BsonView> command_of(const BsonView& body) {
  const BsonView command = legacy_command_document(body);
  return {first_key(command), command};
}

// Whether a getMore or killCursors continues a cursor a sensitive request opened (`*cursor`:
// the getMore's). The cursors a killCursors kills are forgotten.
bool continues_sensitive_cursor(std::string_view name, const BsonView& command,
                                SensitiveCursors& cursors, int64_t* cursor) {
  if (name == "getMore") {
    *cursor = int_field(command, "getMore");
    return cursors.names(*cursor);
  }
  if (name != "killCursors") return false;
  bool named = cursors.overflowed();
  BsonElements list(command);
  if (!list.find("cursors") || !is_container(list.type)) return named;
  BsonElements id(list.container());
  int64_t value = 0;
  while (id.next()) {
    if (!id.as_int(&value) || !cursors.names(value)) continue;
    named = true;
    cursors.forget(value);
  }
  return named;
}

// A request body's role; `db` is the database it runs on ("" when the body names none).
Role request_role(const BsonView& body, std::string_view db, const DocumentRedactor& redactor,
                  const RedactionPolicy& policy, const OpMsg* msg, SensitiveCursors* cursors,
                  RecordableMessage& out) {
  const auto [name, command] = command_of(body);
  std::string_view database = find_string(command, "$db");
  if (database.empty()) database = find_string(body, "$db");
  if (database.empty()) database = db;
  // The server refuses a database name holding a NUL, but a reader that takes it as a C string
  // (libmongoc's) stops there: judged as that reader would send it.
  database = database.substr(0, database.find('\0'));
  const bool sensitive =
      among(kSensitiveCommands, name) || redactor.touches_secret_namespace(command, database) ||
      // A listed field's value computed, bound or returned under another name (no walk when
      // the policy names no fields).
      references_policy_field(body, msg, policy) ||
      (cursors != nullptr && continues_sensitive_cursor(name, command, *cursors, &out.cursor));
  out.sensitive = sensitive;
  return sensitive ? Role::kSensitiveRequest : Role::kRequest;
}

// Rewrites a request body; a legacy wrapper is rewritten inside, its other keys as any document.
bool rewrite_request_document(const BsonView& body, Role role, DocumentRedactor& redactor,
                              Rewritten& out) {
  bson_t doc = body.borrow();
  bson_iter_t it;
  if (body.empty() || !bson_iter_init(&it, &doc) || !bson_iter_next(&it)) {
    return false;
  }
  const std::string_view name = key_of(it);
  bool ok = true;
  if ((name == "$query" || name == "query") && BSON_ITER_HOLDS_DOCUMENT(&it)) {
    bson_t inner;
    bson_append_document_begin(out.doc.get(), name.data(), static_cast<int>(name.size()), &inner);
    ok = rewrite_request_body(view_of(it), role, redactor, &inner);
    bson_append_document_end(out.doc.get(), &inner);
    while (ok && bson_iter_next(&it)) ok = redactor.copy_element(it, out.doc.get());
  } else {
    ok = rewrite_request_body(body, role, redactor, out.doc.get());
  }
  out.changed = redactor.changed();
  return ok;
}

RecordableMessage marker_for(const MsgHeader& header, std::string_view why) {
  return {unrecorded_marker(header.request_id, header.response_to, why), false, true};
}

RecordableMessage from_op_msg(Bytes m, bool is_request, bool to_sensitive, bool was_compressed,
                              const RedactionPolicy& policy, SensitiveCursors* cursors) {
  const OpMsg msg = OpMsg::parse(m, /*verify_checksum=*/false);
  RecordableMessage out;
  out.more_to_come = msg.more_to_come();
  if (!is_request) out.sensitive = to_sensitive;
  DocumentRedactor redactor(policy, /*reply=*/!is_request);
  Rewritten body;
  Role role = to_sensitive || !policy.reply_documents ? Role::kStatusReply : Role::kReply;
  if (is_request) {
    role = request_role(msg.body, {}, redactor, policy, &msg, cursors, out);
    if (!rewrite_request_document(msg.body, role, redactor, body)) {
      return marker_for(msg.header, "malformed or too deeply nested body");
    }
  } else {
    if (!rewrite_reply_body(msg.body, role, redactor, body.doc.get())) {
      return marker_for(msg.header, "malformed or too deeply nested body");
    }
    body.changed = redactor.changed();
  }
  // A sensitive request's sequences are its documents (users, keys): they go whole.
  const bool drop_sequences = role == Role::kSensitiveRequest && !msg.sequences.empty();
  std::vector<std::vector<OwnedBson>> sequences;
  if (!drop_sequences) {
    for (const auto& sequence : msg.sequences) {
      auto& docs = sequences.emplace_back();
      for (const BsonView& document : sequence.documents) {
        if (!redactor.copy(document, docs.emplace_back().get(), sequence.identifier)) {
          return marker_for(msg.header, "malformed or too deeply nested document");
        }
      }
    }
  }
  if (!redactor.changed() && !drop_sequences && !msg.checksum_present && !was_compressed) {
    out.bytes.assign(m.begin(), m.end());
    return out;
  }
  OpMsgBuilder builder(msg.header.request_id, msg.header.response_to, msg.flags);
  builder.body(body.changed ? body.doc.bytes() : msg.body.bytes());
  for (size_t i = 0; i < sequences.size(); ++i) {
    std::vector<BsonView> views;
    views.reserve(sequences[i].size());
    for (const OwnedBson& doc : sequences[i]) views.push_back(doc.view());
    builder.sequence(msg.sequences[i].identifier, std::span<const BsonView>(views));
  }
  builder.trace_context(msg.trace_context);
  out.bytes = builder.finish();
  return out;
}

void append_le32(std::vector<uint8_t>& out, int32_t v) {
  const size_t at = out.size();
  out.resize(at + 4);
  store_le32(out.data() + at, v);
}

RecordableMessage from_op_query(Bytes m, const RedactionPolicy& policy, SensitiveCursors* cursors) {
  const OpQuery query = OpQuery::parse(m);
  RecordableMessage out;
  DocumentRedactor redactor(policy);
  const std::string_view ns = query.full_collection_name;
  const size_t dot = ns.find('.');
  const std::string_view db = ns.substr(0, dot);
  const Role role = request_role(query.query, db, redactor, policy, nullptr, cursors, out);
  Rewritten doc;
  // A legacy query on a collection itself (not "<db>.$cmd") holds a filter on that namespace's
  // documents: of a secret one, nothing is kept.
  if (dot != std::string_view::npos && is_secret_namespace(policy, db, ns.substr(dot + 1))) {
    out.sensitive = true;
    constexpr std::array<std::string_view, 1> kNothingButRouting = {"$readPreference"};
    if (!redactor.copy(query.query, doc.doc.get(), {}, kNothingButRouting)) {
      return marker_for(query.header, "malformed query");
    }
    doc.changed = redactor.changed();
  } else if (!rewrite_request_document(query.query, role, redactor, doc)) {
    return marker_for(query.header, "malformed query");
  }
  std::vector<uint8_t>& b = out.bytes;
  b.resize(kHeaderSize);
  append_le32(b, query.flags);
  b.insert(b.end(), query.full_collection_name.begin(), query.full_collection_name.end());
  b.push_back(0);
  append_le32(b, query.number_to_skip);
  append_le32(b, query.number_to_return);
  const Bytes q = doc.changed ? doc.doc.bytes() : query.query.bytes();
  b.insert(b.end(), q.begin(), q.end());
  if (!query.return_fields_selector.empty()) {
    const Bytes r = query.return_fields_selector.bytes();
    b.insert(b.end(), r.begin(), r.end());
  }
  MsgHeader header = query.header;
  header.message_length = static_cast<int32_t>(b.size());
  write_header(b.data(), header);
  return out;
}

RecordableMessage from_op_reply(Bytes m, bool to_sensitive, const RedactionPolicy& policy) {
  const OpReply reply = OpReply::parse(m);
  RecordableMessage out;
  out.sensitive = to_sensitive;
  std::vector<uint8_t>& b = out.bytes;
  b.resize(kHeaderSize);
  append_le32(b, reply.response_flags);
  const auto cursor = static_cast<uint64_t>(reply.cursor_id);
  append_le32(b, static_cast<int32_t>(cursor & 0xffffffffu));
  append_le32(b, static_cast<int32_t>(cursor >> 32));
  append_le32(b, reply.starting_from);
  append_le32(b, static_cast<int32_t>(reply.documents.size()));
  const Role role = to_sensitive || !policy.reply_documents ? Role::kStatusReply : Role::kReply;
  for (const auto& document : reply.documents) {
    DocumentRedactor redactor(policy, /*reply=*/true);
    Rewritten doc;
    if (!rewrite_reply_body(document, role, redactor, doc.doc.get())) {
      return marker_for(reply.header, "malformed reply document");
    }
    const Bytes d = redactor.changed() ? doc.doc.bytes() : document.bytes();
    b.insert(b.end(), d.begin(), d.end());
  }
  MsgHeader header = reply.header;
  header.message_length = static_cast<int32_t>(b.size());
  write_header(b.data(), header);
  return out;
}

// The id of the cursor a reply answers with (0: exhausted, or none).
int64_t cursor_id_of(const BsonView& body) {
  BsonElements id(body);
  int64_t value = 0;
  return find_path(body, "cursor.id", &id) && id.as_int(&value) ? value : 0;
}

int64_t reply_cursor(Bytes m, OpCode op_code) {
  if (op_code == OpCode::kReply) {
    const OpReply reply = OpReply::parse(m);
    if (reply.cursor_id != 0 || reply.documents.empty()) return reply.cursor_id;
    return cursor_id_of(reply.documents[0]);
  }
  return cursor_id_of(OpMsg::parse(m, /*verify_checksum=*/false).body);
}

// A sensitive request's reply: the cursor it opens is remembered, the one it exhausts forgotten.
void track_cursor(Bytes m, OpCode op_code, SensitiveCursors& cursors, int64_t asked_cursor) {
  const int64_t id = reply_cursor(m, op_code);
  if (id != 0) {
    cursors.remember(id);
  } else if (asked_cursor != 0) {
    cursors.forget(asked_cursor);
  }
}

struct Tracking {
  SensitiveCursors* cursors = nullptr;
  int64_t asked_cursor = 0;
};

RecordableMessage redact(Bytes message, bool is_request, bool to_sensitive,
                         const RedactionPolicy& policy, uint32_t max_message_bytes,
                         Tracking tracking) {
  if (message.size() < kHeaderSize) return {unrecorded_marker(0, 0, "short message"), false, true};
  MsgHeader header = read_header(message.data());
  try {
    if (header.message_length < 0 || static_cast<size_t>(header.message_length) != message.size()) {
      return marker_for(header, "length mismatch");
    }
    std::vector<uint8_t> plain;
    Bytes m = message;
    const bool compressed = header.op_code == OpCode::kCompressed;
    if (compressed) {
      plain = decompress_message(message, max_message_bytes);
      m = plain;
      header = read_header(m.data());
    }
    const bool has_cursor = !is_request && tracking.cursors != nullptr &&
                            (header.op_code == OpCode::kMsg || header.op_code == OpCode::kReply);
    // A reply naming a sensitive cursor is one, whichever request it answers: an exhaust
    // cursor's later batches, a reply whose request was not seen.
    if (has_cursor && !to_sensitive &&
        (tracking.cursors->size() > 0 || tracking.cursors->overflowed())) {
      const int64_t id = reply_cursor(m, header.op_code);
      to_sensitive = id != 0 && tracking.cursors->names(id);
    }
    if (has_cursor && to_sensitive) {
      track_cursor(m, header.op_code, *tracking.cursors, tracking.asked_cursor);
    }
    switch (header.op_code) {
      case OpCode::kMsg:
        return from_op_msg(m, is_request, to_sensitive, compressed, policy, tracking.cursors);
      case OpCode::kQuery:
        if (is_request) return from_op_query(m, policy, tracking.cursors);
        break;
      case OpCode::kReply:
        if (!is_request) return from_op_reply(m, to_sensitive, policy);
        break;
      default:
        break;
    }
    RecordableMessage out =
        marker_for(header, "opcode " + std::to_string(static_cast<int32_t>(header.op_code)) +
                               " is not recorded");
    // A legacy OP_GET_MORE may continue a sensitive request's cursor: its reply (an OP_REPLY
    // with the batch) is kept to its status, whichever cursor it names.
    out.sensitive = is_request && header.op_code == OpCode::kGetMore;
    return out;
  } catch (const std::exception& e) {
    return marker_for(header, std::string("unreadable: ") + e.what());
  }
}

}  // namespace

std::vector<uint8_t> unrecorded_marker(int32_t request_id, int32_t response_to,
                                       std::string_view why) {
  ScopedBson body;
  // The reason comes from docguard's own error texts; cut so a marker stays small.
  const std::string_view text = why.substr(0, 200);
  bson_append_utf8(body.get(), kUnrecordedKey.data(), static_cast<int>(kUnrecordedKey.size()),
                   text.data(), static_cast<int>(text.size()));
  // Readers of the server's recordings take every request for a command with a $db.
  BSON_APPEND_UTF8(body.get(), "$db", "admin");
  return OpMsgBuilder(request_id, response_to).body(body.bytes()).finish();
}

bool command_touches_secret_namespace(const BsonView& command, std::string_view db,
                                      const RedactionPolicy& policy) {
  return DocumentRedactor(policy).touches_secret_namespace(command, db);
}

RecordableMessage redact_request(Bytes message, uint32_t max_message_bytes,
                                 const RedactionPolicy& policy, SensitiveCursors* cursors) {
  return redact(message, /*is_request=*/true, /*to_sensitive=*/false, policy, max_message_bytes,
                {cursors, 0});
}

RecordableMessage redact_reply(Bytes message, bool to_sensitive, uint32_t max_message_bytes,
                               const RedactionPolicy& policy, SensitiveCursors* cursors,
                               int64_t asked_cursor) {
  return redact(message, /*is_request=*/false, to_sensitive, policy, max_message_bytes,
                {cursors, asked_cursor});
}

}  // namespace docguard::codec
