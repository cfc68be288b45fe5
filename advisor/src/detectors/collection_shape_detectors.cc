// Many collections of one shape in one database: one collection split by a value (a tenant, a
// day, a sensor) that belongs in a field.
#include <algorithm>
#include <map>

#include "docguard/advisor/detectors.h"
#include "docguard/advisor/text_format.h"

namespace docguard::advisor {
namespace {

constexpr size_t kNamesShown = 5;
constexpr size_t kFieldsShown = 8;

// The top-level fields in at least 90% of the documents, sorted. Optional fields that only some
// documents have would split collections of one design by chance, so they are left out.
std::vector<std::string> settled_fields(const CollectionProfile& p) {
  std::vector<std::string> fields;
  for (const FieldStats& field : p.fields()) {
    if (field.depth == 1 && field.documents * 10 >= p.documents() * 9) fields.push_back(field.path);
  }
  std::sort(fields.begin(), fields.end());
  return fields;
}

bool is_suffix_char(char c) { return (c >= '0' && c <= '9') || c == '_' || c == '-' || c == '.'; }

// "orders_2024_01_31" -> {"orders", "_2024_01_31"}; a name not ending in a digit has no suffix.
std::pair<std::string, std::string> split_suffix(const std::string& name) {
  if (name.empty() || name.back() < '0' || name.back() > '9') return {name, ""};
  size_t cut = name.size();
  while (cut > 0 && is_suffix_char(name[cut - 1])) --cut;
  return {name.substr(0, cut), name.substr(cut)};
}

// A suffix of 6 or 8 digits (separators aside) starting with 19 or 20: yyyymm or yyyymmdd.
bool is_date_suffix(const std::string& suffix) {
  std::string digits;
  for (char c : suffix) {
    if (c >= '0' && c <= '9') digits += c;
  }
  return (digits.size() == 6 || digits.size() == 8) &&
         (digits.starts_with("19") || digits.starts_with("20"));
}

std::string join(const std::vector<std::string>& items, size_t shown) {
  std::string text;
  for (size_t i = 0; i < items.size() && i < shown; ++i) text += (i ? ", " : "") + items[i];
  if (items.size() > shown) text += ", ... (" + with_commas(items.size() - shown) + " more)";
  return text;
}

}  // namespace

void detect_same_shape_collections(const std::vector<const CollectionProfile*>& profiles,
                                   const AdvisorSettings& s, std::vector<Finding>& out) {
  // (database, settled fields) -> the collections with them. A collection without documents says
  // nothing of its shape (an empty field set is no shape), nor does one holding only _id.
  std::map<std::pair<std::string, std::vector<std::string>>, std::vector<const CollectionProfile*>>
      groups;
  for (const CollectionProfile* p : profiles) {
    if (p->documents() == 0 || p->metadata().is_view()) continue;
    std::vector<std::string> fields = settled_fields(*p);
    if (fields.empty() || (fields.size() == 1 && fields.front() == "_id")) continue;
    groups[{p->db(), std::move(fields)}].push_back(p);
  }
  for (const auto& [key, members] : groups) {
    if (members.size() < s.same_shape_min_collections) continue;
    const auto& [db, fields] = key;
    std::vector<std::string> names;
    std::map<std::string, size_t> stems;
    bool dates = true;
    for (const CollectionProfile* p : members) {
      names.push_back(p->collection());
      const auto [stem, suffix] = split_suffix(p->collection());
      if (!suffix.empty()) ++stems[stem];
      dates = dates && is_date_suffix(suffix);
    }
    std::sort(names.begin(), names.end());
    // The names differ only by a numeric or date suffix when all of them share one stem.
    std::string stem;
    if (stems.size() == 1 && stems.begin()->second == members.size()) stem = stems.begin()->first;
    Finding f;
    f.db = db;
    f.kind = Finding::Kind::kSameShapeCollections;
    f.severity = Severity::kWarn;
    f.source = metadata_finding_source(members.front()->metadata());
    f.evidence = with_commas(members.size()) + " collections in `" + db +
                 "` have the same top-level fields {" + join(fields, kFieldsShown) +
                 "}: " + join(names, kNamesShown);
    if (!stem.empty()) {
      f.evidence += "; their names differ only by a " + std::string(dates ? "date" : "number") +
                    " after `" + stem + "`";
    }
    f.pattern = "one collection, the distinguishing value in a field";
    const std::string value_field = dates ? "day" : "key";
    f.suggestion =
        "Each collection costs its own files, _id index, cache and catalog entries, and a "
        "query across them needs one $unionWith per collection. Merge them into one "
        "collection" +
        (stem.empty() ? std::string() : " `" + stem + "`") +
        " with a field that holds what the collection name holds now (e.g. `" + value_field +
        "`: " +
        (dates ? "the day; or use a time-series collection"
               : "the tenant, shop or device the name stands for") +
        "), and put that field first in the indexes: {" + value_field + ": 1, ...}.";
    out.push_back(std::move(f));
  }
}

}  // namespace docguard::advisor
