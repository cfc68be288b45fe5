// ClusterReader's private helpers for errors: libmongoc's bson_error_t to Error, and the scrub
// that keeps credentials out of every message.
#pragma once

#include <bson/bson.h>

#include <optional>
#include <string>
#include <vector>

#include "docguard/cluster/expected.h"

namespace docguard::cluster {

// Replaces the URI as given by its redacted form, and any secret (a password) by "****".
struct Scrubber {
  std::string raw_uri;
  std::string redacted_uri;
  std::vector<std::string> secrets;
  std::string operator()(std::string text) const;
};

// "WHAT: libmongoc's message (code N)", with Error::code the server's code when the server
// answered (and the kind it means), or a kind of the reader's failures otherwise.
Error to_error(const bson_error_t& error, const std::string& what, const Scrubber& scrub);
// "WHAT: MESSAGE", a reply docguard could not make sense of.
inline Error bad_reply(const std::string& what, const std::string& message) {
  return Error{ErrorKind::kBadReply, ErrorSource::kUpstream, what + ": " + message};
}
// An ok reply's first writeErrors entry as the failure "WHAT: errmsg" with its code (libmongoc
// counts a write error inside an ok reply as success); success when there is none.
Expected<void> check_write_errors(const bson_t* reply, const std::string& what);

}  // namespace docguard::cluster
