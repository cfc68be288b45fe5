// What stays of a reply kept to its status (private to codec/): a reply to a sensitive request,
// or every reply when the policy keeps no reply documents.
#pragma once

#include <bson/bson.h>

#include "docguard/codec/bson_view.h"
#include "document_redactor.h"

namespace docguard::codec {

// Copies `in` into `out` keeping whether it worked, its counts, its error codes and its cursor's
// id and namespace; every other value (documents, and the server's texts, which quote stored
// values: errmsg, keyValue, errInfo, ...) is replaced by the marker. False when malformed.
bool rewrite_status_reply(const BsonView& in, DocumentRedactor& redactor, bson_t* out);

}  // namespace docguard::codec
