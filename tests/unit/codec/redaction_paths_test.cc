// The user's own fields (`recording.redact.fields`) under every spelling of a path the server
// accepts: positional parts (`.0.`, `$`, `$[]`, `$[id]` with arrayFilters), update operators
// ($set, $push with $each, $addToSet, $pull, $setOnInsert, $inc, ...), query operators
// ($elemMatch, $in, $and, ...) in filters and pipelines, dotted and nested. The property test
// generates these forms at random and checks the planted value never reaches the bytes.
#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "docguard/codec/op_msg.h"
#include "docguard/codec/recording_redaction.h"
#include "test_messages.h"

namespace docguard::codec {
namespace {

using testing::leaks;

using testing::op_msg;

RedactionPolicy card_policy() {
  RedactionPolicy policy;
  policy.fields = {"ssn", "cards.number"};
  return policy;
}

RecordableMessage request(const std::string& body, const RedactionPolicy& policy) {
  return redact_request(op_msg(body.c_str()), kDefaultMaxMessageBytes, policy);
}

std::string update_of(const std::string& u, const std::string& extra = "") {
  return R"({"update": "people", "updates": [{"q": {"_id": 1}, "u": )" + u + extra +
         R"(}], "$db": "shop"})";
}

// The attacker's probes, each as the server takes it.
TEST(RedactionPaths, EveryOperatorSpellingOfARedactedFieldIsRedacted) {
  const RedactionPolicy policy = card_policy();
  const std::vector<std::string> probes = {
      update_of(R"({"$set": {"cards.0.number": "P-POSITION", "brand": "KEPT"}})"),
      update_of(R"({"$set": {"cards.$.number": "P-DOLLAR", "brand": "KEPT"}})"),
      update_of(R"({"$set": {"cards.$[].number": "P-ALL", "brand": "KEPT"}})"),
      update_of(R"({"$set": {"cards.$[c].number": "P-FILTERED", "brand": "KEPT"}})",
                R"(, "arrayFilters": [{"c.number": "P-ARRAYFILTER"}])"),
      update_of(
          R"({"$push": {"cards": {"$each": [{"number": "P-EACH"}]}}, "$set": {"brand": "KEPT"}})"),
      update_of(R"({"$addToSet": {"cards": {"number": "P-ADDTOSET"}}, "$set": {"brand": "KEPT"}})"),
      update_of(
          R"({"$pull": {"cards": {"number": {"$in": ["P-PULL"]}}}, "$set": {"brand": "KEPT"}})"),
      update_of(R"({"$setOnInsert": {"cards.1.number": "P-ONINSERT", "brand": "KEPT"}})"),
      update_of(R"({"$inc": {"cards.$.number": "P-INC"}, "$set": {"brand": "KEPT"}})"),
      R"({"find": "people", "filter": {"cards": {"$elemMatch": {"number": "P-ELEMMATCH"}},
          "brand": "KEPT"}, "$db": "shop"})",
      R"({"aggregate": "people", "pipeline": [{"$match": {"$or": [{"cards.number": "P-MATCH"},
          {"brand": "KEPT"}]}}], "cursor": {}, "$db": "shop"})",
      R"({"findAndModify": "people", "query": {"cards": {"$elemMatch": {"number": "P-FAMQ"}}},
          "update": {"$set": {"cards.$[k].number": "P-FAMU", "brand": "KEPT"}},
          "arrayFilters": [{"k.number": {"$eq": "P-FAMF"}}], "$db": "shop"})",
      R"({"delete": "people", "deletes": [{"q": {"ssn": {"$in": ["P-SSN"]}, "brand": "KEPT"},
          "limit": 1}], "$db": "shop"})",
      update_of(R"({"$set": {"profile.0.ssn": "P-SSN-DEEP", "brand": "KEPT"}})")};
  for (const std::string& body : probes) {
    const auto out = request(body, policy);
    EXPECT_FALSE(out.marker) << body;
    EXPECT_TRUE(leaks(out, "KEPT")) << body;  // what no rule names stays
    for (size_t at = body.find("\"P-"); at != std::string::npos; at = body.find("\"P-", at + 1)) {
      const std::string planted = body.substr(at + 1, body.find('"', at + 1) - at - 1);
      EXPECT_FALSE(leaks(out, planted)) << planted << " in " << body;
    }
  }
}

