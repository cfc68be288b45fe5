#include "docguard/recording/recorded_shape.h"

#include <string_view>

#include "docguard/codec/bson_elements.h"
#include "docguard/codec/bson_view.h"
#include "docguard/codec/command_view.h"
#include "docguard/codec/op_msg.h"
#include "docguard/codec/op_query.h"
#include "docguard/codec/request_identity.h"
#include "docguard/rules/query_guardrail.h"

namespace docguard::recording {

namespace {

// Whether the command returns its documents in an order it asked for: a find with a sort, an
// aggregation with a $sort stage. Other reads may come back in any order.
bool command_sorts(const codec::CommandView& cmd) {
  if (cmd.kind == codec::CommandKind::kFind) return !cmd.sort.empty() && cmd.sort.size > 5;
  if (cmd.kind != codec::CommandKind::kAggregate || cmd.pipeline.empty()) return false;
  for (codec::BsonElements stage(cmd.pipeline); stage.next();) {
    if (!stage.holds_document()) continue;
    if (codec::first_key_of(stage) == "$sort") return true;
  }
  return false;
}

std::string command_shape_text(const codec::CommandView& cmd) {
  std::string text;
  switch (cmd.kind) {
    case codec::CommandKind::kFind:
    case codec::CommandKind::kAggregate:
    case codec::CommandKind::kCount:
    case codec::CommandKind::kDistinct:
    case codec::CommandKind::kFindAndModify:
      rules::append_shape_text(text, rules::query_parts(cmd));
      break;
    case codec::CommandKind::kUpdate:
    case codec::CommandKind::kDelete:
      // A batch of statements is named by its first: most batches repeat one shape.
      if (!cmd.statements.empty()) {
        rules::append_shape_text(text, rules::statement_parts(cmd.statements[0]));
      }
      break;
    default:
      break;
  }
  return text;
}

}  // namespace

RequestShape shape_of_request(codec::Bytes message) {
  RequestShape shape;
  shape.text = "(unparsed request)";
  if (message.size() < codec::kHeaderSize) return shape;
  try {
    const codec::MsgHeader header = codec::read_header(message.data());
    if (header.op_code == codec::OpCode::kQuery) {
      const codec::OpQuery query = codec::OpQuery::parse(message);
      const std::string_view ns = query.full_collection_name;
      shape.ns = std::string(ns.substr(0, ns.find('.')));
      shape.text = std::string(codec::first_key(codec::legacy_command_document(query.query))) +
                   " " + shape.ns;
      return shape;
    }
    if (header.op_code != codec::OpCode::kMsg) return shape;
    const codec::OpMsg msg = codec::OpMsg::parse(message, /*verify_checksum=*/false);
    const codec::CommandView cmd = codec::describe(msg);
    shape.ns = std::string(cmd.database);
    if (!cmd.collection.empty()) shape.ns += "." + std::string(cmd.collection);
    shape.text = std::string(cmd.name) + " " + shape.ns;
    const std::string query = command_shape_text(cmd);
    if (!query.empty()) shape.text += " " + query;
    shape.sorted = command_sorts(cmd);
  } catch (const codec::ProtocolError&) {
    shape.text = "(unparsed request)";
  }
  return shape;
}

}  // namespace docguard::recording
