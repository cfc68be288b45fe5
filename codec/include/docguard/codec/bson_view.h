// A non-owning view of one BSON document inside a message buffer.
#pragma once

#include <bson/bson.h>

#include <array>
#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <string_view>
#include <utility>

#include "docguard/base/inline_vector.h"
#include "docguard/codec/error_kinds.h"
#include "docguard/codec/message.h"

namespace docguard::codec {

struct BsonView {
  const uint8_t* data = nullptr;
  uint32_t size = 0;

  bool empty() const { return data == nullptr; }
  Bytes bytes() const { return {data, size}; }
  // A bson_t that borrows these bytes (no copy). Valid while the underlying buffer lives.
  bson_t borrow() const {
    bson_t b;
    if (!bson_init_static(&b, data, size)) bson_init(&b);
    return b;
  }
};

// Views of several documents (a write's statements, a kind-1 section's documents): most
// messages carry one or a few, which then take no allocation.
using BsonViews = base::InlineVector<BsonView, 4>;

// Owns a heap bson_t (bson_new / bson_new_from_json / bson_copy ...). std::unique_ptr<bson_t>
// cannot be used: bson_t carries an alignment attribute that template arguments drop.
class OwnedBson {
 public:
  OwnedBson() : b_(bson_new()) {}
  explicit OwnedBson(bson_t* adopt) : b_(adopt) {}
  OwnedBson(OwnedBson&& o) noexcept : b_(std::exchange(o.b_, nullptr)) {}
  OwnedBson& operator=(OwnedBson&& o) noexcept {
    if (this != &o) {
      if (b_ != nullptr) bson_destroy(b_);
      b_ = std::exchange(o.b_, nullptr);
    }
    return *this;
  }
  OwnedBson(const OwnedBson&) = delete;
  OwnedBson& operator=(const OwnedBson&) = delete;
  ~OwnedBson() {
    if (b_ != nullptr) bson_destroy(b_);
  }
  bson_t* get() const { return b_; }
  bson_t* operator->() const { return b_; }
  BsonView view() const { return BsonView{bson_get_data(b_), b_->len}; }
  Bytes bytes() const { return view().bytes(); }

 private:
  bson_t* b_;
};

// Owns a bson_t held in place (BSON_INITIALIZER): a document built here, or the reply a
// libmongoc call initialises into get() (those calls overwrite the storage they are given, so a
// heap bson_t from bson_new would leak there). Neither copied nor moved: libbson's inline
// documents point into themselves.
class ScopedBson {
 public:
  ScopedBson() = default;
  ScopedBson(const ScopedBson&) = delete;
  ScopedBson& operator=(const ScopedBson&) = delete;
  ~ScopedBson() { bson_destroy(&doc_); }
  bson_t* get() { return &doc_; }
  const bson_t* get() const { return &doc_; }
  BsonView view() const { return BsonView{bson_get_data(&doc_), doc_.len}; }
  Bytes bytes() const { return view().bytes(); }

