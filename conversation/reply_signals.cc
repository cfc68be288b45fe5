#include "docguard/conversation/reply_signals.h"

#include <cstring>
#include <string_view>

#include "docguard/codec/bson_elements.h"
#include "docguard/codec/bson_view.h"
#include "docguard/codec/op_msg.h"
#include "docguard/codec/op_query.h"

namespace docguard::conversation {
namespace {

using codec::BsonElements;

int32_t code_of(const BsonElements& it) {
  return it.holds_number() ? static_cast<int32_t>(it.as_int64()) : 0;
}

// The `code` field of a document value, 0 when there is none (the first one).
int32_t code_in(const BsonElements& doc) {
  BsonElements child(doc.value, doc.value_size);
  return child.find("code") ? code_of(child) : 0;
}

// The first state-change code among the `code` fields of the documents in an array (the
// write errors).
int32_t state_change_code_in_entries(const BsonElements& array) {
  if (!array.holds_array()) return 0;
  for (BsonElements child(array.value, array.value_size); child.next();) {
    if (!child.holds_document()) continue;
    BsonElements entry(child.value, child.value_size);
    if (entry.find("code") && codec::is_state_change(code_of(entry))) return code_of(entry);
  }
  return 0;
}

// The length of cursor.firstBatch (0 without one). A batch is documents: each is stepped over by
// its length prefix alone (its key, "0", "1", ..., is a few bytes), the general walk only for
// anything else.
uint64_t first_batch_length(const BsonElements& cursor) {
  // The servers write firstBatch first: its bytes are compared in place, the walk only when
  // it is elsewhere.
  static constexpr char kFirst[] =
      "\x04"
      "firstBatch";  // an array named firstBatch, NUL included
  const uint8_t* batch = nullptr;
  uint32_t batch_size = 0;
  constexpr size_t kHead = 4 + sizeof kFirst;
  if (cursor.value_size >= kHead + 5 && std::memcmp(cursor.value + 4, kFirst, sizeof kFirst) == 0) {
    batch = cursor.value + kHead;
    batch_size = codec::le32(batch);
    if (batch_size < 5 || batch_size > cursor.value_size - kHead - 1) return 0;
  } else {
    BsonElements child(cursor.value, cursor.value_size);
    if (!child.find("firstBatch") || !child.holds_array() || child.value_size < 5) return 0;
    batch = child.value;
    batch_size = child.value_size;
  }
  const uint8_t* p = batch + 4;
  const uint8_t* const end = batch + batch_size - 1;
  if (*end != 0) return 0;  // not a BSON array; with its NUL, a key's scan stops there
  uint64_t n = 0;
  while (p < end && *p == BSON_TYPE_DOCUMENT) {
    const uint8_t* nul = p + 1;
    while (*nul != 0) ++nul;
    if (end - nul < 5) return n;
    const uint32_t size = codec::le32(nul + 1);
    if (size < 5 || size > static_cast<size_t>(end - nul - 1)) return n;
    p = nul + 1 + size;
    ++n;
  }
  if (p >= end) return n;
  n = 0;  // not only documents: the general walk, from the start
  for (BsonElements e(batch, batch_size); e.next();) ++n;
  return n;
}

// Both signals in one pass over the top level: this runs on every reply, and most replies hold
// neither, so one walk of their few top-level keys is all they cost. Each field counts at its
// first occurrence, and the top-level `code` wins over `writeConcernError.code`, which wins
// over `writeErrors[].code`, as drivers check them. The walk checks every bound and stops at a
// malformed element, as libbson's iterator does, so the reply is not validated as a whole.
// With `kWorkload` (a reply the workload ledger waits for), also what the ledger records: the
// documents named and whether the reply failed; without, those keys cost nothing.
// Flattened: the walk's step inlined as in the plain reading (left to itself, the compiler
// calls it out of line once the ledger's keys make the loop larger, ~50 instructions a key).
template <bool kWorkload>
[[gnu::flatten]] ReplySignals signals_in(const codec::BsonView& doc) {
  ReplySignals out;
  if (doc.empty()) return out;
  int32_t top = 0, concern = 0, write_errors = 0;
  bool seen_code = false, seen_concern = false, seen_errors = false, seen_hello = false;
  bool seen_cursor = false;
  for (BsonElements it(doc); it.next();) {
    const std::string_view key = it.key;
    if (key == "code") {
      if (!seen_code && codec::is_state_change(code_of(it))) top = code_of(it);
      seen_code = true;
    } else if (key == "writeConcernError") {
      if (!seen_concern && it.holds_document()) {
        const int32_t code = code_in(it);
        if (codec::is_state_change(code)) concern = code;
      }
      seen_concern = true;
    } else if (key == "writeErrors") {
      if (!seen_errors) write_errors = state_change_code_in_entries(it);
      seen_errors = true;
      if constexpr (kWorkload) out.failed = out.failed || (it.holds_array() && it.value_size > 5);
    } else if (kWorkload && key == "ok") {
      out.failed = out.failed || !it.as_bool();
    } else if (kWorkload && key == "n") {
      if (!seen_cursor && it.holds_number()) out.documents = static_cast<uint64_t>(it.as_int64());
    } else if (kWorkload && key == "cursor" && it.holds_document()) {
      seen_cursor = true;
      out.documents = first_batch_length(it);
    } else if (key == "isWritablePrimary" || key == "ismaster") {
      if (!seen_hello) out.hello_not_writable = !it.as_bool();
      seen_hello = true;
    }
  }
  const int32_t code = top != 0 ? top : concern != 0 ? concern : write_errors;
  if (code != 0) out.state_change = static_cast<codec::ServerError>(code);
  return out;
}

}  // namespace

ReplySignals read_reply_signals(codec::Bytes plain, bool for_workload) {
  auto signals_of = [for_workload](const codec::BsonView& doc) {
    return for_workload ? signals_in<true>(doc) : signals_in<false>(doc);
  };
  try {
    if (plain.size() < codec::kHeaderSize) return {};
    switch (codec::read_header(plain.data()).op_code) {
      case codec::OpCode::kMsg:
        return signals_of(codec::op_msg_body(plain));
      case codec::OpCode::kReply: {
        const auto legacy = codec::OpReply::parse(plain);
        if (!legacy.documents.empty()) return signals_of(legacy.documents.front());
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