// An arrayFilters identifier is resolved to the array its $[id] names in the same statement:
// another array's filter keeps its value; an identifier no update names is redacted whatever
// follows it could be.
TEST(RedactionPaths, ArrayFilterIdentifiersAreResolvedWithinTheirStatement) {
  const RedactionPolicy policy = card_policy();
  const auto other = request(update_of(R"({"$set": {"items.$[i].number": 1}})",
                                       R"(, "arrayFilters": [{"i.number": "OTHER-ARRAY"}])"),
                             policy);
  EXPECT_TRUE(leaks(other, "OTHER-ARRAY"));
  const auto unnamed = request(
      update_of(R"({"$set": {"brand": "x"}})", R"(, "arrayFilters": [{"z.number": "UNNAMED"}])"),
      policy);
  EXPECT_FALSE(leaks(unnamed, "UNNAMED"));
  const auto whole = request(update_of(R"({"$set": {"tags.$[t]": 1}})",
                                       R"(, "arrayFilters": [{"t": {"$in": ["WHOLE"]}}])"),
                             policy);
  EXPECT_TRUE(leaks(whole, "WHOLE"));  // `t` is a tag: no field the policy names
  const auto nested =
      request(update_of(R"({"$set": {"cards.$[c].number": 1}})",
                        R"(, "arrayFilters": [{"$or": [{"c": {"number": "NESTED"}}]}])"),
              policy);
  EXPECT_FALSE(leaks(nested, "NESTED"));
}

// Random spellings of each redacted field's path: dotted or nested parts, positional parts
// between them, arrays and $elemMatch / $each between levels, operators around the value.
class PathSpeller {
 public:
  explicit PathSpeller(uint32_t seed) : random_(seed) {}

  size_t pick(size_t n) { return random_() % n; }

  // The field's parts spelled as a document member ("key": value) holding `value`; `query`
  // for a filter's syntax, else an update's. Sets `identifier` when a $[c] was used.
  std::string member(const std::vector<std::string>& parts, const std::string& value, bool query,
                     bool* identifier) {
    std::vector<std::string> tokens;
    if (pick(3) == 0) tokens.push_back(pick(2) == 0 ? "outer" : "outer.2");
    for (size_t i = 0; i < parts.size(); ++i) {
      tokens.push_back(parts[i]);
      const bool last = i + 1 == parts.size();
      if (last || query || pick(2) == 0) continue;
      const char* positional[] = {"0", "$", "$[]", "$[c]"};
      const std::string p = positional[pick(*identifier ? 3 : 4)];
      if (p == "$[c]") *identifier = true;
      tokens.push_back(p);
    }
    return spell(tokens, 0, value, query);
  }

 private:
  // Tokens from `from` on, as `"a.b": {"c": ...}` with random cuts between dotted and nested.
  std::string spell(const std::vector<std::string>& tokens, size_t from, const std::string& value,
                    bool query) {
    size_t to = from + 1;
    while (to < tokens.size() && pick(2) == 0) ++to;
    std::string key;
    for (size_t i = from; i < to; ++i) key += (i == from ? "" : ".") + tokens[i];
    if (to == tokens.size()) return "\"" + key + "\": " + value;
    std::string inner = "{" + spell(tokens, to, value, query) + "}";
    if (query) {
      if (pick(2) == 0) inner = R"({"$elemMatch": )" + inner + "}";
    } else if (pick(3) == 0 && tokens[to][0] != '$' && tokens[to][0] != '0') {
      inner = "[" + inner + "]";
    }
    return "\"" + key + "\": " + inner;
  }

  std::mt19937 random_;
};

TEST(RedactionPaths, PlantedValuesNeverSurviveAnySpelling) {
  const RedactionPolicy policy = card_policy();
  const std::vector<std::vector<std::string>> fields = {{"ssn"}, {"cards", "number"}};
  PathSpeller speller(20261207);
  for (int round = 0; round < 2000; ++round) {
    const std::string secret = "PLANT" + std::to_string(round) + "X";
    const std::string filtered = "FILTER" + std::to_string(round) + "X";
    const auto& parts = fields[speller.pick(fields.size())];
    const char* values[] = {"\"S\"", R"({"$in": ["S"]})", R"({"$eq": "S"})", R"({"$each": ["S"]})"};
    std::string value = values[speller.pick(4)];
    value.replace(value.find('S'), 1, secret);
    const bool query = speller.pick(3) == 0;
    bool identifier = false;
    std::string member = speller.member(parts, value, query, &identifier);
    if (query && speller.pick(2) == 0) member = R"("$and": [{)" + member + "}]";
    std::string body;
    if (query) {
      const char* shapes[] = {
          R"({"find": "p", "filter": {@M@, "brand": "KEPT"}, "$db": "d"})",
          R"({"aggregate": "p", "pipeline": [{"$match": {@M@}}], "cursor": {}, "$db": "d"})",
          R"({"delete": "p", "deletes": [{"q": {@M@}, "limit": 0}], "$db": "d"})"};
      body = shapes[speller.pick(3)];
    } else {
      const char* operators[] = {"$set",      "$setOnInsert", "$inc", "$push",
                                 "$addToSet", "$pull",        "$max"};
      const std::string op = operators[speller.pick(7)];
      std::string filters;
      if (identifier) {
        // `c` stands for the elements of the array before it: the rest of the field after it.
        const std::string rest = parts.size() > 1 ? ".number" : ".ssn";
        filters = speller.pick(2) == 0
                      ? R"(, "arrayFilters": [{"c)" + rest + R"(": ")" + filtered + "\"}]"
                      : R"(, "arrayFilters": [{"$or": [{"c": {")" + rest.substr(1) +
                            R"(": {"$in": [")" + filtered + "\"]}}}]}]";
      }
      body = speller.pick(2) == 0
                 ? R"({"update": "p", "updates": [{"q": {}, "u": {")" + op + R"(": {@M@}}@F@}],
                      "$db": "d"})"
                 : R"({"findAndModify": "p", "query": {}, "update": {")" + op +
                       R"(": {@M@}}@F@, "$db": "d"})";
      body.replace(body.find("@F@"), 3, filters);
    }
    body.replace(body.find("@M@"), 3, member);
    const auto out = request(body, policy);
    ASSERT_FALSE(out.marker) << body;
    ASSERT_FALSE(leaks(out, secret)) << body;
    ASSERT_FALSE(leaks(out, filtered)) << body;
  }
}

