// What a request is, by the server's own rule, decided in one place for every reader of requests
// outside the rules' command view: the recorder (its namespace filter and side file), whatif, and
// the replay's classifier and rewriter. Each of them once had its own idea of a request's name
// and database, and an attacker could make them disagree with the server and with each other
// (a command hidden in a second `$query` member, a `$db` holding a NUL).
//
// The server's rule:
//   - OP_MSG: the command's name is the body's first member; the database is `$db`, a string,
//     required, and a valid database name (not empty, under 64 bytes, none of NUL / \ . space ").
//   - OP_QUERY on "<db>.$cmd": the command document is the query, or the document under its
//     first member when that member is `$query` or `query` (a wrapper anywhere else is not one);
//     `$db` is not allowed in it; since MongoDB 5.1 only the handshake (hello, isMaster) and a few
//     authentication commands are accepted this way, every other command is refused (352).
//   - OP_QUERY on a collection (a legacy find) is refused since 5.1 (5739101).
#pragma once

#include <cstdint>
#include <string_view>

#include "docguard/codec/bson_view.h"
#include "docguard/codec/message.h"

namespace docguard::codec {

struct OpMsg;

enum class RequestForm {
  kMsg,            // OP_MSG
  kLegacyCommand,  // OP_QUERY on "<db>.$cmd"
  kLegacyQuery,    // OP_QUERY on a collection
  kOther,          // another opcode: compressed, legacy writes and getMores, replies
  kMalformed,      // too short or not parseable by the codec
};

// The server's codes for a request it refuses by its form alone.
namespace form_codes {
inline constexpr int32_t kCommandNotFound = 59;      // an empty command document
inline constexpr int32_t kInvalidNamespace = 73;     // `$db` not a valid database name
inline constexpr int32_t kUnsupportedOpQuery = 352;  // a legacy command off the handshake
inline constexpr int32_t kMissingDb = 40571;         // an OP_MSG without `$db`
inline constexpr int32_t kDbInOpQuery = 40621;       // `$db` inside an OP_QUERY command
inline constexpr int32_t kOpQueryRemoved = 5739101;  // a legacy find
}  // namespace form_codes

struct RequestIdentity {
  RequestForm form = RequestForm::kMalformed;
  std::string_view command;   // the command's name (the command document's first key)
  std::string_view database;  // exactly the bytes the server takes as the database
  // The command's value when it is a string: the collection of a command on one ("" otherwise).
  std::string_view collection;
  BsonView command_document;  // OP_MSG: the body; OP_QUERY: the command, unwrapped
  // Non-zero when the server refuses the request for its form; `refusal` says why in words.
  int32_t refusal_code = 0;
  std::string_view refusal;

  bool accepted() const { return refusal_code == 0 && form != RequestForm::kMalformed; }
  bool legacy() const {
    return form == RequestForm::kLegacyCommand || form == RequestForm::kLegacyQuery;
  }
};

// A whole request message (header included). Views point into `message`. Never throws.
RequestIdentity identify_request(Bytes message);
// An OP_MSG already parsed.
RequestIdentity identify_op_msg(const OpMsg& msg);

// The server's rule for a database name (not empty, under 64 bytes, no NUL, '/', '\', '.', ' '
// or '"').
bool valid_database_name(std::string_view db);

// The commands the server still accepts over OP_QUERY: the handshake and, for old drivers,
// authentication and buildInfo.
bool accepted_as_legacy_command(std::string_view name);

// The command document of an OP_QUERY's query: the document under its first member when that
// member is `$query` or `query`, the query itself otherwise.
BsonView legacy_command_document(const BsonView& query);

// Whether `code` is one the server gives a request for its form alone (above), or for a command
// document it cannot parse (unknown or misspelt fields, wrong types): such a request did nothing
// on the server, and a replay must not make it do something elsewhere.
bool is_form_refusal_code(int32_t code);

// Whether a refusal with `code` of command `command` may come after the server did work: an
// aggregation (aggregate, mapReduce) raises BadValue, FailedToParse, TypeMismatch and
// InvalidOptions from its expressions while it runs, after a `$merge` or `$out` wrote earlier
// batches, so for it these four codes do not say the request did nothing.
bool may_follow_work(std::string_view command, int32_t code);

}  // namespace docguard::codec
