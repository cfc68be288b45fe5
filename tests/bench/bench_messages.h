// Messages and rule sets shared by the microbenchmarks and bench_one_insert.
#pragma once

#include <bson/bson.h>
#include <yaml-cpp/yaml.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "docguard/codec/bson_view.h"
#include "docguard/codec/command_view.h"
#include "docguard/codec/op_msg.h"
#include "docguard/rules/engine.h"
#include "docguard/rules/rule_set.h"
#include "docguard/settings/yaml_settings.h"

namespace docguard::bench {

// ~200-byte product document with a small array (the load generator sends the same shape).
inline codec::OwnedBson small_doc(int32_t i) {
  codec::OwnedBson d;
  bson_oid_t oid;
  bson_oid_init(&oid, nullptr);
  BSON_APPEND_OID(d.get(), "_id", &oid);
  BSON_APPEND_INT32(d.get(), "seq", i);
  BSON_APPEND_UTF8(d.get(), "name", "widget-standard-edition");
  BSON_APPEND_DOUBLE(d.get(), "price", 19.99);
  BSON_APPEND_INT32(d.get(), "qty", 42);
  bson_t arr;
  BSON_APPEND_ARRAY_BEGIN(d.get(), "tags", &arr);
  BSON_APPEND_UTF8(&arr, "0", "blue");
  BSON_APPEND_UTF8(&arr, "1", "small");
  BSON_APPEND_UTF8(&arr, "2", "sale");
  bson_append_array_end(d.get(), &arr);
  bson_t sub;
  BSON_APPEND_DOCUMENT_BEGIN(d.get(), "dims", &sub);
  BSON_APPEND_DOUBLE(&sub, "w", 1.5);
  BSON_APPEND_DOUBLE(&sub, "h", 2.5);
  bson_append_document_end(d.get(), &sub);
  BSON_APPEND_UTF8(d.get(), "descr", "a plain benchmark document of about two hundred bytes");
  return d;
}

// A document of about `bytes` bytes. structured: an array of arrays of small subdocuments
// (what rules must walk: many elements, no array longer than 2,000); else one binary blob.
inline codec::OwnedBson sized_doc(size_t bytes, bool structured) {
  codec::OwnedBson d;
  bson_oid_t oid;
  bson_oid_init(&oid, nullptr);
  BSON_APPEND_OID(d.get(), "_id", &oid);
  if (!structured) {
    std::vector<uint8_t> blob(bytes > 64 ? bytes - 64 : 1, 0xab);
    BSON_APPEND_BINARY(d.get(), "blob", BSON_SUBTYPE_BINARY, blob.data(),
                       static_cast<uint32_t>(blob.size()));
    return d;
  }
  // Built bottom-up (no open children), so sizes are known at each step.
  const std::string filler(80, 'x');
  bson_t outer = BSON_INITIALIZER;
  uint32_t oi = 0;
  while (d->len + outer.len + 4096 < bytes) {
    bson_t inner = BSON_INITIALIZER;
    for (uint32_t j = 0; j < 2000 && d->len + outer.len + inner.len + 256 < bytes; ++j) {
      char key[16];
      const char* kp;
      bson_uint32_to_string(j, &kp, key, sizeof key);
      bson_t el = BSON_INITIALIZER;
      BSON_APPEND_INT32(&el, "k", static_cast<int32_t>(j));
      BSON_APPEND_UTF8(&el, "s", filler.c_str());
      bson_append_document(&inner, kp, -1, &el);
      bson_destroy(&el);
    }
    char okey[16];
    const char* okp;
    bson_uint32_to_string(oi++, &okp, okey, sizeof okey);
    bson_append_array(&outer, okp, -1, &inner);
    bson_destroy(&inner);
  }
  bson_append_array(d.get(), "parts", -1, &outer);
  bson_destroy(&outer);
  return d;
}

// insert command as OP_MSG: documents in a kind-1 sequence (as drivers send them) or in the body.
inline std::vector<uint8_t> insert_message(const std::vector<codec::BsonView>& docs,
                                           bool sequence = true, bool ordered = true) {
  codec::OwnedBson body;
  BSON_APPEND_UTF8(body.get(), "insert", "items");
  BSON_APPEND_BOOL(body.get(), "ordered", ordered);
  if (!sequence) {
    bson_t arr;
    BSON_APPEND_ARRAY_BEGIN(body.get(), "documents", &arr);
    for (size_t i = 0; i < docs.size(); ++i) {
      bson_t b;
      bson_init_static(&b, docs[i].data, docs[i].size);
      bson_append_document(&arr, std::to_string(i).c_str(), -1, &b);
    }
    bson_append_array_end(body.get(), &arr);
  }
  BSON_APPEND_UTF8(body.get(), "$db", "bench");
  codec::OpMsgBuilder b(7, 0);
  b.body(body.get());
  if (sequence) b.sequence("documents", docs);
  return b.finish();
}

inline std::vector<uint8_t> one_doc_insert(const codec::OwnedBson& doc, bool sequence = true) {
  return insert_message({doc.view()}, sequence);
}

// find {_id: <oid>} limit 1 (the read half of the load mix).
inline std::vector<uint8_t> find_by_id_message() {
  codec::OwnedBson body;
  BSON_APPEND_UTF8(body.get(), "find", "items");
  bson_t filter;
  BSON_APPEND_DOCUMENT_BEGIN(body.get(), "filter", &filter);
  bson_oid_t oid;
  bson_oid_init(&oid, nullptr);
  BSON_APPEND_OID(&filter, "_id", &oid);
  bson_append_document_end(body.get(), &filter);
  BSON_APPEND_INT64(body.get(), "limit", 1);
  BSON_APPEND_BOOL(body.get(), "singleBatch", true);
  BSON_APPEND_UTF8(body.get(), "$db", "bench");
  return codec::OpMsgBuilder(8, 0).body(body.get()).finish();
}

// aggregate with `stages` stages; every 4th is a $lookup whose own pipeline nests another
// $lookup (and a $facet with one more), so the walker has real work.
inline std::vector<uint8_t> pipeline_message(int stages) {
  codec::OwnedBson body;
  BSON_APPEND_UTF8(body.get(), "aggregate", "items");
  bson_t pipe;
  BSON_APPEND_ARRAY_BEGIN(body.get(), "pipeline", &pipe);
  for (int i = 0; i < stages; ++i) {
    const std::string key = std::to_string(i);
    bson_t st;
    bson_append_document_begin(&pipe, key.c_str(), -1, &st);
    switch (i % 4) {
      case 0: {
        bson_t m, c;
        BSON_APPEND_DOCUMENT_BEGIN(&st, "$match", &m);
        BSON_APPEND_DOCUMENT_BEGIN(&m, "qty", &c);
        BSON_APPEND_INT32(&c, "$gt", i);
        bson_append_document_end(&m, &c);
        bson_append_document_end(&st, &m);
        break;
      }
      case 1: {
        bson_t lk, inner, s0, s0l, inner2, s1, m2;
        BSON_APPEND_DOCUMENT_BEGIN(&st, "$lookup", &lk);
        BSON_APPEND_UTF8(&lk, "from", "orders");
        BSON_APPEND_UTF8(&lk, "as", ("o" + key).c_str());
        BSON_APPEND_ARRAY_BEGIN(&lk, "pipeline", &inner);
        BSON_APPEND_DOCUMENT_BEGIN(&inner, "0", &s0);
        BSON_APPEND_DOCUMENT_BEGIN(&s0, "$lookup", &s0l);
        BSON_APPEND_UTF8(&s0l, "from", "customers");
        BSON_APPEND_UTF8(&s0l, "localField", "cust");
        BSON_APPEND_UTF8(&s0l, "foreignField", "_id");
        BSON_APPEND_UTF8(&s0l, "as", "c");
        BSON_APPEND_ARRAY_BEGIN(&s0l, "pipeline", &inner2);
        BSON_APPEND_DOCUMENT_BEGIN(&inner2, "0", &s1);
        BSON_APPEND_DOCUMENT_BEGIN(&s1, "$match", &m2);
        BSON_APPEND_BOOL(&m2, "active", true);
        bson_append_document_end(&s1, &m2);
        bson_append_document_end(&inner2, &s1);
        bson_append_array_end(&s0l, &inner2);
        bson_append_document_end(&s0, &s0l);
        bson_append_document_end(&inner, &s0);
        bson_append_array_end(&lk, &inner);
        bson_append_document_end(&st, &lk);
        break;
      }
      case 2: {
        bson_t f, arr, s0, lk;
        BSON_APPEND_DOCUMENT_BEGIN(&st, "$facet", &f);
        BSON_APPEND_ARRAY_BEGIN(&f, "joined", &arr);
        BSON_APPEND_DOCUMENT_BEGIN(&arr, "0", &s0);
        BSON_APPEND_DOCUMENT_BEGIN(&s0, "$lookup", &lk);
        BSON_APPEND_UTF8(&lk, "from", "stock");
        BSON_APPEND_UTF8(&lk, "localField", "sku");
        BSON_APPEND_UTF8(&lk, "foreignField", "sku");
        BSON_APPEND_UTF8(&lk, "as", "s");
        bson_append_document_end(&s0, &lk);
        bson_append_document_end(&arr, &s0);
        bson_append_array_end(&f, &arr);
        bson_append_document_end(&st, &f);
        break;
      }
      default: {
        bson_t p;
        BSON_APPEND_DOCUMENT_BEGIN(&st, "$project", &p);
        BSON_APPEND_INT32(&p, "name", 1);
        BSON_APPEND_INT32(&p, "qty", 1);
        bson_append_document_end(&st, &p);
        break;
      }
    }
    bson_append_document_end(&pipe, &st);
  }
  bson_append_array_end(body.get(), &pipe);
  bson_t cursor;
  BSON_APPEND_DOCUMENT_BEGIN(body.get(), "cursor", &cursor);
  bson_append_document_end(body.get(), &cursor);
  BSON_APPEND_UTF8(body.get(), "$db", "bench");
  return codec::OpMsgBuilder(9, 0).body(body.get()).finish();
}

// Rule sets: none, each rule alone, all together. All warn: nothing is refused, so the
// engine's full measuring path runs for every message.
struct RuleConfig {
  const char* name;
  const char* yaml;
};
inline const std::vector<RuleConfig>& rule_configs() {
  static const std::vector<RuleConfig> configs = {
      {"none", "mode: warn\nrules: []\n"},
      {"max_document_bytes", "mode: warn\nrules:\n  - match: '*'\n    max_document_bytes: 20MB\n"},
      {"max_array_length", "mode: warn\nrules:\n  - match: '*'\n    max_array_length: 10000\n"},
      {"array_length", "mode: warn\nrules:\n  - match: '*'\n    array_length: {tags: 100}\n"},
      {"require_push_slice", "mode: warn\nrules:\n  - match: '*'\n    require_push_slice: true\n"},
      {"max_nesting_depth", "mode: warn\nrules:\n  - match: '*'\n    max_nesting_depth: 100\n"},
      {"max_lookup_ratio",
       "mode: warn\nrules:\n  - match: '*'\n    max_lookup_ratio: 0.5\n    lookup_min_reads: "
       "1000000000\n"},
      {"all",
       "mode: warn\nrules:\n  - match: '*'\n    max_document_bytes: 20MB\n    max_array_length: "
       "10000\n"
       "    array_length: {tags: 100}\n    require_push_slice: true\n    max_nesting_depth: 100\n"
       "    max_lookup_ratio: 0.5\n    lookup_min_reads: 1000000000\n"},
  };
  return configs;
}

inline std::shared_ptr<const rules::RuleSet> rule_set(const char* yaml) {
  return settings::parse_rules(YAML::Load(yaml), "bench.yaml");
}

}  // namespace docguard::bench
