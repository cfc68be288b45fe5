#include "docguard/conversation/reply_signals.h"

#include <string_view>

#include "docguard/codec/bson_view.h"
#include "docguard/codec/op_msg.h"
#include "docguard/codec/op_query.h"

namespace docguard::conversation {
namespace {

int32_t code_of(const bson_iter_t& it) {
  return BSON_ITER_HOLDS_NUMBER(&it) ? static_cast<int32_t>(bson_iter_as_int64(&it)) : 0;
}

// The first state-change code among the `code` fields of the documents in an array (the
// write errors).
int32_t state_change_code_in_entries(const bson_iter_t& array) {
  bson_iter_t child;
  if (!BSON_ITER_HOLDS_ARRAY(&array) || !bson_iter_recurse(&array, &child)) return 0;
  while (bson_iter_next(&child)) {
    bson_iter_t entry;
    if (BSON_ITER_HOLDS_DOCUMENT(&child) && bson_iter_recurse(&child, &entry) &&
        bson_iter_find(&entry, "code") && codec::is_state_change(code_of(entry))) {
      return code_of(entry);
    }
  }
  return 0;
}

// Both signals in one pass over the top level: this runs on every reply, and most replies hold
// neither, so one walk of their few top-level keys is all they cost. Each field counts at its
// first occurrence, and the top-level `code` wins over `writeConcernError.code`, which wins
// over `writeErrors[].code`, as drivers check them. Only libbson's bounds-checked iterators
// read the document, so it is not validated as a whole.
ReplySignals signals_in(const codec::BsonView& doc) {
  ReplySignals out;
  if (doc.empty()) return out;
  bson_t b = doc.borrow();
  bson_iter_t it;
  if (!bson_iter_init(&it, &b)) return out;
  int32_t top = 0, concern = 0, write_errors = 0;
  bool seen_code = false, seen_concern = false, seen_errors = false, seen_hello = false;
  while (bson_iter_next(&it)) {
    const std::string_view key = codec::key_of(it);
    if (key == "code") {
      if (!seen_code && codec::is_state_change(code_of(it))) top = code_of(it);
      seen_code = true;
    } else if (key == "writeConcernError") {
      bson_iter_t child;
      if (!seen_concern && BSON_ITER_HOLDS_DOCUMENT(&it) && bson_iter_recurse(&it, &child) &&
          bson_iter_find(&child, "code") && codec::is_state_change(code_of(child))) {
        concern = code_of(child);
      }
      seen_concern = true;
    } else if (key == "writeErrors") {
      if (!seen_errors) write_errors = state_change_code_in_entries(it);
      seen_errors = true;
    } else if (key == "isWritablePrimary" || key == "ismaster") {
      if (!seen_hello) out.hello_not_writable = !bson_iter_as_bool(&it);
      seen_hello = true;
    }
  }
  const int32_t code = top != 0 ? top : concern != 0 ? concern : write_errors;
  if (code != 0) out.state_change = static_cast<codec::ServerError>(code);
  return out;
}

}  // namespace

ReplySignals read_reply_signals(codec::Bytes plain) {
  try {
    if (plain.size() < codec::kHeaderSize) return {};
    switch (codec::read_header(plain.data()).op_code) {
      case codec::OpCode::kMsg:
        return signals_in(codec::op_msg_body(plain));
      case codec::OpCode::kReply: {
        const auto legacy = codec::OpReply::parse(plain);
        if (!legacy.documents.empty()) return signals_in(legacy.documents.front());
        return {};
      }
      default:
        return {};
    }
  } catch (const std::exception&) {
    // Not readable: the conversation decides what a malformed reply means.
  }
  return {};
}

}  // namespace docguard::conversation
