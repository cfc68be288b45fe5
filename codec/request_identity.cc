// What a request is, by the server's rule (request_identity.h).
#include "docguard/codec/request_identity.h"

#include <algorithm>
#include <array>

#include "docguard/codec/bson_elements.h"
#include "docguard/codec/op_msg.h"
#include "docguard/codec/op_query.h"

namespace docguard::codec {

namespace {

RequestIdentity refused(RequestIdentity id, int32_t code, std::string_view why) {
  id.refusal_code = code;
  id.refusal = why;
  return id;
}

// The command document's name and its `$db` members: the first `$db` is the database; a second
// one that differs, or one that is not a string, makes the database unknowable.
struct Members {
  std::string_view first;
  std::string_view first_text;  // the first member's value, when a string
  std::string_view db;
  bool has_db = false;
  bool db_ambiguous = false;
  bool well_formed = true;
};

Members members_of(const BsonView& doc) {
  Members m;
  if (!well_framed(doc)) {
    m.well_formed = false;
    return m;
  }
  bool first = true;
  BsonElements it(doc);
  while (it.next()) {
    if (first) {
      m.first = it.key;
      if (it.holds_utf8()) m.first_text = it.utf8();
    }
    first = false;
    if (it.key != "$db") continue;
    if (!it.holds_utf8() || (m.has_db && it.utf8() != m.db)) m.db_ambiguous = true;
    if (!m.has_db && it.holds_utf8()) m.db = it.utf8();
    m.has_db = true;
  }
  m.well_formed = !it.malformed();
  return m;
}

RequestIdentity from_legacy(const OpQuery& query) {
  RequestIdentity id;
  const std::string_view ns = query.full_collection_name;
  const size_t dot = ns.find('.');
  id.database = ns.substr(0, dot);
  const bool command = dot != std::string_view::npos && ns.substr(dot + 1) == "$cmd";
  id.form = command ? RequestForm::kLegacyCommand : RequestForm::kLegacyQuery;
  if (!command) return refused(id, form_codes::kOpQueryRemoved, "OP_QUERY is no longer supported");
  id.command_document = legacy_command_document(query.query);
  const Members m = members_of(id.command_document);
  if (!m.well_formed) {
    id.form = RequestForm::kMalformed;
    return id;
  }
  id.command = m.first;
  id.collection = m.first_text;
  if (!valid_database_name(id.database)) {
    return refused(id, form_codes::kInvalidNamespace, "invalid database name");
  }
  if (m.has_db) return refused(id, form_codes::kDbInOpQuery, "$db is not allowed in OP_QUERY");
  if (!accepted_as_legacy_command(id.command)) {
    return refused(id, form_codes::kUnsupportedOpQuery, "unsupported OP_QUERY command");
  }
  return id;
}

}  // namespace

bool valid_database_name(std::string_view db) {
  if (db.empty() || db.size() >= 64) return false;
  return std::none_of(db.begin(), db.end(), [](char c) {
    return c == '\0' || c == '/' || c == '\\' || c == '.' || c == ' ' || c == '"';
  });
}

bool accepted_as_legacy_command(std::string_view name) {
  constexpr std::array<std::string_view, 9> kAccepted = {"hello",     "isMaster",     "ismaster",
                                                         "_isSelf",   "authenticate", "buildinfo",
                                                         "buildInfo", "saslContinue", "saslStart"};
  return std::find(kAccepted.begin(), kAccepted.end(), name) != kAccepted.end();
}

BsonView legacy_command_document(const BsonView& query) {
  if (!well_framed(query)) return query;
  BsonElements it(query);
  if (!it.next()) return query;
  if ((it.key == "$query" || it.key == "query") && it.holds_document()) return it.container();
  return query;
}

bool is_form_refusal_code(int32_t code) {
  // BadValue, FailedToParse, TypeMismatch, InvalidOptions: what the server's command parsers
  // answer for a field they cannot take; 40413-40415: a duplicate, missing or unknown field.
  constexpr std::array<int32_t, 13> kCodes = {2,
                                              9,
                                              14,
                                              form_codes::kCommandNotFound,
                                              72,
                                              form_codes::kInvalidNamespace,
                                              form_codes::kUnsupportedOpQuery,
                                              40413,
                                              40414,
                                              40415,
                                              form_codes::kMissingDb,
                                              form_codes::kDbInOpQuery,
                                              form_codes::kOpQueryRemoved};
  return std::find(kCodes.begin(), kCodes.end(), code) != kCodes.end();
}

bool may_follow_work(std::string_view command, int32_t code) {
  // Read in the server's sources: expression evaluation raises TypeMismatch while documents flow
  // (`$add` on a string, in expression.cpp), and BadValue likewise; FailedToParse and
  // InvalidOptions are raised by too many stages and expressions to rule out that one runs per
  // document. The other form codes are answered before the pipeline runs: Unauthorized (13) and
  // an invalid `$out` target (InvalidNamespace, 73) while the stages' privileges are computed
  // (document_source_out.cpp's liteParse), CommandNotFound (59), the OP_QUERY codes (352,
  // 5739101), the `$db` codes (40571, 40621) and the IDL's duplicate, missing or unknown fields
  // (40413-40415) while the command is parsed. Other commands report a failure after work in
  // `writeErrors` with ok: 1, or change one document atomically (findAndModify).
  constexpr std::array<int32_t, 4> kRaisedWhileRunning = {2, 9, 14, 72};
  const bool aggregation =
      command == "aggregate" || command == "mapReduce" || command == "mapreduce";
  return aggregation && std::find(kRaisedWhileRunning.begin(), kRaisedWhileRunning.end(), code) !=
                            kRaisedWhileRunning.end();
}

RequestIdentity identify_op_msg(const OpMsg& msg) {
  RequestIdentity id;
  id.form = RequestForm::kMsg;
  id.command_document = msg.body;
  const Members m = members_of(msg.body);
  if (!m.well_formed) {
    id.form = RequestForm::kMalformed;
    return id;
  }
  id.command = m.first;
  id.collection = m.first_text;
  id.database = m.db;
  if (id.command.empty()) return refused(id, form_codes::kCommandNotFound, "no command");
  if (!m.has_db) return refused(id, form_codes::kMissingDb, "OP_MSG requests require a $db");
  if (m.db_ambiguous || !valid_database_name(id.database)) {
    return refused(id, form_codes::kInvalidNamespace, "invalid database name");
  }
  return id;
}

RequestIdentity identify_request(Bytes message) {
  RequestIdentity id;
  if (message.size() < kHeaderSize) return id;
  try {
    const MsgHeader header = read_header(message.data());
    if (header.op_code == OpCode::kMsg) {
      return identify_op_msg(OpMsg::parse(message, /*verify_checksum=*/false));
    }
    if (header.op_code == OpCode::kQuery) return from_legacy(OpQuery::parse(message));
    id.form = RequestForm::kOther;
  } catch (const ProtocolError&) {
    id.form = RequestForm::kMalformed;
  }
  return id;
}

}  // namespace docguard::codec
