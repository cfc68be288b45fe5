// The namespace a request names, for the recording's namespace filter and its side file.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "docguard/codec/message.h"

namespace docguard::recording {

// "db.collection" for an OP_MSG command on a collection, "db" for one on a database, "" when
// the message does not say (other opcodes, compressed messages, malformed ones). Never throws.
std::string request_namespace(codec::Bytes message);

// Whether `ns` matches one of `patterns`: "db.collection" exactly, or "db" / "db.*" for every
// namespace of that database.
bool namespace_admitted(const std::vector<std::string>& patterns, std::string_view ns);

}  // namespace docguard::recording
