#include "docguard/codec/recording_redaction.h"

#include <bson/bson.h>

#include <algorithm>
#include <array>
#include <span>

#include "docguard/codec/bson_view.h"
#include "docguard/codec/op_compressed.h"
#include "docguard/codec/op_msg.h"
#include "docguard/codec/op_query.h"

namespace docguard::codec {
namespace {

// Commands whose fields (but the name) hold passwords or SCRAM messages.
constexpr std::array<std::string_view, 8> kSensitiveCommands = {
    "saslStart",  "saslContinue",    "authenticate", "createUser",
    "updateUser", "copydbsaslstart", "getnonce",     "copydbgetnonce"};
// Of these, the ones whose reply carries the server's side of the exchange.
constexpr std::array<std::string_view, 4> kSensitiveReplies = {"saslStart", "saslContinue",
                                                               "authenticate", "copydbsaslstart"};
// What stays of a sensitive request: routing and the mechanism's name, never a payload.
constexpr std::array<std::string_view, 9> kKeptInSensitiveRequest = {
    "$db",   "mechanism",  "conversationId", "autoAuthorize",  "options",
    "roles", "mechanisms", "lsid",           "$readPreference"};
// What stays of the reply to one: whether the step worked.
constexpr std::array<std::string_view, 7> kKeptInSensitiveReply = {
    "ok", "done", "conversationId", "code", "codeName", "errmsg", "operationTime"};

template <size_t N>
bool among(const std::array<std::string_view, N>& names, std::string_view name) {
  return std::find(names.begin(), names.end(), name) != names.end();
}

enum class Role { kRequest, kSensitiveRequest, kReply, kSensitiveReply };

struct Rewritten {
  ScopedBson doc;
  bool changed = false;
};

bool redact_always(std::string_view key) {
  // A password in any request (a command docguard does not know of may still carry one).
  return key == "speculativeAuthenticate" || key == "pwd";
}

// Copies `in` to `out`, dropping $clusterTime and replacing secrets with the marker.
// Recurses into a legacy {$query: {...}} wrapper. Returns false on a malformed document.
bool rewrite(const BsonView& in, Role role, Rewritten& out) {
  bson_t source = in.borrow();
  bson_iter_t it;
  if (in.empty() || !bson_iter_init(&it, &source)) return false;
  bool first = true;
  while (bson_iter_next(&it)) {
    const std::string_view key = key_of(it);
    const bool is_name = first;
    first = false;
    if (key == "$clusterTime") {
      out.changed = true;
      continue;
    }
    if ((key == "$query" || key == "query") && is_name && role == Role::kRequest) {
      // A legacy wrapper: the command is inside.
      bson_iter_t child;
      uint32_t len = 0;
      const uint8_t* data = nullptr;
      if (BSON_ITER_HOLDS_DOCUMENT(&it) && bson_iter_recurse(&it, &child)) {
        bson_iter_document(&it, &len, &data);
        Rewritten inner;
        const BsonView view{data, len};
        bson_t probe = view.borrow();
        bson_iter_t name_it;
        Role inner_role = Role::kRequest;
        if (bson_iter_init(&name_it, &probe) && bson_iter_next(&name_it) &&
            among(kSensitiveCommands, key_of(name_it))) {
          inner_role = Role::kSensitiveRequest;
        }
        if (!rewrite(view, inner_role, inner)) return false;
        if (inner.changed) {
          out.changed = true;
          bson_append_document(out.doc.get(), key.data(), static_cast<int>(key.size()),
                               inner.doc.get());
          continue;
        }
      }
    }
    bool keep = !redact_always(key);
    if (role == Role::kSensitiveRequest) {
      keep = keep && (is_name || among(kKeptInSensitiveRequest, key));
    } else if (role == Role::kSensitiveReply) {
      keep = keep && among(kKeptInSensitiveReply, key);
    }
    if (keep) {
      bson_append_iter(out.doc.get(), key.data(), static_cast<int>(key.size()), &it);
    } else {
      out.changed = true;
      bson_append_utf8(out.doc.get(), key.data(), static_cast<int>(key.size()),
                       kRedactedMarker.data(), static_cast<int>(kRedactedMarker.size()));
    }
  }
  return true;
}

Role request_role(const BsonView& body, bool* sensitive_reply) {
  bson_t doc = body.borrow();
  bson_iter_t it;
  if (!bson_iter_init(&it, &doc) || !bson_iter_next(&it)) return Role::kRequest;
  std::string_view name = key_of(it);
  if (name == "$query" || name == "query") {
    bson_iter_t child;
    if (BSON_ITER_HOLDS_DOCUMENT(&it) && bson_iter_recurse(&it, &child) && bson_iter_next(&child)) {
      name = key_of(child);
    }
  }
  *sensitive_reply = among(kSensitiveReplies, name);
  return among(kSensitiveCommands, name) ? Role::kSensitiveRequest : Role::kRequest;
}

RecordableMessage marker_for(const MsgHeader& header, std::string_view why) {
  return {unrecorded_marker(header.request_id, header.response_to, why), false, true};
}

RecordableMessage from_op_msg(Bytes m, bool is_request, bool to_sensitive, bool was_compressed) {
  const OpMsg msg = OpMsg::parse(m, /*verify_checksum=*/false);
  RecordableMessage out;
  Role role = to_sensitive ? Role::kSensitiveReply : Role::kReply;
  if (is_request) role = request_role(msg.body, &out.sensitive);
  Rewritten body;
  if (!rewrite(msg.body, role, body)) return marker_for(msg.header, "malformed body");
  const bool drop_sequences = role == Role::kSensitiveRequest && !msg.sequences.empty();
  if (!body.changed && !drop_sequences && !msg.checksum_present && !was_compressed) {
    out.bytes.assign(m.begin(), m.end());
    return out;
  }
  OpMsgBuilder builder(msg.header.request_id, msg.header.response_to, msg.flags);
  builder.body(body.changed ? body.doc.bytes() : msg.body.bytes());
  if (!drop_sequences) {
    for (const auto& sequence : msg.sequences) {
      builder.sequence(sequence.identifier, std::span<const BsonView>(sequence.documents.data(),
                                                                      sequence.documents.size()));
    }
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

RecordableMessage from_op_query(Bytes m) {
  const OpQuery query = OpQuery::parse(m);
  RecordableMessage out;
  const Role role = request_role(query.query, &out.sensitive);
  Rewritten doc;
  if (!rewrite(query.query, role, doc)) return marker_for(query.header, "malformed query");
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

RecordableMessage from_op_reply(Bytes m, bool to_sensitive) {
  const OpReply reply = OpReply::parse(m);
  RecordableMessage out;
  std::vector<uint8_t>& b = out.bytes;
  b.resize(kHeaderSize);
  append_le32(b, reply.response_flags);
  const auto cursor = static_cast<uint64_t>(reply.cursor_id);
  append_le32(b, static_cast<int32_t>(cursor & 0xffffffffu));
  append_le32(b, static_cast<int32_t>(cursor >> 32));
  append_le32(b, reply.starting_from);
  append_le32(b, static_cast<int32_t>(reply.documents.size()));
  for (const auto& document : reply.documents) {
    Rewritten doc;
    if (!rewrite(document, to_sensitive ? Role::kSensitiveReply : Role::kReply, doc)) {
      return marker_for(reply.header, "malformed reply document");
    }
    const Bytes d = doc.changed ? doc.doc.bytes() : document.bytes();
    b.insert(b.end(), d.begin(), d.end());
  }
  MsgHeader header = reply.header;
  header.message_length = static_cast<int32_t>(b.size());
  write_header(b.data(), header);
  return out;
}

RecordableMessage redact(Bytes message, bool is_request, bool to_sensitive,
                         uint32_t max_message_bytes) {
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
    switch (header.op_code) {
      case OpCode::kMsg:
        return from_op_msg(m, is_request, to_sensitive, compressed);
      case OpCode::kQuery:
        if (is_request) return from_op_query(m);
        break;
      case OpCode::kReply:
        if (!is_request) return from_op_reply(m, to_sensitive);
        break;
      default:
        break;
    }
    return marker_for(header, "opcode " + std::to_string(static_cast<int32_t>(header.op_code)) +
                                  " is not recorded");
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
  return OpMsgBuilder(request_id, response_to).body(body.bytes()).finish();
}

RecordableMessage redact_request(Bytes message, uint32_t max_message_bytes) {
  return redact(message, /*is_request=*/true, /*to_sensitive=*/false, max_message_bytes);
}

RecordableMessage redact_reply(Bytes message, bool to_sensitive, uint32_t max_message_bytes) {
  return redact(message, /*is_request=*/false, to_sensitive, max_message_bytes);
}

}  // namespace docguard::codec
