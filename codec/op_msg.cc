#include "docguard/codec/op_msg.h"

#include <cstring>
#include <string>

#include "docguard/base/bounded_text.h"
#include "docguard/base/short_equal.h"
#include "docguard/codec/crc32c.h"
#include "docguard/codec/error_kinds.h"

namespace docguard::codec {

namespace {

[[noreturn]] void throw_malformed(const BsonView& doc, size_t offset) {
  throw ProtocolError(ErrorKind::kBadBson, "malformed BSON element at offset " +
                                               std::to_string(offset) + " of a " +
                                               std::to_string(doc.size) + "-byte document");
}

void validate_structure(const BsonView& doc) {
  size_t offset = 0;
  if (!bson_structure_valid(doc, &offset)) throw_malformed(doc, offset);
}

// What parse() and op_msg_body() check before the sections: where they end and which flags
// the message has.
struct Frame {
  MsgHeader header;
  uint32_t flags = 0;
  size_t sections_end = 0;  // before the checksum, if any
};

// Why check_frame refuses `message`, thrown; out of line and cold, as throw_not_a_document.
[[noreturn, gnu::cold, gnu::noinline]] void throw_bad_frame(Bytes message) {
  if (message.size() < kHeaderSize + 4) {
    throw ProtocolError(ErrorKind::kBadOpMsg, "OP_MSG shorter than header and flagBits");
  }
  if (load_le32(message.data()) != static_cast<int32_t>(message.size())) {
    throw ProtocolError(ErrorKind::kBadLength, "OP_MSG messageLength does not match the frame");
  }
  const auto flags = static_cast<uint32_t>(load_le32(message.data() + kHeaderSize));
  const uint32_t unknown_required = flags & op_msg_flags::kRequiredMask & ~op_msg_flags::kKnownMask;
  if (unknown_required != 0) {
    throw ProtocolError(ErrorKind::kUnknownRequiredFlag, "OP_MSG has unknown required flag bits " +
                                                             std::to_string(unknown_required));
  }
  throw ProtocolError(ErrorKind::kBadOpMsg, "OP_MSG too short for checksum");
}

[[gnu::always_inline]] inline Frame check_frame(Bytes message) {
  if (message.size() < kHeaderSize + 4) throw_bad_frame(message);
  Frame f;
  f.header = read_header(message.data());
  f.flags = static_cast<uint32_t>(load_le32(message.data() + kHeaderSize));
  f.sections_end = message.size();
  const bool checksum = (f.flags & op_msg_flags::kChecksumPresent) != 0;
  if (f.header.message_length != static_cast<int32_t>(message.size()) ||
      (f.flags & op_msg_flags::kRequiredMask & ~op_msg_flags::kKnownMask) != 0 ||
      (checksum && f.sections_end < kHeaderSize + 4 + 4)) {
    throw_bad_frame(message);
  }
  if (checksum) f.sections_end -= 4;
  return f;
}

// The size of the kind 1 section whose size field is at `pos`, checked against `end`.
size_t sequence_size(Bytes message, size_t pos, size_t end) {
  if (end - pos < 4) throw ProtocolError(ErrorKind::kBadOpMsg, "kind 1 section truncated");
  const int32_t size = load_le32(message.data() + pos);
  if (size < 5 || static_cast<size_t>(size) > end - pos) {
    throw ProtocolError(ErrorKind::kBadOpMsg,
                        "kind 1 section size " + std::to_string(size) + " overruns the message");
  }
  return static_cast<size_t>(size);
}

// How much of an identifier an error message repeats: the message reaches the log.
constexpr size_t kMaxIdentifierInError = 128;

// The kind byte of the section that carries trace context: one BSON document, sized like the
// body's.
constexpr uint8_t kTraceContextKind = 3;

// A section of `kind` where none may be; out of line and cold, as throw_bad_frame.
[[noreturn, gnu::cold, gnu::noinline]] void throw_misplaced_section(uint8_t kind) {
  if (kind == 0 || kind == kTraceContextKind) {
    throw ProtocolError(ErrorKind::kBadOpMsg,
                        "OP_MSG has multiple kind " + std::to_string(kind) + " sections");
  }
  throw ProtocolError(ErrorKind::kBadOpMsg,
                      "OP_MSG has unknown section kind " + std::to_string(kind));
}

}  // namespace

BsonView op_msg_body(Bytes message) {
  const Frame f = check_frame(message);
  BsonView body;
  bool have_trace_context = false;
  size_t pos = kHeaderSize + 4;
  while (pos < f.sections_end) {
    const uint8_t kind = message[pos++];
    if (kind == 0 && body.empty()) {
      body = checked_bson(message.subspan(pos, f.sections_end - pos));
      pos += body.size;
    } else if (kind == 1) {
      pos += sequence_size(message, pos, f.sections_end);
    } else if (kind == kTraceContextKind && !have_trace_context) {
      pos += checked_bson(message.subspan(pos, f.sections_end - pos)).size;
      have_trace_context = true;
    } else {
      throw_misplaced_section(kind);
    }
  }
  return body;
}

const DocumentSequence* OpMsg::sequence(std::string_view identifier) const {
  for (const auto& s : sequences) {
    if (base::same_text(s.identifier, identifier)) return &s;
  }
  return nullptr;
}

OpMsg OpMsg::parse(Bytes message, bool verify_checksum) {
  const Frame frame = check_frame(message);
  OpMsg msg;
  msg.header = frame.header;
  msg.flags = frame.flags;
  msg.checksum_present = (msg.flags & op_msg_flags::kChecksumPresent) != 0;
  const size_t end = frame.sections_end;
  if (msg.checksum_present && verify_checksum) {
    const auto expected = static_cast<uint32_t>(load_le32(message.data() + end));
    const uint32_t actual = crc32c(message.first(end));
    if (expected != actual)
      throw ProtocolError(ErrorKind::kChecksum, "OP_MSG CRC-32C checksum mismatch");
  }

  size_t pos = kHeaderSize + 4;
  bool have_body = false;
  bool have_trace_context = false;
  while (pos < end) {
    const uint8_t kind = message[pos];
    const size_t section_start = pos;
    ++pos;
    if (kind == 0) {
      if (have_body) throw_misplaced_section(kind);
      msg.body = checked_bson(message.subspan(pos, end - pos));
      pos += msg.body.size;
      have_body = true;
    } else if (kind == kTraceContextKind) {
      if (have_trace_context) {
        throw_misplaced_section(kind);
      }
      msg.trace_context = checked_bson(message.subspan(pos, end - pos));
      pos += msg.trace_context.size;
      have_trace_context = true;
    } else if (kind == 1) {
      const size_t section_end = pos + sequence_size(message, pos, end);
      size_t p = pos + 4;
      const auto* nul = static_cast<const uint8_t*>(
          std::memchr(message.data() + p, 0, section_end > p ? section_end - p : 0));
      const size_t name_end =
          nul != nullptr ? static_cast<size_t>(nul - message.data()) : section_end;
      if (name_end >= section_end) {
        throw ProtocolError(ErrorKind::kBadOpMsg,
                            "kind 1 section identifier is not NUL-terminated");
      }
      const std::string_view identifier(reinterpret_cast<const char*>(message.data() + p),
                                        name_end - p);
      if (identifier.empty()) {
        throw ProtocolError(ErrorKind::kBadOpMsg, "kind 1 section has no identifier");
      }
      if (msg.sequence(identifier) != nullptr) {
        throw ProtocolError(ErrorKind::kBadOpMsg,
                            "duplicate kind 1 identifier '" +
                                base::bounded(identifier, kMaxIdentifierInError) + "'");
      }
      DocumentSequence& seq = msg.sequences.emplace_back();
      seq.identifier = identifier;
      p = name_end + 1;
      while (p < section_end) {
        BsonView doc = checked_bson(message.subspan(p, section_end - p));
        seq.documents.push_back(doc);
        p += doc.size;
      }
      seq.section_offset = section_start;
      seq.section_size = section_end - section_start;
      pos = section_end;
    } else {
      throw_misplaced_section(kind);
    }
  }
  if (!have_body) throw ProtocolError(ErrorKind::kBadOpMsg, "OP_MSG has no kind 0 section");
  // Every element of every document, recursively: the rules walk them with iterators that
  // trust embedded lengths, and corrupt BSON must not be measured (or relayed) as if valid.
  // Identifiers must not also appear as body fields: the body's validation compares its keys
  // with them on the way (a second walk over the body cost more than the comparisons). A clash
  // is reported after the sequences' documents are validated, as malformed BSON comes first.
  // The body's walk also notes where its top-level elements are, for describe().
  std::string_view clash;
  size_t offset = 0;
  if (msg.sequences.empty()) {
    if (!bson_structure_valid(msg.body, &offset, &msg.body_elements)) {
      throw_malformed(msg.body, offset);
    }
  } else {
    base::InlineVector<std::string_view, 2> identifiers;
    for (const auto& s : msg.sequences) identifiers.push_back(s.identifier);
    if (!bson_structure_valid(msg.body, &offset, identifiers, &clash, &msg.body_elements)) {
      throw_malformed(msg.body, offset);
    }
  }
  for (const auto& s : msg.sequences) {
    for (const auto& d : s.documents) {
      if (&s == &msg.sequences[0] && &d == &s.documents[0]) {
        if (!bson_structure_valid(d, &offset, &msg.first_sequence_document)) {
          throw_malformed(d, offset);
        }
      } else {
        validate_structure(d);
      }
    }
  }
  if (have_trace_context) validate_structure(msg.trace_context);
  if (!clash.empty()) {
    throw ProtocolError(ErrorKind::kBadOpMsg, "identifier '" +
                                                  base::bounded(clash, kMaxIdentifierInError) +
                                                  "' appears in both the body and a sequence");
  }
  return msg;
}

bool clear_unknown_optional_flags(std::vector<uint8_t>& message) {
  if (message.size() < kHeaderSize + 4) return false;
  auto flags = static_cast<uint32_t>(load_le32(message.data() + kHeaderSize));
  const uint32_t cleared = flags & (op_msg_flags::kRequiredMask | op_msg_flags::kKnownMask);
  if (cleared == flags) return false;
  store_le32(message.data() + kHeaderSize, static_cast<int32_t>(cleared));
  return true;
}

void recompute_checksum(std::vector<uint8_t>& message) {
  if (message.size() < kHeaderSize + 8) return;
  const size_t end = message.size() - 4;
  store_le32(message.data() + end, static_cast<int32_t>(crc32c(Bytes{message.data(), end})));
}

OpMsgBuilder::OpMsgBuilder(int32_t request_id, int32_t response_to, uint32_t flags) {
  out_.resize(kHeaderSize + 4);
  write_header(out_.data(), MsgHeader{0, request_id, response_to, OpCode::kMsg});
  store_le32(out_.data() + kHeaderSize,
             static_cast<int32_t>(flags & ~op_msg_flags::kChecksumPresent));
}

OpMsgBuilder& OpMsgBuilder::body(Bytes bson) {
  out_.push_back(0);
  out_.insert(out_.end(), bson.begin(), bson.end());
  return *this;
}

OpMsgBuilder& OpMsgBuilder::sequence(std::string_view identifier,
                                     std::span<const BsonView> documents) {
  out_.push_back(1);
  const size_t size_at = out_.size();
  out_.resize(out_.size() + 4);
  out_.insert(out_.end(), identifier.begin(), identifier.end());
  out_.push_back(0);
  for (const auto& d : documents) out_.insert(out_.end(), d.data, d.data + d.size);
  store_le32(out_.data() + size_at, static_cast<int32_t>(out_.size() - size_at));
  return *this;
}

OpMsgBuilder& OpMsgBuilder::trace_context(const BsonView& document) {
  if (document.empty()) return *this;
  out_.push_back(kTraceContextKind);
  out_.insert(out_.end(), document.data, document.data + document.size);
  return *this;
}

std::vector<uint8_t> OpMsgBuilder::finish() {
  store_le32(out_.data(), static_cast<int32_t>(out_.size()));
  return std::move(out_);
}

}  // namespace docguard::codec