 private:
  bson_t doc_ = BSON_INITIALIZER;
};

// Throws ProtocolError(ErrorKind::kBadBson) saying why `data` holds no document that
// checked_bson would return. Out of line and cold: building the message needs a frame that the
// check itself, on every message, does not.
[[noreturn, gnu::cold]] void throw_not_a_document(Bytes data);

// Checks the framing of a BSON document at `data` (length prefix, bounds, trailing NUL) and
// returns a view of it; throws ProtocolError(ErrorKind::kBadBson) otherwise. Does not walk the
// elements. Inline: every request and reply is checked so, once per document.
inline BsonView checked_bson(Bytes data) {
  if (data.size() < 5) throw_not_a_document(data);
  uint32_t declared = 0;  // little-endian, as every platform docguard builds for
  std::memcpy(&declared, data.data(), 4);
  // A negative length, read unsigned, is past any size.
  if (declared < 5 || declared > data.size() || data[declared - 1] != 0) {
    throw_not_a_document(data);
  }
  return BsonView{data.data(), declared};
}

// The key of the element the iterator points at.
inline std::string_view key_of(const bson_iter_t& iter) {
  return {bson_iter_key(&iter), bson_iter_key_len(&iter)};
}
inline std::string_view key_of(const bson_iter_t* iter) { return key_of(*iter); }

// The text of the element the iterator points at; "" when it holds another type than a string.
inline std::string_view utf8_of(const bson_iter_t& iter) {
  if (!BSON_ITER_HOLDS_UTF8(&iter)) return {};
  uint32_t length = 0;
  const char* text = bson_iter_utf8(&iter, &length);
  return {text, length};
}
inline std::string_view utf8_of(const bson_iter_t* iter) { return utf8_of(*iter); }

// Opens the embedded document or array the iterator points at: false for other types.
inline bool child_of(const bson_iter_t& iter, bson_iter_t* child) {
  bson_iter_t copy = iter;  // bson_iter_recurse takes a non-const iterator
  return (BSON_ITER_HOLDS_DOCUMENT(&copy) || BSON_ITER_HOLDS_ARRAY(&copy)) &&
         bson_iter_recurse(&copy, child);
}

// The document or array an iterator is on (empty for any other value).
inline BsonView view_of(const bson_iter_t& iter) {
  uint32_t len = 0;
  const uint8_t* data = nullptr;
  if (BSON_ITER_HOLDS_DOCUMENT(&iter)) {
    bson_iter_document(&iter, &len, &data);
  } else if (BSON_ITER_HOLDS_ARRAY(&iter)) {
    bson_iter_array(&iter, &len, &data);
  }
  return BsonView{data, len};
}

// Appends `docs` to `parent` as the array `key` ("0", "1", ... keys).
void append_document_array(bson_t* parent, const char* key, std::span<const BsonView> docs);

// String value of `key` in `doc` if present and a UTF-8 string; empty otherwise.
std::string_view find_string(const BsonView& doc, const char* key);

// A cursor reply's cursor.firstBatch when the cursor is already exhausted (id 0): then the batch
// is the whole answer (listCollections, listIndexes), and what it leaves out does not exist.
// False when the cursor stays open or the reply has no batch.
bool complete_first_batch(const BsonView& reply, BsonView* batch);

// Structural validation on the hot path: every element's type, key and length fit, recursively
// (at most kMaxBsonDepth levels), strings are NUL-terminated; UTF-8 is not checked (the server
// does). Much cheaper than libbson's validation. On failure returns false and sets
// *error_offset to where the bad element starts.
constexpr int kMaxBsonDepth = 200;
bool bson_structure_valid(const BsonView& doc, size_t* error_offset);

// Where a document's first top-level elements start, and their values, as offsets into it:
// noted by the validating walk of an OP_MSG body, so that describe() reads the command's fields
// without walking the body again. `complete`: the entries are all of the elements (false until a
// walk fills them in, and for a body of more than kCapacity elements).
struct TopLevelElements {
  static constexpr uint32_t kCapacity = 16;
  struct Entry {
    uint32_t element;  // its type byte
    uint32_t value;    // past its key's NUL
  };
  uint32_t count = 0;
  bool complete = false;
  std::array<Entry, kCapacity> entries;  // the first min(count, kCapacity) are set
};
// The same check, noting the top-level elements in `*top`.
bool bson_structure_valid(const BsonView& doc, size_t* error_offset, TopLevelElements* top);
// The same check, also finding in the same walk the first top-level key of `doc` that equals
// one of `keys` (*first_found: that key, or empty when none does), and noting the top-level
// elements in `*top`. `error_offset` must not be null. For OP_MSG bodies, whose fields must not
// repeat a sequence's identifier.
bool bson_structure_valid(const BsonView& doc, size_t* error_offset,
                          std::span<const std::string_view> keys, std::string_view* first_found,
                          TopLevelElements* top = nullptr);

// Relaxed Extended JSON of a document, for logs and tests.
std::string to_json(const BsonView& doc);

}  // namespace docguard::codec
