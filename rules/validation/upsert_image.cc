// The would-be insert of an upsert (upsert_image.h).
#include "upsert_image.h"

#include <map>
#include <string>

#include "docguard/codec/bson_elements.h"

namespace docguard::rules {

bool upsert_insert_image(const codec::BsonView& filter, const codec::BsonView& update,
                         bson_t* out) {
  // Field -> its element, in the order the server's image takes them: the query's first, each
  // later $set / $setOnInsert replacing a value of the same name in its place.
  std::map<std::string, codec::BsonElements, std::less<>> values;
  std::vector<std::string> order;
  // `name` apart from the element: an element's own key is where libbson finds its value.
  const auto put = [&](std::string_view name, const codec::BsonElements& e) {
    const auto [it, fresh] = values.insert_or_assign(std::string(name), e);
    if (fresh) order.emplace_back(it->first);
  };
  if (!filter.empty()) {
    if (!codec::well_framed(filter)) return false;
    for (codec::BsonElements e(filter); e.next();) {
      if (codec::is_operator(e.key)) {
        if (e.key == "$comment") continue;
        return false;  // $and, $or, $expr ...: equalities the image may take, not modelled
      }
      if (e.key.find('.') != std::string_view::npos) return false;
      if (e.holds_document()) {
        const std::string_view op = codec::first_key(e.container());
        if (op == "$eq") {
          codec::BsonElements eq(e.container());
          if (eq.next()) put(e.key, eq);
          continue;
        }
        if (codec::is_operator(op)) continue;  // a range, $in ...: not in the image
      }
      put(e.key, e);
    }
  }
  if (!codec::well_framed(update)) return false;
  for (codec::BsonElements op(update); op.next();) {
    if (op.key != "$set" && op.key != "$setOnInsert") return false;
    if (!op.holds_document()) return false;
    for (codec::BsonElements f(op.container()); f.next();) {
      if (f.key.find('.') != std::string_view::npos) return false;
      put(f.key, f);
    }
  }
  const auto id = values.find("_id");
  if (id != values.end()) {
    id->second.append_to(out, "_id");
  } else {
    bson_oid_t placeholder;
    bson_oid_init_from_data(&placeholder, reinterpret_cast<const uint8_t*>("docguard-oid"));
    bson_append_oid(out, "_id", 3, &placeholder);
  }
  for (const std::string& name : order) {
    if (name != "_id") values.at(name).append_to(out, name);
  }
  return true;
}

}  // namespace docguard::rules
