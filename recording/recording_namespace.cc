#include "docguard/recording/recording_namespace.h"

#include <algorithm>

#include "docguard/codec/request_identity.h"

namespace docguard::recording {

std::string request_namespace(codec::Bytes message) {
  // The server's reading of the request: a `$db` it would refuse names no namespace.
  const codec::RequestIdentity id = codec::identify_request(message);
  if (id.form != codec::RequestForm::kMsg || !id.accepted()) return "";
  if (id.collection.empty()) return std::string(id.database);
  return std::string(id.database) + "." + std::string(id.collection);
}

bool namespace_admitted(const std::vector<std::string>& patterns, std::string_view ns) {
  if (ns.empty()) return false;
  const std::string_view db = ns.substr(0, ns.find('.'));
  return std::any_of(patterns.begin(), patterns.end(), [&](const std::string& p) {
    if (p == ns) return true;
    if (p == db) return true;
    return p.size() == db.size() + 2 && p.ends_with(".*") && p.starts_with(db);
  });
}

}  // namespace docguard::recording
