// A recorded request into the command the replay runs (replay_request.h says what changes and
// why).
#include "docguard/tools/replay_request.h"

#include <algorithm>
#include <vector>

#include "docguard/codec/bson_elements.h"
#include "docguard/codec/command_view.h"
#include "docguard/codec/op_msg.h"
#include "docguard/codec/op_query.h"
#include "docguard/codec/recording_redaction.h"
#include "docguard/codec/request_identity.h"

namespace docguard::tools {

namespace {

using codec::BsonElements;
using codec::BsonView;

bool name_is(std::string_view name, std::initializer_list<std::string_view> names) {
  for (std::string_view n : names) {
    if (n == name) return true;
  }
  return false;
}

int64_t cursor_id_of(const BsonElements& it) { return it.holds_number() ? it.as_int64() : 0; }

// Copies the body without what named the recorded cluster or connection, with the lsid and
// cursor ids rewritten; reads $db and $readPreference on the way.
// A write's statements ("documents", "updates", "deletes").
bool is_statement_array(std::string_view key) {
  return key == "documents" || key == "updates" || key == "deletes";
}

// Whether statement `index` was forwarded: an ordered batch stops at the first refused
// statement, an unordered one skips only the refused ones (docguard's batch semantics).
bool forwarded(std::span<const int32_t> refused, bool ordered, int32_t index) {
  if (refused.empty()) return true;
  if (ordered) return index < *std::min_element(refused.begin(), refused.end());
  return std::find(refused.begin(), refused.end(), index) == refused.end();
}

// Appends the forwarded statements of `statements` as the array `key`; how many.
size_t append_statements(bson_t* out, std::string_view key, std::span<const BsonView> statements,
                         std::span<const int32_t> refused, bool ordered) {
  bson_t array;
  bson_append_array_begin(out, key.data(), static_cast<int>(key.size()), &array);
  size_t kept = 0;
  for (size_t i = 0; i < statements.size(); ++i) {
    if (!forwarded(refused, ordered, static_cast<int32_t>(i))) continue;
    const std::string index_key = std::to_string(kept++);
    bson_t doc = statements[i].borrow();
    bson_append_document(&array, index_key.c_str(), static_cast<int>(index_key.size()), &doc);
  }
  bson_append_array_end(out, &array);
  return kept;
}

void rewrite_body(const BsonView& body, const CursorMap& cursors, std::span<const int32_t> refused,
                  bool ordered, ReplayRequest& out, size_t& statements) {
  bool first = true;
  for (BsonElements it(body); it.next();) {
    const std::string_view key = it.key;
    const bool command_field = first;
    first = false;
    if (key == "$clusterTime") continue;
    if (key == "$db") continue;  // the database is the request's identity's, passed apart
    if (key == "$readPreference") {
      BsonElements mode(it.container());
      if (mode.find("mode")) out.read_preference = std::string(mode.utf8());
      continue;
    }
    if (key == "lsid" && it.holds_document()) {
      out.lsid = it.container();
      continue;
    }
    if (!refused.empty() && is_statement_array(key) && it.holds_array()) {
      std::vector<BsonView> all;
      for (BsonElements s(it.container()); s.next();) {
        if (s.holds_document()) all.push_back(s.container());
      }
      statements += append_statements(out.command.get(), key, all, refused, ordered);
      continue;
    }
    if (command_field && out.name == "getMore") {
      out.recorded_cursor = cursor_id_of(it);
      const CursorMap::Live live = cursors.find(out.recorded_cursor);
      out.server_id = live.server_id;
      bson_append_int64(out.command.get(), "getMore", 7,
                        live.id != 0 ? live.id : out.recorded_cursor);
      continue;
    }
    if (out.name == "killCursors" && key == "cursors" && it.holds_array()) {
      bson_t ids;
      bson_append_array_begin(out.command.get(), "cursors", 7, &ids);
      uint32_t index = 0;
      for (BsonElements id(it.container()); id.next();) {
        const int64_t recorded = cursor_id_of(id);
        if (out.recorded_cursor == 0) out.recorded_cursor = recorded;
        const CursorMap::Live live = cursors.find(recorded);
        if (out.server_id == 0) out.server_id = live.server_id;
        const std::string index_key = std::to_string(index++);
        bson_append_int64(&ids, index_key.c_str(), static_cast<int>(index_key.size()),
                          live.id != 0 ? live.id : recorded);
      }
      bson_append_array_end(out.command.get(), &ids);
      continue;
    }
    it.append_to(out.command.get(), key);
  }
}

bool ordered_batch(const BsonView& body) {
  BsonElements it(body);
  return !it.find("ordered") || it.as_bool();
}

ReplayRequest from_op_msg(codec::Bytes message, const CursorMap& cursors,
                          std::span<const int32_t> refused) {
  ReplayRequest out;
  const codec::OpMsg msg = codec::OpMsg::parse(message, /*verify_checksum=*/false);
  // The name and the database as the server reads them; a request it would refuse for its form
  // is never sent (a missing `$db`, or one holding a NUL that libmongoc would cut short).
  const codec::RequestIdentity id = codec::identify_op_msg(msg);
  out.more_to_come = msg.more_to_come();
  out.name = std::string(id.command);
  if (out.name == codec::kUnrecordedKey || is_handshake_command(out.name)) {
    out.action = RequestAction::kHandshake;
    return out;
  }
  if (!id.accepted()) {
    out.action = RequestAction::kUnsupported;
    return out;
  }
  const bool ordered = ordered_batch(msg.body);
  size_t statements = 0;
  rewrite_body(msg.body, cursors, refused, ordered, out, statements);
  out.database = std::string(id.database);
  // A document sequence is the body's array of the same name, sent apart to save a copy.
  for (const codec::DocumentSequence& sequence : msg.sequences) {
    const std::span<const BsonView> documents(sequence.documents.data(), sequence.documents.size());
    statements +=
        append_statements(out.command.get(), sequence.identifier, documents, refused, ordered);
  }
  if (!refused.empty() && statements == 0) out.action = RequestAction::kEmpty;
  // The last word on users, roles and keys is said on exactly what goes out: this command on
  // this database.
  if (codec::command_touches_secret_namespace(out.command.view(), out.database)) {
    out.action = RequestAction::kSecretNamespace;
  }
  return out;
}

// Legacy OP_QUERY: the server refuses every command but the handshake this way (and a legacy
// find), so none is sent; the handshake is libmongoc's own.
ReplayRequest from_op_query(codec::Bytes message) {
  ReplayRequest out;
  const codec::RequestIdentity id = codec::identify_request(message);
  out.name = std::string(id.command);
  out.action = id.form == codec::RequestForm::kLegacyCommand && is_handshake_command(out.name)
                   ? RequestAction::kHandshake
                   : RequestAction::kUnsupported;
  return out;
}

}  // namespace

void CursorMap::put(int64_t recorded, Live live) {
  std::lock_guard lock(mu_);
  cursors_[recorded] = live;
}

CursorMap::Live CursorMap::find(int64_t recorded) const {
  std::lock_guard lock(mu_);
  const auto found = cursors_.find(recorded);
  return found == cursors_.end() ? Live{} : found->second;
}

void CursorMap::erase(int64_t recorded) {
  std::lock_guard lock(mu_);
  cursors_.erase(recorded);
}

ReplayRequest rewrite_request(codec::Bytes message, const CursorMap& cursors,
                              std::span<const int32_t> refused) {
  try {
    if (message.size() >= codec::kHeaderSize) {
      const codec::MsgHeader header = codec::read_header(message.data());
      if (header.op_code == codec::OpCode::kMsg) return from_op_msg(message, cursors, refused);
      if (header.op_code == codec::OpCode::kQuery) return from_op_query(message);
    }
  } catch (const codec::ProtocolError&) {  // NOLINT(bugprone-empty-catch): unsupported below
  }
  ReplayRequest out;
  out.action = RequestAction::kUnsupported;
  return out;
}

const char* skip_reason_of(RequestAction action) {
  switch (action) {
    case RequestAction::kEmpty:
      return "answered_by_docguard";
    case RequestAction::kSecretNamespace:
      return "secret_namespace";
    case RequestAction::kHandshake:
      return "handshake";
    case RequestAction::kSend:
    case RequestAction::kUnsupported:
      break;
  }
  return "invalid_request";
}

BsonView reply_document(codec::Bytes message) {
  try {
    if (message.size() < codec::kHeaderSize) return {};
    const codec::MsgHeader header = codec::read_header(message.data());
    if (header.op_code == codec::OpCode::kMsg) return codec::op_msg_body(message);
    if (header.op_code == codec::OpCode::kReply) {
      const codec::OpReply reply = codec::OpReply::parse(message);
      if (!reply.documents.empty()) return reply.documents.front();
    }
  } catch (const codec::ProtocolError&) {  // NOLINT(bugprone-empty-catch): no document
  }
  return {};
}

bool is_handshake_command(std::string_view name) {
  return name_is(name, {"hello", "isMaster", "ismaster", "saslStart", "saslContinue",
                        "authenticate", "getnonce", "logout", "endSessions"});
}

}  // namespace docguard::tools
