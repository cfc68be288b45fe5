#include <algorithm>
#include <cstring>
#include <string>

#include "docguard/codec/bson_view.h"
#include "docguard/codec/document_outline.h"
#include "docguard/codec/error_kinds.h"

namespace docguard::codec {

void throw_not_a_document(Bytes data) {
  if (data.size() < 5)
    throw ProtocolError(ErrorKind::kBadBson, "BSON document shorter than 5 bytes");
  const int32_t declared = load_le32(data.data());
  if (declared < 5 || static_cast<size_t>(declared) > data.size()) {
    throw ProtocolError(ErrorKind::kBadBson, "BSON document length " + std::to_string(declared) +
                                                 " does not fit in the " +
                                                 std::to_string(data.size()) + " bytes left");
  }
  throw ProtocolError(ErrorKind::kBadBson, "BSON document does not end with a NUL byte");
}

void append_document_array(bson_t* parent, const char* key, std::span<const BsonView> docs) {
  bson_t array;
  bson_append_array_begin(parent, key, -1, &array);
  char key_buf[16];
  for (size_t i = 0; i < docs.size(); ++i) {
    const char* k = nullptr;
    bson_uint32_to_string(static_cast<uint32_t>(i), &k, key_buf, sizeof key_buf);
    bson_t doc;
    if (bson_init_static(&doc, docs[i].data, docs[i].size)) {
      bson_append_document(&array, k, -1, &doc);
    }
  }
  bson_append_array_end(parent, &array);
}

std::string_view find_string(const BsonView& doc, const char* key) {
  if (doc.empty()) return {};
  bson_t b = doc.borrow();
  bson_iter_t it;
  if (bson_iter_init_find(&it, &b, key) && BSON_ITER_HOLDS_UTF8(&it)) {
    uint32_t len = 0;
    const char* s = bson_iter_utf8(&it, &len);
    return {s, len};
  }
  return {};
}

namespace {

// Keys looked for among a document's top-level keys while it is validated, and the first one
// found (empty when none is).
struct WatchedKeys {
  explicit WatchedKeys(std::span<const std::string_view> watched) : keys(watched) {
    for (const std::string_view k : keys) sizes |= k.size() < 64 ? uint64_t{1} << k.size() : 1;
  }
  std::span<const std::string_view> keys;
  std::string_view first_found;
  // Bit n: some key is n bytes long (bit 0: one is 64 or longer): most body keys are told
  // apart by their length alone.
  uint64_t sizes = 0;

