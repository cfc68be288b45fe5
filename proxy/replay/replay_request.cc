// A recorded request into the command the replay runs (replay_request.h says what changes and
// why).
#include "docguard/proxy/replay_request.h"

#include <array>
#include <random>

#include "docguard/codec/bson_elements.h"
#include "docguard/codec/command_view.h"
#include "docguard/codec/op_msg.h"
#include "docguard/codec/op_query.h"

namespace docguard::proxy {

namespace {

using codec::BsonElements;
using codec::BsonView;

bool name_is(std::string_view name, std::initializer_list<std::string_view> names) {
  for (std::string_view n : names) {
    if (n == name) return true;
  }
  return false;
}

// A fresh UUID (version 4) as the server's session ids are.
void append_random_uuid(bson_t* out) {
  static std::mutex mu;
  static std::mt19937_64 random{std::random_device{}()};
  std::array<uint8_t, 16> bytes{};
  {
    std::lock_guard lock(mu);
    for (size_t i = 0; i < bytes.size(); i += 8) {
      const uint64_t word = random();
      for (size_t j = 0; j < 8; ++j) bytes[i + j] = static_cast<uint8_t>(word >> (8 * j));
    }
  }
  bytes[6] = static_cast<uint8_t>((bytes[6] & 0x0F) | 0x40);
  bytes[8] = static_cast<uint8_t>((bytes[8] & 0x3F) | 0x80);
  bson_append_binary(out, "id", 2, BSON_SUBTYPE_UUID, bytes.data(), bytes.size());
}

int64_t cursor_id_of(const BsonElements& it) { return it.holds_number() ? it.as_int64() : 0; }

// Copies the body without what named the recorded cluster or connection, with the lsid and
// cursor ids rewritten; reads $db and $readPreference on the way.
void rewrite_body(const BsonView& body, SessionMap& sessions, const CursorMap& cursors,
                  ReplayRequest& out) {
  bool first = true;
  for (BsonElements it(body); it.next();) {
    const std::string_view key = it.key;
    const bool command_field = first;
    first = false;
    if (key == "$clusterTime") continue;
    if (key == "$db") {
      out.database = std::string(it.utf8());
      continue;
    }
    if (key == "$readPreference") {
      BsonElements mode(it.container());
      if (mode.find("mode")) out.read_preference = std::string(mode.utf8());
      continue;
    }
    if (key == "lsid" && it.holds_document()) {
      out.lsid = sessions.replay_lsid(it.container());
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

ReplayRequest from_op_msg(codec::Bytes message, SessionMap& sessions, const CursorMap& cursors) {
  ReplayRequest out;
  const codec::OpMsg msg = codec::OpMsg::parse(message, /*verify_checksum=*/false);
  out.more_to_come = msg.more_to_come();
  out.name = std::string(codec::first_key(msg.body));
  if (out.name == "$docguardUnrecorded" || is_handshake_command(out.name)) {
    out.action = RequestAction::kHandshake;
    return out;
  }
  rewrite_body(msg.body, sessions, cursors, out);
  // A document sequence is the body's array of the same name, sent apart to save a copy.
  for (const codec::DocumentSequence& sequence : msg.sequences) {
    const std::string identifier(sequence.identifier);
    codec::append_document_array(
        out.command.get(), identifier.c_str(),
        std::span<const BsonView>(sequence.documents.data(), sequence.documents.size()));
  }
  out.is_write = !is_read_command(out.name, msg.body);
  return out;
}

// Legacy OP_QUERY: only commands on "<db>.$cmd" can be replayed as commands.
ReplayRequest from_op_query(codec::Bytes message, SessionMap& sessions, const CursorMap& cursors) {
  ReplayRequest out;
  const codec::OpQuery query = codec::OpQuery::parse(message);
  const BsonView command = codec::unwrap_query(query.query);
  out.name = std::string(codec::first_key(command));
  if (is_handshake_command(out.name)) {
    out.action = RequestAction::kHandshake;
    return out;
  }
  const std::string_view ns = query.full_collection_name;
  const size_t dot = ns.find('.');
  if (dot == std::string_view::npos || ns.substr(dot + 1) != "$cmd" || out.name.empty()) {
    out.action = RequestAction::kUnsupported;
    return out;
  }
  rewrite_body(command, sessions, cursors, out);
  out.database = std::string(ns.substr(0, dot));
  out.is_write = !is_read_command(out.name, command);
  return out;
}

}  // namespace

BsonView SessionMap::replay_lsid(BsonView recorded) {
  std::string key(reinterpret_cast<const char*>(recorded.data), recorded.size);
  std::lock_guard lock(mu_);
  auto found = lsids_.find(key);
  if (found == lsids_.end()) {
    codec::OwnedBson fresh;
    append_random_uuid(fresh.get());
    found = lsids_.emplace(std::move(key), std::move(fresh)).first;
  }
  return found->second.view();  // the map's nodes do not move
}

size_t SessionMap::size() const {
  std::lock_guard lock(mu_);
  return lsids_.size();
}

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

ReplayRequest rewrite_request(codec::Bytes message, SessionMap& sessions,
                              const CursorMap& cursors) {
  try {
    if (message.size() >= codec::kHeaderSize) {
      const codec::MsgHeader header = codec::read_header(message.data());
      if (header.op_code == codec::OpCode::kMsg) return from_op_msg(message, sessions, cursors);
      if (header.op_code == codec::OpCode::kQuery) return from_op_query(message, sessions, cursors);
    }
  } catch (const codec::ProtocolError&) {  // NOLINT(bugprone-empty-catch): unsupported below
  }
  ReplayRequest out;
  out.action = RequestAction::kUnsupported;
  return out;
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

bool is_read_command(std::string_view name, const BsonView& body) {
  if (name == "aggregate") {
    // A pipeline ending in $out or $merge writes; a cheap look for the stage names suffices.
    const std::string_view bytes(reinterpret_cast<const char*>(body.data), body.size);
    return bytes.find("$out") == std::string_view::npos &&
           bytes.find("$merge") == std::string_view::npos;
  }
  return name_is(name, {"find",
                        "count",
                        "distinct",
                        "getMore",
                        "killCursors",
                        "listCollections",
                        "listIndexes",
                        "listDatabases",
                        "dbStats",
                        "collStats",
                        "dataSize",
                        "explain",
                        "ping",
                        "buildInfo",
                        "serverStatus",
                        "hostInfo",
                        "connectionStatus",
                        "getParameter",
                        "getLog",
                        "currentOp",
                        "dbHash",
                        "validate",
                        "whatsmyuri",
                        "getCmdLineOpts",
                        "listCommands",
                        "getFreeMonitoringStatus",
                        "replSetGetStatus",
                        "usersInfo",
                        "rolesInfo"});
}

}  // namespace docguard::proxy