TEST(RedactionPaths, TheClusterTimeKeysAndStagedUsersAreSecretNamespacesInAnyCase) {
  for (
      const char* body :
      {R"({"find": "system.keys", "filter": {"purpose": "HMAC"}, "$db": "admin"})",
       R"({"find": "System.Keys", "filter": {"purpose": "HMAC"}, "$db": "ADMIN"})",
       R"({"find": "external_validation_keys", "filter": {"purpose": "HMAC"}, "$db": "config"})",
       R"({"find": "system.external_validation_keys", "filter": {"purpose": "HMAC"}, "$db": "admin"})",
       R"({"insert": "system.new_users", "documents": [{"purpose": "HMAC"}], "$db": "admin"})",
       R"({"insert": "system.backup_users", "documents": [{"purpose": "HMAC"}], "$db": "admin"})",
       R"({"find": "SYSTEM.USERS", "filter": {"purpose": "HMAC"}, "$db": "shop"})"}) {
    const auto out = redact_request(op_msg(body), kDefaultMaxMessageBytes);
    EXPECT_TRUE(out.sensitive) << body;
    EXPECT_FALSE(leaks(out, "HMAC")) << body;
  }
  // A reply whose cursor names the keys' collection keeps its ids, not the keys.
  const auto reply = redact_reply(
      OpMsgBuilder(2, 1)
          .body(testing::json(R"({"cursor": {"id": 0, "ns": "admin.system.keys", "firstBatch":
                 [{"purpose": "HMAC", "key": {"$binary": {"base64": "S0VZLUJZVEVT", "subType": "00"}}}]},
                 "ok": 1})")
                    .get())
          .finish(),
      false, kDefaultMaxMessageBytes);
  EXPECT_FALSE(leaks(reply, "HMAC"));
  EXPECT_FALSE(leaks(reply, "KEY-BYTES"));
  EXPECT_TRUE(leaks(reply, "admin.system.keys"));
}

}  // namespace
}  // namespace docguard::codec

namespace docguard::codec {
namespace {

// The recording's memory of sensitive cursors is bounded: past its limit every getMore and
// killCursors is taken for a sensitive one, rather than one being let through.
TEST(SensitiveCursorMemory, PastItsLimitEveryCursorIsSensitive) {
  SensitiveCursors cursors(2);
  const auto get_more = [&](int64_t id) {
    const std::string body =
        R"({"getMore": {"$numberLong": ")" + std::to_string(id) + R"("}, "collection": "c",
            "$db": "d"})";
    return redact_request(op_msg(body.c_str()), kDefaultMaxMessageBytes, default_redaction_policy(),
                          &cursors);
  };
  const auto opened = [&](int64_t id) {
    const std::string body = R"({"cursor": {"id": {"$numberLong": ")" + std::to_string(id) +
                             R"("}, "ns": "d.c", "firstBatch": []}, "ok": 1})";
    return redact_reply(OpMsgBuilder(2, 1).body(testing::json(body.c_str()).get()).finish(),
                        /*to_sensitive=*/true, kDefaultMaxMessageBytes, default_redaction_policy(),
                        &cursors);
  };
  opened(5);
  opened(6);
  EXPECT_TRUE(get_more(5).sensitive);
  EXPECT_EQ(get_more(5).cursor, 5);
  EXPECT_FALSE(get_more(9).sensitive);
  EXPECT_FALSE(cursors.overflowed());
  opened(7);  // the third: past the limit
  EXPECT_TRUE(cursors.overflowed());
  EXPECT_TRUE(get_more(9).sensitive);
  EXPECT_TRUE(get_more(5).sensitive);
  const auto killed = redact_request(
      op_msg(R"({"killCursors": "c", "cursors": [{"$numberLong": "12"}], "$db": "d"})"),
      kDefaultMaxMessageBytes, default_redaction_policy(), &cursors);
  EXPECT_TRUE(killed.sensitive);
}

}  // namespace
}  // namespace docguard::codec