  void check(const uint8_t* key, size_t size) {
    if (!first_found.empty()) return;
    if ((sizes & (size < 64 ? uint64_t{1} << size : 1)) == 0) return;
    for (const std::string_view k : keys) {
      if (k.size() == size && std::memcmp(k.data(), key, size) == 0) {
        first_found = k;
        return;
      }
    }
  }
};

// Checks a document at data[0, size): its length prefix matches `size`, its elements fit, and
// it ends with NUL. `base` is its offset in the outermost document, for error reporting. With
// kWatch, the top-level keys are also compared with `watched`; with kTop, they are noted in
// `top` (embedded documents never are either). With kOutline, the embedded documents and arrays
// are noted in `outline` (`self`: this one's index there, kWhole for the outermost document).
constexpr uint32_t kWhole = UINT32_MAX;
template <bool kWatch, bool kTop = false, bool kOutline = false>
bool structure_valid(const uint8_t* data, size_t size, int depth, size_t base, size_t* error_offset,
                     WatchedKeys* watched, TopLevelElements* top = nullptr,
                     DocumentOutline* outline = nullptr, uint32_t self = kWhole) {
  if (depth > kMaxBsonDepth || size < 5 || static_cast<size_t>(load_le32(data)) != size ||
      data[size - 1] != 0) {
    *error_offset = base;
    return false;
  }
  const size_t end = size - 1;
  size_t pos = 4;
  auto fail = [&](size_t at) {
    *error_offset = base + at;
    return false;
  };
  // A string value: int32 length (including its NUL), bytes, NUL.
  auto string_at = [&](size_t at, size_t* next) {
    if (end - at < 4) return false;
    const int32_t len = load_le32(data + at);
    if (len < 1 || static_cast<size_t>(len) > end - at - 4 || data[at + 4 + len - 1] != 0) {
      return false;
    }
    *next = at + 4 + static_cast<size_t>(len);
    return true;
  };
  // Keys are short: a plain loop costs less than a call to memchr. data[end] is the document's
  // own terminating NUL (checked above) and `at` is never past it, so the loop needs no bound
  // of its own: it stops there at the latest, and a NUL found at `end` is no terminator.
  auto cstring_at = [&](size_t at, size_t* next) {
    // Two bytes a step: data[at + 1] is read only after data[at] was not the NUL, so never past
    // data[end].
    while (data[at] != 0 && data[at + 1] != 0) at += 2;
    if (data[at] != 0) ++at;
    if (at == end) return false;
    *next = at + 1;
    return true;
  };
  uint32_t elements = 0;  // kOutline: how many this container holds
  while (pos < end) {
    const size_t element = pos;
    const uint8_t type = data[pos++];
    if (!cstring_at(pos, &pos)) return fail(element);
    if constexpr (kWatch) watched->check(data + element + 1, pos - element - 2);
    if constexpr (kOutline) ++elements;
    if constexpr (kTop) {
      if (top->count < TopLevelElements::kCapacity) {
        top->entries[top->count] = {static_cast<uint32_t>(element), static_cast<uint32_t>(pos)};
      }
      ++top->count;
    }
    size_t fixed = 0;
    switch (type) {
      case 0x01:
      case 0x09:
      case 0x11:
      case 0x12:
        fixed = 8;
        break;  // double, date, ts, int64
      case 0x07:
        fixed = 12;
        break;    // ObjectId
      case 0x08:  // bool
        if (pos >= end || data[pos] > 1) return fail(element);
        fixed = 1;
        break;
      case 0x10:
        fixed = 4;
        break;  // int32
      case 0x13:
        fixed = 16;
        break;  // decimal128
      case 0x06:
      case 0x0A:
      case 0x7F:
      case 0xFF:
        fixed = 0;
        break;  // undefined, null, max/min key
      case 0x02:
      case 0x0D:
      case 0x0E:  // string, code, symbol
        if (!string_at(pos, &pos)) return fail(element);
        continue;
      case 0x03:
      case 0x04: {  // document, array
        if (end - pos < 5) return fail(element);
        const int32_t len = load_le32(data + pos);
        if (len < 5 || static_cast<size_t>(len) > end - pos) return fail(element);
        if constexpr (kOutline) {
          const uint32_t index = outline->count++;
          if (index < DocumentOutline::kCapacity) {
            DocumentOutline::Container& c = outline->containers[index];
            c.element = static_cast<uint32_t>(base + element);
            c.key_size = static_cast<uint32_t>(pos - element - 2);
            c.is_array = type == 0x04;
            // The outermost document is at level 1 and at validation depth 0.
            outline->depth = std::max(outline->depth, static_cast<uint32_t>(depth) + 2);
            if (!structure_valid<false, false, true>(data + pos, static_cast<size_t>(len),
                                                     depth + 1, base + pos, error_offset, nullptr,
                                                     nullptr, outline, index)) {
              return false;
            }
            c.end = outline->count;
          } else if (!structure_valid<false>(data + pos, static_cast<size_t>(len), depth + 1,
                                             base + pos, error_offset, nullptr)) {
            // Past the capacity the outline is not complete: the rest is only validated.
            return false;
          }
        } else if (!structure_valid<false>(data + pos, static_cast<size_t>(len), depth + 1,
                                           base + pos, error_offset, nullptr)) {
          return false;
        }
        pos += static_cast<size_t>(len);
        continue;
      }
      case 0x05: {  // binary
        if (end - pos < 5) return fail(element);
        const int32_t len = load_le32(data + pos);
        if (len < 0 || static_cast<size_t>(len) > end - pos - 5) return fail(element);
        // The deprecated subtype 2 wraps its bytes in a second length (found by fuzz_bson).
        if (data[pos + 4] == 0x02 && (len < 4 || load_le32(data + pos + 5) != len - 4)) {
          return fail(element);
        }
        pos += 5 + static_cast<size_t>(len);
        continue;
      }
      case 0x0B:  // regex: two cstrings
        if (!cstring_at(pos, &pos) || pos >= end || !cstring_at(pos, &pos)) return fail(element);
        continue;
      case 0x0C:  // DBPointer
        if (!string_at(pos, &pos) || end - pos < 12) return fail(element);
        pos += 12;
        continue;
      case 0x0F: {  // code with scope
        if (end - pos < 4) return fail(element);
        const int32_t total = load_le32(data + pos);
        if (total < 14 || static_cast<size_t>(total) > end - pos) return fail(element);
        size_t inner = pos + 4;
        if (!string_at(inner, &inner) || inner >= pos + static_cast<size_t>(total)) {
          return fail(element);
        }
        const size_t scope_len = pos + static_cast<size_t>(total) - inner;
        if (!structure_valid<false>(data + inner, scope_len, depth + 1, base + inner, error_offset,
                                    nullptr)) {
          return false;
        }
        pos += static_cast<size_t>(total);
        continue;
      }
      default:
        return fail(element);
    }
    if (end - pos < fixed) return fail(element);
    pos += fixed;
  }
  if constexpr (kOutline) {
    if (self < DocumentOutline::kCapacity) outline->containers[self].length = elements;
  }
  return pos == end;
}

}  // namespace

bool bson_structure_valid(const BsonView& doc, size_t* error_offset) {
  size_t ignored = 0;
  if (error_offset == nullptr) error_offset = &ignored;
  if (doc.empty()) {
    *error_offset = 0;
    return false;
  }
  return structure_valid<false>(doc.data, doc.size, 0, 0, error_offset, nullptr);
}

bool bson_structure_valid(const BsonView& doc, size_t* error_offset, DocumentOutline* outline) {
  outline->document = doc.data;
  outline->size = doc.size;
  outline->count = 0;
  outline->complete = false;
  outline->depth = 1;
  if (doc.empty()) {
    *error_offset = 0;
    return false;
  }
  // The type byte, then the key "_id" and its NUL.
  outline->id_first = doc.size >= 9 && std::memcmp(doc.data + 5, "_id", 4) == 0;
  const bool valid = structure_valid<false, false, true>(doc.data, doc.size, 0, 0, error_offset,
                                                         nullptr, nullptr, outline);
  outline->complete = valid && outline->count <= DocumentOutline::kCapacity;
  return valid;
}

void DocumentOutline::copy_to(DocumentOutline& to) const {
  to.document = document;
  to.size = size;
  to.count = count;
  to.complete = complete;
  to.depth = depth;
  to.id_first = id_first;
  std::copy_n(containers.begin(), std::min(count, kCapacity), to.containers.begin());
}

namespace {
// What a walk noted in `top` is all of the elements when it found them valid and few enough.
bool close_top(TopLevelElements* top, bool valid) {
  top->complete = valid && top->count <= TopLevelElements::kCapacity;
  if (top->count > TopLevelElements::kCapacity) top->count = TopLevelElements::kCapacity;
  return valid;
}
}  // namespace

bool bson_structure_valid(const BsonView& doc, size_t* error_offset, TopLevelElements* top) {
  top->count = 0;
  if (doc.empty()) {
    *error_offset = 0;
    return close_top(top, false);
  }
  return close_top(
      top, structure_valid<false, true>(doc.data, doc.size, 0, 0, error_offset, nullptr, top));
}

bool bson_structure_valid(const BsonView& doc, size_t* error_offset,
                          std::span<const std::string_view> keys, std::string_view* first_found,
                          TopLevelElements* top) {
  WatchedKeys watched(keys);
  TopLevelElements unused;
  if (top == nullptr) top = &unused;
  top->count = 0;
  const bool valid = !doc.empty() && structure_valid<true, true>(doc.data, doc.size, 0, 0,
                                                                 error_offset, &watched, top);
  if (doc.empty()) *error_offset = 0;
  *first_found = watched.first_found;
  return close_top(top, valid);
}

std::string to_json(const BsonView& doc) {
  if (doc.empty()) return "{}";
  bson_t b = doc.borrow();
  size_t len = 0;
  char* json = bson_as_relaxed_extended_json(&b, &len);
  if (json == nullptr) return "<invalid BSON>";
  std::string out(json, len);
  bson_free(json);
  return out;
}

bool complete_first_batch(const BsonView& reply, BsonView* batch) {
  bson_iter_t it, cursor;
  if (!bson_iter_init_from_data(&it, reply.data, reply.size) || !bson_iter_find(&it, "cursor") ||
      !BSON_ITER_HOLDS_DOCUMENT(&it) || !bson_iter_recurse(&it, &cursor)) {
    return false;
  }
  bool exhausted = false;
  bool found = false;
  while (bson_iter_next(&cursor)) {
    const std::string_view key = key_of(cursor);
    if (key == "id") exhausted = bson_iter_as_int64(&cursor) == 0;
    if (key == "firstBatch" && BSON_ITER_HOLDS_ARRAY(&cursor)) {
      *batch = view_of(cursor);
      found = true;
    }
  }
  return exhausted && found;
}

}  // namespace docguard::codec
