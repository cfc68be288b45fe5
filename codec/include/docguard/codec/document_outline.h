// Where a document's embedded documents and arrays are, how deep they nest and how many elements
// each holds, and where its top-level _id is: noted by the walk that validates the document, so
// that measuring the shape of an inserted document (its depth, its arrays' lengths) needs no
// second walk over all of its elements.
#pragma once

#include <array>
#include <cstdint>

#include "docguard/codec/bson_view.h"

namespace docguard::codec {

struct DocumentOutline {
  // Containers noted at most; a document with more is not outlined (complete is false) and is
  // walked instead. Most documents written one at a time have a few.
  static constexpr uint32_t kCapacity = 32;
  struct Container {
    uint32_t element;   // offset of its element's type byte in the document
    uint32_t length;    // elements it holds
    uint32_t key_size;  // its key starts past the type byte; a key may be megabytes long
    uint32_t end;       // index past its last descendant: its subtree is [index + 1, end)
    bool is_array;
  };

  // The document outlined, compared with the one a reader measures: an outline describes only
  // the bytes it was taken from.
  const uint8_t* document = nullptr;
  uint32_t size = 0;
  // The containers in the order the walk met them (a container before what it holds), all of
  // them when complete.
  uint32_t count = 0;
  bool complete = false;
  // The nesting of the deepest container: 1 for {a: 1}, each embedded level adds one.
  uint32_t depth = 1;
  // Whether its first element is keyed _id, where drivers put it; otherwise a reader that needs
  // the _id looks for it.
  bool id_first = false;
  std::array<Container, kCapacity> containers;  // the first min(count, kCapacity) are set

  bool describes(const BsonView& doc) const {
    return complete && document == doc.data && size == doc.size;
  }
  // Copies what is set (the header, then the first `count` containers) and nothing more.
  void copy_to(DocumentOutline& to) const;
};

// bson_structure_valid, outlining `doc` in `*outline` on the way.
bool bson_structure_valid(const BsonView& doc, size_t* error_offset, DocumentOutline* outline);

}  // namespace docguard::codec
