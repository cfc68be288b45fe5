// OP_MSG (opcode 2013): parsing without copying, and building new messages.
#pragma once

#include <bson/bson.h>

#include <cstdint>
#include <initializer_list>
#include <span>
#include <string_view>
#include <vector>

#include "docguard/codec/bson_view.h"
#include "docguard/codec/document_outline.h"
#include "docguard/codec/message.h"

namespace docguard::codec {

namespace op_msg_flags {
constexpr uint32_t kChecksumPresent = 1u << 0;
constexpr uint32_t kMoreToCome = 1u << 1;
constexpr uint32_t kExhaustAllowed = 1u << 16;
// Bits 0-15 are required: a receiver must reject any it does not know.
constexpr uint32_t kRequiredMask = 0x0000FFFFu;
constexpr uint32_t kKnownMask = kChecksumPresent | kMoreToCome | kExhaustAllowed;
}  // namespace op_msg_flags

// The wire version from which servers take section kind 3 (trace context); drivers send it only
// to servers that announce at least this maxWireVersion, and older servers close the
// connection on it.
constexpr int64_t kTraceContextMinWireVersion = 29;

// A kind-1 section: an identifier and documents back to back.
struct DocumentSequence {
  std::string_view identifier;
  BsonViews documents;
  size_t section_offset = 0;  // offset of the kind byte within the message
  size_t section_size = 0;    // kind byte + size-prefixed payload
};

// A parsed OP_MSG. Every view points into the message buffer passed to parse(), which must
// outlive this object.
struct OpMsg {
  MsgHeader header;
  uint32_t flags = 0;
  BsonView body;
  // Inline: a request has at most two (bulkWrite's ops and nsInfo), most have none or one.
  base::InlineVector<DocumentSequence, 2> sequences;
  // The kind-3 section's document, empty when there is none: trace context the driver sends
  // for the server (e.g. {otel: {traceparent: "00-..."}}), not part of the command. Forwarded
  // as sent; a message docguard rebuilds keeps it.
  BsonView trace_context;
  bool checksum_present = false;
  // The body's top-level elements, noted by parse() (not complete in an OpMsg made otherwise:
  // then describe() walks the body).
  TopLevelElements body_elements;
  // The first document of the first sequence (an insert's document, when it comes one at a
  // time), outlined by parse() as it validates it; not complete otherwise.
  DocumentOutline first_sequence_document;

  bool more_to_come() const { return (flags & op_msg_flags::kMoreToCome) != 0; }
  bool exhaust_allowed() const { return (flags & op_msg_flags::kExhaustAllowed) != 0; }
  const DocumentSequence* sequence(std::string_view identifier) const;

  // Parses a whole message (header included). Throws ProtocolError on: unknown required flag
  // bits, zero or several kind-0 sections, several kind-3 sections, unknown section kinds,
  // duplicate identifiers,
  // sections overrunning the message, malformed BSON (framing and every element, recursively),
  // and checksum mismatch (when verify_checksum is set).
  static OpMsg parse(Bytes message, bool verify_checksum = true);
};

// The body (kind 0 section) of an OP_MSG after the framing checks of OpMsg::parse alone: the
// length, the required flag bits, the sections' kinds and sizes. Neither the checksum nor the
// documents' elements are checked, so reading a few fields of every reply costs no walk of
// the whole reply; read the result with bounds-checked iterators only. Empty when there is no
// kind 0 section; throws ProtocolError when the framing is wrong.
BsonView op_msg_body(Bytes message);

// Clears unknown optional flag bits (16-31) in place, as proxies must before forwarding.
// Returns true if the message changed. If a checksum is present the bytes no longer match it,
// so the caller must also call recompute_checksum.
bool clear_unknown_optional_flags(std::vector<uint8_t>& message);
// Recomputes the trailing CRC-32C of a message that has one.
void recompute_checksum(std::vector<uint8_t>& message);

// Builds an OP_MSG: a body, optional kind-1 sequences and an optional kind-3 trace context.
// No checksum.
class OpMsgBuilder {
 public:
  OpMsgBuilder(int32_t request_id, int32_t response_to, uint32_t flags = 0);
  OpMsgBuilder& body(Bytes bson);
  OpMsgBuilder& body(const bson_t* bson) { return body(Bytes{bson_get_data(bson), bson->len}); }
  OpMsgBuilder& sequence(std::string_view identifier, std::span<const BsonView> documents);
  OpMsgBuilder& sequence(std::string_view identifier, std::initializer_list<BsonView> documents) {
    return sequence(identifier, std::span<const BsonView>(documents.begin(), documents.size()));
  }
  // A kind-3 section; nothing when `document` is empty.
  OpMsgBuilder& trace_context(const BsonView& document);
  std::vector<uint8_t> finish();

 private:
  std::vector<uint8_t> out_;
};

}  // namespace docguard::codec
