// Where a replayed answer first differs from the recorded one, as a field path with both values
// (replay_compare.h): what a reader of the report needs to tell a regression from noise.
#include <algorithm>
#include <map>
#include <string>

#include "docguard/codec/bson_elements.h"
#include "docguard/tools/document_example.h"
#include "docguard/tools/replay_compare.h"

namespace docguard::tools {

namespace {

using codec::BsonElements;
using codec::BsonView;

constexpr int kMaxDepth = 100;

// A value as the report shows it: {"v": value}'s JSON, its type unless show_values.
std::string shown(const BsonElements* it, bool show_values) {
  if (it == nullptr) return "(missing)";
  codec::ScopedBson doc;
  it->append_to(doc.get(), "v");
  std::string text = document_example(doc.view(), show_values, 200);
  // {"v": X} -> X
  const size_t colon = text.find(':');
  if (colon != std::string::npos && text.size() >= colon + 3) {
    text = text.substr(colon + 2, text.size() - colon - 4);
  }
  return text;
}

bool same_value(const BsonElements& a, const BsonElements& b) {
  bson_value_t va;
  bson_value_t vb;
  if (a.type != b.type || !a.borrow_value(&va) || !b.borrow_value(&vb)) return false;
  codec::ScopedBson da;
  codec::ScopedBson db;
  bson_append_value(da.get(), "v", 1, &va);
  bson_append_value(db.get(), "v", 1, &vb);
  return da.get()->len == db.get()->len &&
         std::equal(bson_get_data(da.get()), bson_get_data(da.get()) + da.get()->len,
                    bson_get_data(db.get()));
}

bool ignored(std::span<const std::string> ignore, const std::string& path) {
  return std::find(ignore.begin(), ignore.end(), path) != ignore.end();
}

// The first path at which `a` and `b` differ, with both values; "" when they do not.
std::string diff(const BsonView& a, const BsonView& b, const std::string& prefix, bool show_values,
                 std::span<const std::string> ignore, int depth) {
  const auto join = [&](std::string_view key) {
    return prefix.empty() ? std::string(key) : prefix + "." + std::string(key);
  };
  for (BsonElements x(a); x.next();) {
    const std::string path = join(x.key);
    if (ignored(ignore, path)) continue;
    BsonElements y(b);
    if (!y.find(x.key)) return path + ": " + shown(&x, show_values) + " vs (missing)";
    if (codec::is_container(x.type) && x.type == y.type && depth < kMaxDepth) {
      std::string inner = diff(x.container(), y.container(), path, show_values, ignore, depth + 1);
      if (!inner.empty()) return inner;
      continue;
    }
    if (!same_value(x, y)) {
      return path + ": " + shown(&x, show_values) + " vs " + shown(&y, show_values);
    }
  }
  for (BsonElements y(b); y.next();) {
    const std::string path = join(y.key);
    BsonElements x(a);
    if (!ignored(ignore, path) && !x.find(y.key)) {
      return path + ": (missing) vs " + shown(&y, show_values);
    }
  }
  return {};
}

// The result documents of a reply (cursor.firstBatch or nextBatch).
std::vector<BsonView> documents_of(const BsonView& reply) {
  std::vector<BsonView> out;
  BsonElements cursor(reply);
  if (!cursor.find("cursor") || !cursor.holds_document()) return out;
  for (BsonElements it(cursor.container()); it.next();) {
    if ((it.key != "firstBatch" && it.key != "nextBatch") || !it.holds_array()) continue;
    for (BsonElements doc(it.container()); doc.next();) {
      if (doc.holds_document()) out.push_back(doc.container());
    }
  }
  return out;
}

std::string id_bytes(const BsonView& doc) {
  BsonElements id(doc);
  if (!id.find("_id")) return {};
  codec::ScopedBson one;
  id.append_to(one.get(), "_id");
  return {reinterpret_cast<const char*>(bson_get_data(one.get())), one.get()->len};
}

}  // namespace

std::string first_field_difference(const BsonView& recorded, const BsonView& live, bool sorted,
                                   bool show_values, std::span<const std::string> ignore) {
  if (!codec::well_framed(recorded) || !codec::well_framed(live)) return {};
  BsonElements rv(recorded);
  BsonElements lv(live);
  if (rv.find("value") && lv.find("value")) {  // findAndModify
    if (rv.holds_document() && lv.holds_document()) {
      std::string d = diff(rv.container(), lv.container(), "value", show_values, ignore, 0);
      if (!d.empty()) return d;
    } else if (!same_value(rv, lv)) {
      return "value: " + shown(&rv, show_values) + " vs " + shown(&lv, show_values);
    }
  }
  BsonElements rvals(recorded);
  BsonElements lvals(live);
  if (rvals.find("values") && lvals.find("values") && rvals.holds_array() &&
      lvals.holds_array()) {  // distinct: the first recorded value the live answer lacks
    for (BsonElements r(rvals.container()); r.next();) {
      bool found = false;
      for (BsonElements l(lvals.container()); l.next() && !found;) found = same_value(r, l);
      if (!found) return "values: " + shown(&r, show_values) + " not in the replayed values";
    }
    for (BsonElements l(lvals.container()); l.next();) {
      bool found = false;
      for (BsonElements r(rvals.container()); r.next() && !found;) found = same_value(r, l);
      if (!found) return "values: " + shown(&l, show_values) + " not in the recorded values";
    }
  }
  const std::vector<BsonView> a = documents_of(recorded);
  const std::vector<BsonView> b = documents_of(live);
  if (sorted) {
    for (size_t i = 0; i < std::min(a.size(), b.size()); ++i) {
      std::string d = diff(a[i], b[i], "", show_values, ignore, 0);
      if (!d.empty()) return "document " + std::to_string(i) + ": " + d;
    }
    return {};
  }
  // Unsorted: a recorded document is paired with the replayed one of the same _id.
  std::vector<uint64_t> live_hashes;
  std::map<std::string, size_t> live_ids;
  for (size_t i = 0; i < b.size(); ++i) {
    live_hashes.push_back(document_hash(b[i], ignore));
    live_ids.emplace(id_bytes(b[i]), i);
  }
  std::sort(live_hashes.begin(), live_hashes.end());
  for (const BsonView& doc : a) {
    if (std::binary_search(live_hashes.begin(), live_hashes.end(), document_hash(doc, ignore))) {
      continue;
    }
    const auto twin = live_ids.find(id_bytes(doc));
    if (twin == live_ids.end()) {
      BsonElements rid(doc);
      return "_id: " + (rid.find("_id") ? shown(&rid, show_values) : std::string("(none)")) +
             " not in the replayed documents";
    }
    std::string d = diff(doc, b[twin->second], "", show_values, ignore, 0);
    if (!d.empty()) return d;
  }
  return {};
}

}  // namespace docguard::tools
