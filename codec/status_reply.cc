// A reply kept to its status (status_reply.h). A list of what stays rather than of what goes:
// the server's texts quote stored values in more places than any list of them would hold
// ("Cannot create field 'x' in element {...}", "E11000 duplicate key error ... dup key: {...}",
// a validation failure's details, a write error's keyValue).
#include "status_reply.h"

#include <algorithm>
#include <array>
#include <span>
#include <string_view>

#include "docguard/codec/bson_elements.h"
#include "document_redactor.h"

namespace docguard::codec {
namespace {

// Whether it worked, how much it did, and why not by code: never errmsg, keyValue or errInfo.
constexpr std::array<std::string_view, 17> kKeptInStatusReply = {"ok",
                                                                 "done",
                                                                 "conversationId",
                                                                 "code",
                                                                 "codeName",
                                                                 "operationTime",
                                                                 "n",
                                                                 "nModified",
                                                                 "nMatched",
                                                                 "nRemoved",
                                                                 "nInserted",
                                                                 "nUpserted",
                                                                 "nDeleted",
                                                                 "errorLabels",
                                                                 "writeErrors",
                                                                 "writeConcernError",
                                                                 "cursor"};
constexpr std::array<std::string_view, 2> kKeptInStatusCursor = {"id", "ns"};
// A write error: which statement failed and how, not the text that quotes its document.
constexpr std::array<std::string_view, 3> kKeptInWriteError = {"index", "code", "codeName"};
constexpr std::array<std::string_view, 3> kKeptInWriteConcernError = {"code", "codeName",
                                                                      "errorLabels"};

// A document member kept to `keep`, each of its values walked as any document's.
bool copy_kept(const bson_iter_t& it, std::span<const std::string_view> keep,
               DocumentRedactor& redactor, bson_t* out) {
  const std::string_view key = key_of(it);
  bson_t child;
  bson_append_document_begin(out, key.data(), static_cast<int>(key.size()), &child);
  const bool ok = redactor.copy(view_of(it), &child, key, keep);
  bson_append_document_end(out, &child);
  return ok;
}

// writeErrors: each element kept to its index and code.
bool copy_write_errors(const bson_iter_t& it, DocumentRedactor& redactor, bson_t* out) {
  const std::string_view key = key_of(it);
  bson_t source;
  const BsonView array = view_of(it);
  bson_iter_t element;
  if (!bson_init_static(&source, array.data, array.size) || !bson_iter_init(&element, &source)) {
    return false;
  }
  bson_t child;
  bson_append_array_begin(out, key.data(), static_cast<int>(key.size()), &child);
  bool ok = true;
  while (ok && bson_iter_next(&element)) {
    if (BSON_ITER_HOLDS_DOCUMENT(&element)) {
      ok = copy_kept(element, kKeptInWriteError, redactor, &child);
    } else {
      redactor.replace(&child, key_of(element));
    }
  }
  bson_append_array_end(out, &child);
  return ok;
}

}  // namespace

bool rewrite_status_reply(const BsonView& in, DocumentRedactor& redactor, bson_t* out) {
  bson_t source = in.borrow();
  bson_iter_t it;
  if (in.empty() || !bson_iter_init(&it, &source)) return false;
  while (bson_iter_next(&it)) {
    const std::string_view key = key_of(it);
    const bool document = BSON_ITER_HOLDS_DOCUMENT(&it);
    bool ok = true;
    if (key == "cursor" && document) {
      ok = copy_kept(it, kKeptInStatusCursor, redactor, out);
    } else if (key == "writeConcernError" && document) {
      ok = copy_kept(it, kKeptInWriteConcernError, redactor, out);
    } else if (key == "writeErrors" && BSON_ITER_HOLDS_ARRAY(&it)) {
      ok = copy_write_errors(it, redactor, out);
    } else if (!among(kKeptInStatusReply, key) || document || key == "writeErrors") {
      redactor.replace(out, key);  // a value that may quote a document, or the document itself
    } else {
      ok = redactor.copy_element(it, out);
    }
    if (!ok) return false;
  }
  return true;
}

}  // namespace docguard::codec
