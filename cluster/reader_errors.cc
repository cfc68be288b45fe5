// How ClusterReader's failures are told apart: libmongoc's bson_error_t turned into an Error
// with a kind (from the server's code when the server answered), and the predicates callers use
// to decide between "unknown because not allowed", "unknown because not implemented" and a real
// failure.
#include "reader_errors.h"

#include <mongoc/mongoc.h>

#include <initializer_list>

#include "docguard/cluster/cluster_reader.h"
#include "docguard/codec/bson_elements.h"
#include "docguard/codec/server_errors.h"

namespace docguard::cluster {
namespace {

using codec::ServerError;

bool code_in(int32_t code, std::initializer_list<ServerError> codes) {
  for (ServerError c : codes) {
    if (codec::is(code, c)) return true;
  }
  return false;
}

void replace_all(std::string& text, const std::string& what, const std::string& with) {
  if (what.empty()) return;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at)) {
    text.replace(at, what.size(), with);
    at += with.size();
  }
}

}  // namespace

std::string Scrubber::operator()(std::string text) const {
  // The whole URI first (it contains the password), then any stray copy of a secret.
  replace_all(text, raw_uri, redacted_uri);
  for (const std::string& secret : secrets) replace_all(text, secret, "****");
  return text;
}

Error to_error(const bson_error_t& error, const std::string& what, const Scrubber& scrub) {
  std::string message = what + ": " + scrub(error.message);
  int32_t code = 0;
  switch (error.domain) {
    case MONGOC_ERROR_SERVER:  // error API 2: every error the server reported
    case MONGOC_ERROR_QUERY:
    case MONGOC_ERROR_WRITE_CONCERN:
      code = static_cast<int32_t>(error.code);
      break;
    case MONGOC_ERROR_CLIENT:
      // libmongoc reports the server's AuthenticationFailed as its own client error.
      if (error.code == MONGOC_ERROR_CLIENT_AUTHENTICATE) {
        code = codec::code_of(ServerError::kAuthenticationFailed);
        break;
      }
      return Error{ErrorKind::kInternal, ErrorSource::kDocguard, std::move(message)};
    case MONGOC_ERROR_SERVER_SELECTION:
      return Error{ErrorKind::kConnect, ErrorSource::kUpstream, std::move(message)};
    case MONGOC_ERROR_STREAM:
      return Error{error.code == MONGOC_ERROR_STREAM_NAME_RESOLUTION ? ErrorKind::kConnect
                                                                     : ErrorKind::kNetwork,
                   ErrorSource::kUpstream, std::move(message)};
    case MONGOC_ERROR_CURSOR:
    case MONGOC_ERROR_BSON:
    case MONGOC_ERROR_PROTOCOL:
      return Error{ErrorKind::kBadReply, ErrorSource::kUpstream, std::move(message)};
    default:
      return Error{ErrorKind::kInternal, ErrorSource::kDocguard, std::move(message)};
  }
  if (code > 0) message += " (code " + std::to_string(code) + ")";
  return server_error(std::move(message), code);
}

Error server_error(std::string message, int32_t code) {
  ErrorKind kind = ErrorKind::kRefused;
  if (code_in(code, {ServerError::kUnauthorized, ServerError::kAuthenticationFailed})) {
    kind = ErrorKind::kNotAuthorized;
  } else if (code_in(code, {ServerError::kCommandNotFound, ServerError::kCommandNotSupported,
                            ServerError::kNotImplemented, ServerError::kUnrecognizedPipelineStage,
                            ServerError::kUnknownStageField})) {
    kind = ErrorKind::kNotSupported;  // NotImplemented is FerretDB's answer to what it lacks
  } else if (code_in(code, {ServerError::kMaxTimeMSExpired})) {
    kind = ErrorKind::kTimeout;
  }
  Error error{kind, ErrorSource::kUpstream, std::move(message)};
  error.code = code;
  return error;
}

const char* read_method_name(ReadMethod method) {
  switch (method) {
    case ReadMethod::kSample:
      return "$sample";
    case ReadMethod::kFind:
      return "find";
    case ReadMethod::kAll:
      return "all";
  }
  return "all";
}

bool is_unauthorized(const Error& error) { return error.kind == ErrorKind::kNotAuthorized; }

bool is_not_supported(const Error& error) { return error.kind == ErrorKind::kNotSupported; }

Expected<void> check_write_errors(const bson_t* reply, const std::string& what) {
  codec::BsonElements it(reply);
  if (!it.find("writeErrors") || !it.holds_array()) return {};
  codec::BsonElements errors(it.container());
  if (!errors.next() || !errors.holds_document()) return {};
  int32_t code = 0;
  std::string message = "write error";
  for (codec::BsonElements first(errors.container()); first.next();) {
    if (first.key == "code") code = static_cast<int32_t>(first.as_int64());
    if (first.key == "errmsg" && first.holds_utf8()) message = first.utf8();
  }
  return server_error(what + ": " + message, code);
}

}  // namespace docguard::cluster
