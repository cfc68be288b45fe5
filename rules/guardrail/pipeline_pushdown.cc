// The optimizer's moves that decide an aggregation's query: adjacent $match stages merge; a
// $match moves ahead of a $sort, and ahead of $addFields / $set / $project / $unset when it reads
// none of the fields they set, remove or compute. The planner is then given the $match stages at
// the front, and a leading $sort. A pipeline with no $match in front gives an empty query, which
// notablescan lets scan.
#include "pipeline_pushdown.h"

#include <string>
#include <string_view>
#include <vector>

#include "docguard/codec/bson_elements.h"

namespace docguard::rules::planner {

namespace {

using codec::BsonElements;
using codec::BsonView;

bool overlaps(std::string_view a, std::string_view b) {
  const std::string_view& shorter = a.size() <= b.size() ? a : b;
  const std::string_view& longer = a.size() <= b.size() ? b : a;
  return longer.starts_with(shorter) &&
         (longer.size() == shorter.size() || longer[shorter.size()] == '.');
}

// The top-level paths a $match reads; false when it reads the whole document ($expr, $where,
// $text, $jsonSchema) or is too deep to say.
bool match_paths(const BsonView& match, std::vector<std::string_view>& out, int depth) {
  if (depth > 16) return false;
  for (BsonElements e(match); e.next();) {
    if (e.key == "$comment") continue;
    if (e.key == "$and" || e.key == "$or" || e.key == "$nor") {
      for (BsonElements c(e.container()); c.next();) {
        if (!c.holds_document() || !match_paths(c.container(), out, depth + 1)) return false;
      }
    } else if (!e.key.empty() && e.key[0] == '$') {
      return false;
    } else {
      out.push_back(e.key);
    }
  }
  return true;
}

// What the stages a $match would move past change.
struct Changes {
  std::vector<std::string_view> modified;  // set, removed or computed
  bool inclusion = false;                  // an inclusion $project passed: only `kept` remain
  std::vector<std::string_view> kept;
  bool any = false;

  bool allows(std::string_view path) const {
    for (std::string_view m : modified) {
      if (overlaps(m, path)) return false;
    }
    if (!inclusion) return true;
    for (std::string_view k : kept) {
      if (path == k || (path.starts_with(k) && path[k.size()] == '.')) return true;
    }
    return false;
  }

  void project(const BsonView& spec) {
    std::vector<std::string_view> included, excluded;
    bool id_excluded = false;
    for (BsonElements e(spec); e.next();) {
      const bool flag = e.holds_number() || e.type == BSON_TYPE_BOOL;
      if (e.key == "_id") {
        if (flag && !e.as_bool()) id_excluded = true;
        if (!flag) modified.push_back(e.key);
        continue;
      }
      if (!flag) {
        modified.push_back(e.key);  // computed: {a: "$b"}, {a: {$add: ..}}, or a sub-projection
        included.push_back(e.key);
      } else if (e.as_bool()) {
        included.push_back(e.key);
      } else {
        excluded.push_back(e.key);
      }
    }
    if (id_excluded) modified.push_back("_id");
    if (!included.empty()) {
      if (!id_excluded) included.push_back("_id");
      if (inclusion) {
        std::erase_if(kept, [&](std::string_view k) {
          for (std::string_view i : included) {
            if (overlaps(i, k)) return false;
          }
          return true;
        });
      } else {
        kept = included;
      }
      inclusion = true;
    } else {
      modified.insert(modified.end(), excluded.begin(), excluded.end());
    }
    any = true;
  }
};

bool later_match(BsonElements stages) {
  while (stages.next()) {
    BsonElements stage(stages.container());
    if (stage.next() && stage.key == "$match") return true;
  }
  return false;
}

}  // namespace

PushedQuery push_down(const BsonView& pipeline) {
  PushedQuery out;
  // Anywhere, $facet and sub-pipelines included: the names as keys in the pipeline's bytes.
  const std::string_view bytes(reinterpret_cast<const char*>(pipeline.data), pipeline.size);
  // A key in BSON ends with its NUL: "$lookup\0" is the stage's name, not a prefix of another.
  using namespace std::string_view_literals;
  for (const std::string_view key : {"$lookup\0"sv, "$graphLookup\0"sv, "$unionWith\0"sv}) {
    out.foreign_reads = out.foreign_reads || bytes.find(key) != std::string_view::npos;
  }
  Changes changes;
  bool first = true;
  for (BsonElements stages(pipeline); stages.next();) {
    BsonElements stage(stages.container());
    if (!stages.holds_document() || !stage.next()) break;
    const std::string_view name = stage.key;
    const bool was_first = first;
    first = false;
    if (name == "$match" && stage.holds_document()) {
      std::vector<std::string_view> paths;
      bool movable = match_paths(stage.container(), paths, 0);
      if (changes.any) {
        for (std::string_view p : paths) movable = movable && changes.allows(p);
      } else {
        movable = true;
      }
      if (!movable) {
        out.later_match = true;
        break;
      }
      out.matches.push_back(stage.container());
    } else if (name == "$sort" && stage.holds_document() && !changes.any && out.sort.empty()) {
      out.sort = stage.container();
    } else if ((name == "$addFields" || name == "$set") && stage.holds_document()) {
      for (BsonElements f(stage.container()); f.next();) changes.modified.push_back(f.key);
      changes.any = true;
    } else if (name == "$unset") {
      if (stage.type == BSON_TYPE_UTF8) changes.modified.push_back(stage.utf8());
      for (BsonElements f(stage.container()); f.next();) changes.modified.push_back(f.utf8());
      changes.any = true;
    } else if (name == "$project" && stage.holds_document()) {
      changes.project(stage.container());
    } else {
      out.geo_near_first = was_first && name == "$geoNear";
      out.later_match = later_match(stages);
      break;
    }
  }
  return out;
}

}  // namespace docguard::rules::planner
