#include "docguard/recording/recording_namespace.h"

#include <algorithm>

#include "docguard/codec/bson_elements.h"
#include "docguard/codec/op_msg.h"

namespace docguard::recording {

std::string request_namespace(codec::Bytes message) {
  if (message.size() < codec::kHeaderSize ||
      codec::read_header(message.data()).op_code != codec::OpCode::kMsg) {
    return "";
  }
  try {
    const codec::BsonView body = codec::op_msg_body(message);
    if (body.empty()) return "";
    std::string collection;
    std::string db;
    bool first = true;
    for (codec::BsonElements it(body); it.next();) {
      if (first) collection = it.utf8();
      first = false;
      if (it.key == "$db") db = it.utf8();
    }
    if (db.empty()) return "";
    return collection.empty() ? db : db + "." + collection;
  } catch (const codec::ProtocolError&) {
    return "";
  }
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
