// What a reply kept to its status holds, and what the server's error texts may keep in an
// ordinary reply. The replies are written from the server's own texts (its duplicate-key
// message, "E11000 duplicate key error collection: <ns> index: <name> dup key: { <field>: <value>
// }", with keyPattern and keyValue beside it; its path-creation error, "Cannot create field '<f>'
// in element {<element>}"; a validation failure's errInfo): FerretDB words its errors differently
// or does not produce them.
#include <gtest/gtest.h>

#include <string>

#include "docguard/codec/op_msg.h"
#include "docguard/codec/recording_redaction.h"
#include "test_messages.h"

namespace docguard::codec {
namespace {

bool holds(const RecordableMessage& out, const std::string& text) {
  return std::string(out.bytes.begin(), out.bytes.end()).find(text) != std::string::npos;
}

RecordableMessage reply(const char* body, bool to_sensitive, const RedactionPolicy& policy) {
  return redact_reply(OpMsgBuilder(9, 1).body(testing::json(body).get()).finish(), to_sensitive,
                      kDefaultMaxMessageBytes, policy);
}

constexpr const char* kDuplicateKey = R"({"n": 0, "writeErrors": [{"index": 0, "code": 11000,
    "codeName": "DuplicateKey", "errmsg": "E11000 duplicate key error collection: shop.people index: cards.number_1 dup key: { cards.number: \"DUP-HIDDEN\" }", "keyPattern": {"cards.number": 1},
    "keyValue": {"cards.number": "DUP-HIDDEN"}}],
    "writeConcernError": {"code": 64, "codeName": "WriteConcernFailed",
      "errmsg": "waiting for replication timed out", "errInfo": {"wtimeout": true}}, "ok": 1})";
constexpr const char* kCannotCreate = R"({"ok": 0, "code": 28, "codeName": "PathNotViable",
    "errmsg": "Cannot create field 'number' in element {cards: \"ELEMENT-HIDDEN\"}"})";
constexpr const char* kValidation = R"({"n": 0, "writeErrors": [{"index": 3, "code": 121,
    "codeName": "DocumentValidationFailure", "errmsg": "Document failed validation",
    "errInfo": {"failingDocumentId": 1, "details": {"operatorName": "$jsonSchema",
      "schemaRulesNotSatisfied": [{"operatorName": "properties", "propertiesNotSatisfied":
        [{"propertyName": "pin", "details": [{"consideredValue": "VALIDATION-HIDDEN"}]}]}]}}}],
    "ok": 1})";

TEST(StatusReply, KeepsCodesAndCountsAndNoTextThatQuotesAValue) {
  RedactionPolicy status_only;
  status_only.reply_documents = false;
  for (const bool sensitive : {false, true}) {
    const RedactionPolicy& policy = sensitive ? default_redaction_policy() : status_only;
    const auto duplicate = reply(kDuplicateKey, sensitive, policy);
    EXPECT_FALSE(holds(duplicate, "DUP-HIDDEN"));
    EXPECT_FALSE(holds(duplicate, "E11000"));  // the errmsg, whole
    EXPECT_TRUE(holds(duplicate, "DuplicateKey"));
    EXPECT_TRUE(holds(duplicate, "WriteConcernFailed"));
    EXPECT_TRUE(holds(duplicate, "writeErrors"));
    EXPECT_TRUE(holds(duplicate, "index"));
    const auto cannot = reply(kCannotCreate, sensitive, policy);
    EXPECT_FALSE(holds(cannot, "ELEMENT-HIDDEN"));
    EXPECT_TRUE(holds(cannot, "PathNotViable"));
    const auto invalid = reply(kValidation, sensitive, policy);
    EXPECT_FALSE(holds(invalid, "VALIDATION-HIDDEN"));
    EXPECT_TRUE(holds(invalid, "DocumentValidationFailure"));
  }
}

TEST(StatusReply, ACursorKeepsItsIdAndNamespaceOnly) {
  RedactionPolicy status_only;
  status_only.reply_documents = false;
  const auto out = reply(R"({"cursor": {"id": {"$numberLong": "77"}, "ns": "shop.people",
      "firstBatch": [{"name": "BATCH-VALUE"}], "postBatchResumeToken": {"_id": "TOKEN"}},
      "errorLabels": ["TransientTransactionError"], "ok": 1})",
                         false, status_only);
  EXPECT_FALSE(holds(out, "BATCH-VALUE"));
  EXPECT_FALSE(holds(out, "TOKEN"));
  EXPECT_TRUE(holds(out, "shop.people"));
  EXPECT_TRUE(holds(out, "TransientTransactionError"));
}

// In an ordinary reply: where the policy names fields, no errmsg survives (any of them may be
// quoted); without, an errmsg that names a secret field goes, another stays. errInfo always goes.
TEST(StatusReply, ErrorTextsInOrdinaryReplies) {
  RedactionPolicy fields;
  fields.fields = {"cards.number"};
  const auto named = reply(kDuplicateKey, false, fields);
  EXPECT_FALSE(holds(named, "DUP-HIDDEN"));
  EXPECT_TRUE(holds(named, "keyPattern"));
  const auto cannot = reply(kCannotCreate, false, fields);
  EXPECT_FALSE(holds(cannot, "ELEMENT-HIDDEN"));
  const auto plain = reply(kDuplicateKey, false, default_redaction_policy());
  EXPECT_TRUE(holds(plain, "E11000"));  // nothing names the field: the design under judgement
  const auto password = reply(R"({"n": 0, "writeErrors": [{"index": 0, "code": 11000,
      "errmsg": "E11000 duplicate key error collection: shop.accounts index: passwordHash_1 dup key: { passwordHash: \"HASH-HIDDEN\" }", "keyValue": {"passwordHash": "HASH-HIDDEN"}}], "ok": 1})",
                              false, default_redaction_policy());
  EXPECT_FALSE(holds(password, "HASH-HIDDEN"));
  const auto invalid = reply(kValidation, false, default_redaction_policy());
  EXPECT_FALSE(holds(invalid, "VALIDATION-HIDDEN"));
  EXPECT_TRUE(holds(invalid, "Document failed validation"));
}

}  // namespace
}  // namespace docguard::codec
