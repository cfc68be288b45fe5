// Requests that reach a secret without naming it where the key-by-key redaction looks: a listed
// field's value computed, bound or returned under another name (aggregation paths, variables,
// JavaScript, distinct), a view over a secret namespace, an explain of a command on one. Each
// is sensitive: the request keeps its envelope only, its reply its status only.
#include <gtest/gtest.h>

#include <span>
#include <string>
#include <vector>

#include "docguard/codec/op_msg.h"
#include "docguard/codec/recording_redaction.h"
#include "test_messages.h"

namespace docguard::codec {
namespace {

using testing::leaks;

using testing::json;
using testing::op_msg;

RedactionPolicy fields_policy() {
  RedactionPolicy policy;
  policy.fields = {"ssn", "cards.number"};
  return policy;
}

TEST(RedactionReferences, AListedFieldReachedThroughAnExpressionIsSensitive) {
  const RedactionPolicy policy = fields_policy();
  for (
      const char* body : {
          R"({"find": "p", "filter": {"$expr": {"$eq": ["$ssn", "PLANT17"]}}, "$db": "shop"})",
          R"({"find": "p", "filter": {"$expr": {"$in": ["PLANT17", "$cards.number"]}}, "$db": "shop"})",
          R"({"aggregate": "p", "pipeline": [{"$lookup": {"from": "q", "let": {"s": "$ssn"}, "pipeline": [{"$match": {"$expr": {"$eq": ["$$s", "PLANT17"]}}}], "as": "j"}}], "cursor": {}, "$db": "shop"})",
          R"({"update": "p", "updates": [{"q": {}, "c": {"v": "PLANT17"}, "u": [{"$set": {"ssn": "$$v"}}]}], "$db": "shop"})",
          R"({"find": "p", "filter": {"ssn": {"$exists": true}}, "let": {"v": "PLANT17"}, "$db": "shop"})",
          R"({"find": "p", "filter": {"$expr": {"$regexMatch": {"input": "$ssn", "regex": "PLANT17"}}}, "$db": "shop"})",
          R"({"find": "p", "filter": {"$expr": {"$eq": ["$$ROOT.ssn", "PLANT17"]}}, "$db": "shop"})",
          R"({"find": "p", "filter": {"$expr": {"$eq": ["$$CURRENT.ssn", "PLANT17"]}}, "$db": "shop"})",
          R"({"find": "p", "filter": {"$expr": {"$eq": [{"$getField": "ssn"}, "PLANT17"]}}, "$db": "shop"})",
          R"({"find": "p", "filter": {"$expr": {"$eq": [{"$getField": {"field": "ssn", "input": "$$ROOT"}}, "PLANT17"]}}, "$db": "shop"})",
          R"({"aggregate": "p", "pipeline": [{"$replaceWith": {"$setField": {"field": "ssn", "input": {}, "value": "PLANT17"}}}], "cursor": {}, "$db": "shop"})",
          R"({"find": "p", "filter": {"$where": "this.x == 'PLANT17'"}, "$db": "shop"})",
          R"({"find": "p", "filter": {"$expr": {"$function": {"body": "function(){return 'PLANT17'}", "args": [], "lang": "js"}}}, "$db": "shop"})",
          R"({"aggregate": "p", "pipeline": [{"$project": {"o": {"$objectToArray": "$$ROOT"}, "k": "PLANT17"}}], "cursor": {}, "$db": "shop"})",
          R"({"aggregate": "p", "pipeline": [{"$unwind": "$cards"}, {"$match": {"$expr": {"$eq": ["$cards", "PLANT17"]}}}], "cursor": {}, "$db": "shop"})",
      }) {
    const auto out = redact_request(op_msg(body), kDefaultMaxMessageBytes, policy);
    EXPECT_TRUE(out.sensitive) << body;
    EXPECT_FALSE(leaks(out, "PLANT17")) << body;
  }
}

// The driver sends an update's statements as a document sequence, apart from the body's `let`.
TEST(RedactionReferences, VariablesBoundInTheBodyAndUsedInASequenceAreSeen) {
  const RedactionPolicy policy = fields_policy();
  const auto statement = json(R"({"q": {"_id": 0}, "u": [{"$set": {"ssn": "$$v"}}]})");
  const std::vector<BsonView> statements = {
      BsonView{bson_get_data(statement.get()), statement.get()->len}};
  const auto message =
      OpMsgBuilder(7, 0)
          .body(json(R"({"update": "p", "let": {"v": "SEQ-SECRET"}, "$db": "shop"})").get())
          .sequence("updates", std::span<const BsonView>(statements))
          .finish();
  const auto out = redact_request(message, kDefaultMaxMessageBytes, policy);
  EXPECT_TRUE(out.sensitive);
  EXPECT_FALSE(leaks(out, "SEQ-SECRET"));
}

TEST(RedactionReferences, ARequestReturningAListedFieldUnderAnotherNameHasItsReplyKeptToStatus) {
  const RedactionPolicy policy = fields_policy();
  for (
      const char* body : {
          R"({"distinct": "p", "key": "ssn", "$db": "shop"})",
          R"({"distinct": "p", "key": "cards.number", "$db": "shop"})",
          R"({"aggregate": "p", "pipeline": [{"$group": {"_id": "$ssn"}}], "cursor": {}, "$db": "shop"})",
          R"({"aggregate": "p", "pipeline": [{"$project": {"x": "$ssn"}}], "cursor": {}, "$db": "shop"})",
          R"({"aggregate": "p", "pipeline": [{"$sortByCount": "$ssn"}], "cursor": {}, "$db": "shop"})",
          R"({"aggregate": "p", "pipeline": [{"$group": {"_id": null, "all": {"$push": "$ssn"}}}], "cursor": {}, "$db": "shop"})",
      }) {
    EXPECT_TRUE(redact_request(op_msg(body), kDefaultMaxMessageBytes, policy).sensitive) << body;
  }
  const auto reply = redact_reply(
      OpMsgBuilder(100, 1).body(json(R"({"values": ["REPLY-SSN"], "ok": 1})").get()).finish(),
      /*to_sensitive=*/true, kDefaultMaxMessageBytes, policy);
  EXPECT_FALSE(leaks(reply, "REPLY-SSN"));
}

TEST(RedactionReferences, RequestsThatNameNoListedFieldStayAsTheyAre) {
  const RedactionPolicy policy = fields_policy();
  for (
      const char* body : {
          R"({"find": "p", "filter": {"$expr": {"$eq": ["$name", "KEPT"]}}, "$db": "shop"})",
          R"({"aggregate": "p", "pipeline": [{"$match": {"city": "KEPT"}}, {"$group": {"_id": "$city", "n": {"$sum": 1}}}], "cursor": {}, "$db": "shop"})",
          R"({"find": "p", "filter": {"name": "KEPT"}, "let": {"v": "KEPT"}, "$db": "shop"})",
          R"({"distinct": "p", "key": "city", "query": {"name": "KEPT"}, "$db": "shop"})",
      }) {
    const auto out = redact_request(op_msg(body), kDefaultMaxMessageBytes, policy);
    EXPECT_FALSE(out.sensitive) << body;
    EXPECT_TRUE(leaks(out, "KEPT")) << body;
  }
  // Without listed fields, nothing of this rule applies.
  const auto plain = redact_request(
      op_msg(R"({"find": "p", "filter": {"$expr": {"$eq": ["$ssn", "KEPT"]}}, "$db": "shop"})"),
      kDefaultMaxMessageBytes);
  EXPECT_FALSE(plain.sensitive);
}

TEST(RedactionReferences, AViewOverASecretNamespaceIsSensitive) {
  for (
      const char* body : {
          R"({"create": "v", "viewOn": "system.users", "pipeline": [{"$match": {"x": "VIEW-SECRET"}}], "$db": "admin"})",
          R"({"create": "kv", "viewOn": "__keyVault", "pipeline": [{"$match": {"x": "VIEW-SECRET"}}], "$db": "encryption"})",
          R"({"collMod": "v", "viewOn": "system.users", "pipeline": [{"$match": {"x": "VIEW-SECRET"}}], "$db": "admin"})",
      }) {
    const auto out = redact_request(op_msg(body), kDefaultMaxMessageBytes);
    EXPECT_TRUE(out.sensitive) << body;
    EXPECT_FALSE(leaks(out, "VIEW-SECRET")) << body;
  }
  EXPECT_FALSE(redact_request(
                   op_msg(R"({"create": "v", "viewOn": "orders", "pipeline": [], "$db": "shop"})"),
                   kDefaultMaxMessageBytes)
                   .sensitive);
}

TEST(RedactionReferences, AnExplainOfACommandOnASecretNamespaceIsSensitive) {
  for (
      const char* body : {
          R"({"explain": {"find": "system.users", "filter": {"user": "EXPLAIN-SECRET"}}, "$db": "admin"})",
          R"({"explain": {"aggregate": "system.users", "pipeline": [{"$match": {"user": "EXPLAIN-SECRET"}}], "cursor": {}}, "$db": "admin"})",
          R"({"explain": {"count": "system.roles", "query": {"role": "EXPLAIN-SECRET"}}, "$db": "admin"})",
          R"({"explain": {"distinct": "__keyVault", "key": "k", "query": {"x": "EXPLAIN-SECRET"}}, "$db": "encryption"})",
          R"({"explain": {"delete": "system.users", "deletes": [{"q": {"user": "EXPLAIN-SECRET"}, "limit": 0}]}, "verbosity": "queryPlanner", "$db": "admin"})",
      }) {
    const auto out = redact_request(op_msg(body), kDefaultMaxMessageBytes);
    EXPECT_TRUE(out.sensitive) << body;
    EXPECT_FALSE(leaks(out, "EXPLAIN-SECRET")) << body;
  }
  EXPECT_FALSE(redact_request(op_msg(R"({"explain": {"find": "orders"}, "$db": "shop"})"),
                              kDefaultMaxMessageBytes)
                   .sensitive);
}

}  // namespace
}  // namespace docguard::codec
