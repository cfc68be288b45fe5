// OP_MSG section kind 3: one BSON document of trace context after (or between) the other
// sections. Frames are built byte by byte here, not with OpMsgBuilder, so the parser is checked
// against the layout the drivers' specification gives and not against docguard's own writer.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "docguard/codec/command_view.h"
#include "docguard/codec/op_msg.h"
#include "test_messages.h"

namespace docguard::codec {
namespace {

using testing::Bson;

constexpr const char* kTraceparent = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01";

// A frame under construction: header (length patched by finish), flag bits, then sections.
struct Frame {
  std::vector<uint8_t> bytes = std::vector<uint8_t>(kHeaderSize + 4, 0);

  Frame& document_section(uint8_t kind, const Bson& doc) {
    bytes.push_back(kind);
    const auto v = doc.view();
    bytes.insert(bytes.end(), v.data, v.data + v.size);
    return *this;
  }
  Frame& sequence(const std::string& identifier, const Bson& doc) {
    bytes.push_back(1);
    const size_t size_at = bytes.size();
    bytes.resize(bytes.size() + 4);
    bytes.insert(bytes.end(), identifier.begin(), identifier.end());
    bytes.push_back(0);
    const auto v = doc.view();
    bytes.insert(bytes.end(), v.data, v.data + v.size);
    store_le32(bytes.data() + size_at, static_cast<int32_t>(bytes.size() - size_at));
    return *this;
  }
  std::vector<uint8_t> finish() {
    write_header(bytes.data(), MsgHeader{static_cast<int32_t>(bytes.size()), 9, 0, OpCode::kMsg});
    return bytes;
  }
};

const Bson& find_body() {
  static const Bson b(R"({"find": "orders", "filter": {"status": "open"}, "$db": "shop"})");
  return b;
}
const Bson& trace() {
  static const Bson b(std::string(R"({"otel": {"traceparent": ")") + kTraceparent + R"("}})");
  return b;
}

std::string error_of(const std::vector<uint8_t>& message) {
  try {
    OpMsg::parse(message);
  } catch (const ProtocolError& e) {
    return std::string(name(e.kind())) + ": " + e.what();
  }
  return "ok";
}

TEST(OpMsgTraceContext, BodyThenTraceContext) {
  const auto message =
      Frame{}.document_section(0, find_body()).document_section(3, trace()).finish();
  const OpMsg msg = OpMsg::parse(message);
  EXPECT_EQ(msg.body.size, find_body().view().size);
  ASSERT_FALSE(msg.trace_context.empty());
  EXPECT_EQ(Bson(msg.trace_context).json(), trace().json());
  // A view into the message, like the body.
  EXPECT_GT(msg.trace_context.data, message.data());
  EXPECT_EQ(msg.trace_context.data + msg.trace_context.size, message.data() + message.size());
  EXPECT_EQ(op_msg_body(message).size, msg.body.size);

  const CommandView view = describe(msg);
  EXPECT_EQ(view.kind, CommandKind::kFind);
  EXPECT_EQ(view.collection, "orders");
  EXPECT_EQ(view.traceparent, kTraceparent);
  EXPECT_EQ(view.trace_context.data, msg.trace_context.data);
}

TEST(OpMsgTraceContext, BodySequenceAndTraceContextInAnyOrder) {
  const Bson insert(R"({"insert": "orders", "$db": "shop"})");
  const Bson doc(R"({"_id": 1, "status": "open"})");
  for (const auto& message : {Frame{}
                                  .document_section(0, insert)
                                  .sequence("documents", doc)
                                  .document_section(3, trace())
                                  .finish(),
                              Frame{}
                                  .document_section(3, trace())
                                  .document_section(0, insert)
                                  .sequence("documents", doc)
                                  .finish(),
                              Frame{}
                                  .document_section(0, insert)
                                  .document_section(3, trace())
                                  .sequence("documents", doc)
                                  .finish()}) {
    const OpMsg msg = OpMsg::parse(message);
    ASSERT_EQ(msg.sequences.size(), 1u);
    EXPECT_EQ(msg.sequences[0].identifier, "documents");
    EXPECT_EQ(msg.sequences[0].documents.size(), 1u);
    EXPECT_FALSE(msg.trace_context.empty());
    const CommandView view = describe(msg);
    EXPECT_EQ(view.statements.size(), 1u);
    EXPECT_EQ(view.traceparent, kTraceparent);
    EXPECT_EQ(op_msg_body(message).size, insert.view().size);
  }
}

TEST(OpMsgTraceContext, WithoutTraceparentTheContextIsStillKept) {
  const Bson other(R"({"baggage": "k=v", "otel": {"traceparent": 7}})");
  // The message's bytes outlive the parsed message, which points into them.
  const auto bytes = Frame{}.document_section(0, find_body()).document_section(3, other).finish();
  const OpMsg msg = OpMsg::parse(bytes);
  EXPECT_FALSE(msg.trace_context.empty());
  EXPECT_TRUE(describe(msg).traceparent.empty());
}

TEST(OpMsgTraceContext, SecondTraceContextIsAProtocolError) {
  const auto message = Frame{}
                           .document_section(0, find_body())
                           .document_section(3, trace())
                           .document_section(3, trace())
                           .finish();
  EXPECT_EQ(error_of(message), "bad_op_msg: OP_MSG has multiple kind 3 sections");
  EXPECT_THROW(op_msg_body(message), ProtocolError);
}

TEST(OpMsgTraceContext, TruncatedTraceContextIsAProtocolError) {
  auto message = Frame{}.document_section(0, find_body()).document_section(3, trace()).finish();
  // The document's own length says more than the message holds.
  for (size_t cut = 1; cut < trace().view().size; ++cut) {
    std::vector<uint8_t> shorter(message.begin(), message.end() - static_cast<ptrdiff_t>(cut));
    store_le32(shorter.data(), static_cast<int32_t>(shorter.size()));
    EXPECT_NE(error_of(shorter), "ok") << "cut " << cut;
    EXPECT_THROW(op_msg_body(shorter), ProtocolError) << "cut " << cut;
  }
  // The kind byte alone at the end.
  auto bare = Frame{}.document_section(0, find_body()).finish();
  bare.push_back(3);
  store_le32(bare.data(), static_cast<int32_t>(bare.size()));
  EXPECT_NE(error_of(bare), "ok");
}

TEST(OpMsgTraceContext, MalformedTraceContextDocumentIsAProtocolError) {
  auto message = Frame{}.document_section(0, find_body()).document_section(3, trace()).finish();
  // The type byte of the first element ("otel", a document) made a string whose length
  // overruns the document: framing holds, the element walk does not.
  const size_t at = message.size() - trace().view().size + 4;
  ASSERT_EQ(message[at], 0x03);
  message[at] = 0x02;
  EXPECT_EQ(error_of(message).substr(0, 8), "bad_bson");
}

TEST(OpMsgTraceContext, OtherUnknownKindsStayProtocolErrors) {
  const auto message =
      Frame{}.document_section(0, find_body()).document_section(4, trace()).finish();
  EXPECT_EQ(error_of(message), "bad_op_msg: OP_MSG has unknown section kind 4");
}

TEST(OpMsgTraceContext, BuilderWritesTheSectionBack) {
  const auto original =
      Frame{}.document_section(0, find_body()).document_section(3, trace()).finish();
  const OpMsg msg = OpMsg::parse(original);
  const auto rebuilt =
      OpMsgBuilder(9, 0).body(msg.body.bytes()).trace_context(msg.trace_context).finish();
  EXPECT_EQ(rebuilt, original);
  EXPECT_EQ(OpMsgBuilder(9, 0).body(msg.body.bytes()).trace_context({}).finish().size(),
            original.size() - 1 - trace().view().size);
}

}  // namespace
}  // namespace docguard::codec
