// A request as an example in the report. Recorded traffic holds customers' data, so a report
// shows the command's structure with every scalar value replaced by the name of its type
// ("<string>", "<int32>"), unless --show-values asks for the values.
#include <bson/bson.h>

#include "docguard/codec/bson_elements.h"
#include "docguard/codec/bson_view.h"
#include "docguard/codec/op_msg.h"
#include "docguard/tools/document_example.h"
#include "whatif/whatif_judgement.h"

namespace docguard::tools::whatif {

using codec::BsonElements;

namespace {

constexpr size_t kMaxExampleChars = 2000;
constexpr int kMaxDepth = 100;

// Fields of a command that say nothing about what it does.
bool is_noise(std::string_view key) {
  return key == "lsid" || key == "$clusterTime" || key == "txnNumber" || key == "$readPreference";
}

const char* type_name(bson_type_t type) {
  switch (type) {
    case BSON_TYPE_DOUBLE:
      return "<double>";
    case BSON_TYPE_UTF8:
      return "<string>";
    case BSON_TYPE_BINARY:
      return "<binData>";
    case BSON_TYPE_OID:
      return "<objectId>";
    case BSON_TYPE_BOOL:
      return "<bool>";
    case BSON_TYPE_DATE_TIME:
      return "<date>";
    case BSON_TYPE_NULL:
      return "<null>";
    case BSON_TYPE_REGEX:
      return "<regex>";
    case BSON_TYPE_INT32:
      return "<int32>";
    case BSON_TYPE_TIMESTAMP:
      return "<timestamp>";
    case BSON_TYPE_INT64:
      return "<int64>";
    case BSON_TYPE_DECIMAL128:
      return "<decimal>";
    default:
      return "<value>";
  }
}

// Copies `from` into `to`, scalars replaced by their type's name. Documents and arrays keep
// their keys: field names are the design under judgement, not the data.
void redact_into(const codec::BsonView& doc, bson_t* to, int depth) {
  bool first = true;
  for (BsonElements from(doc); from.next();) {
    const bool command_name = depth == 0 && first;
    first = false;
    const std::string_view key = from.key;
    if (depth == 0 && is_noise(key)) continue;
    if (codec::is_container(from.type) && depth < kMaxDepth) {
      bson_t sub;
      const bool array = from.holds_array();
      const int key_size = static_cast<int>(key.size());
      if (array) {
        bson_append_array_begin(to, key.data(), key_size, &sub);
      } else {
        bson_append_document_begin(to, key.data(), key_size, &sub);
      }
      redact_into(from.container(), &sub, depth + 1);
      if (array) {
        bson_append_array_end(to, &sub);
      } else {
        bson_append_document_end(to, &sub);
      }
    } else if (command_name || (depth == 0 && key == "$db")) {
      from.append_to(to, key);  // the collection and database: not data
    } else {
      bson_append_utf8(to, key.data(), static_cast<int>(key.size()),
                       type_name(static_cast<bson_type_t>(from.type)), -1);
    }
  }
}

void copy_into(const codec::BsonView& doc, bson_t* to) {
  for (BsonElements from(doc); from.next();) {
    if (!is_noise(from.key)) from.append_to(to, from.key);
  }
}

}  // namespace

}  // namespace docguard::tools::whatif

namespace docguard::tools {

std::string document_example(const codec::BsonView& doc, bool show_values, size_t max_chars) {
  if (doc.empty() || !codec::well_framed(doc)) return {};
  bson_t out = BSON_INITIALIZER;
  if (show_values) {
    for (codec::BsonElements from(doc); from.next();) from.append_to(&out, from.key);
  } else {
    whatif::redact_into(doc, &out, 1);  // depth 1: every value is data, none a command name
  }
  std::string text;
  size_t length = 0;
  char* json = bson_as_relaxed_extended_json(&out, &length);
  if (json != nullptr) text.assign(json, length);
  bson_free(json);
  bson_destroy(&out);
  if (text.size() > max_chars) {
    text.resize(max_chars);
    text += " ...";
  }
  return text;
}

}  // namespace docguard::tools

namespace docguard::tools::whatif {

std::string request_example(codec::Bytes message, bool show_values) {
  std::string text;
  try {
    const codec::OpMsg msg = codec::OpMsg::parse(message, /*verify_checksum=*/false);
    bson_t out = BSON_INITIALIZER;
    if (show_values) {
      copy_into(msg.body, &out);
    } else {
      redact_into(msg.body, &out, 0);
    }
    // Document sequences (an insert's documents) read as the arrays they stand for.
    for (const codec::DocumentSequence& sequence : msg.sequences) {
      const std::string key(sequence.identifier);
      bson_t array;
      bson_append_array_begin(&out, key.c_str(), -1, &array);
      uint32_t index = 0;
      for (const codec::BsonView& doc : sequence.documents) {
        const std::string position = std::to_string(index++);
        bson_t sub;
        bson_append_document_begin(&array, position.c_str(), -1, &sub);
        if (show_values) {
          copy_into(doc, &sub);
        } else {
          redact_into(doc, &sub, 1);
        }
        bson_append_document_end(&array, &sub);
      }
      bson_append_array_end(&out, &array);
    }
    size_t length = 0;
    char* json = bson_as_relaxed_extended_json(&out, &length);
    if (json != nullptr) text.assign(json, length);
    bson_free(json);
    bson_destroy(&out);
  } catch (const std::exception&) {
    return "<not an OP_MSG docguard could read>";
  }
  if (text.size() > kMaxExampleChars) {
    text.resize(kMaxExampleChars);
    text += " ...";
  }
  return text;
}

}  // namespace docguard::tools::whatif
