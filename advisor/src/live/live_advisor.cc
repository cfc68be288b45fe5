#include "docguard/advisor/live_advisor.h"

#include <bson/bson.h>

#include <algorithm>
#include <chrono>
#include <set>

#include "docguard/advisor/detectors.h"
#include "docguard/advisor/text_format.h"
#include "docguard/base/hash.h"
#include "docguard/base/inline_vector.h"
#include "docguard/base/short_equal.h"
#include "docguard/codec/bson_elements.h"
#include "live_state.h"

namespace docguard::advisor {
namespace {

double steady_seconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

bool is_reference(std::string_view name) {
  const auto dot = name.rfind('.');
  const std::string_view leaf = dot == std::string_view::npos ? name : name.substr(dot + 1);
  if (leaf == "_id") return false;
  return (leaf.size() > 2 && leaf.substr(leaf.size() - 2) == "Id") ||
         (leaf.size() > 3 && leaf.substr(leaf.size() - 3) == "_id");
}

template <typename Map>
typename Map::mapped_type* bounded(Map& map, std::string_view key) {
  auto it = map.find(key);
  if (it != map.end()) return &it->second;
  if (map.size() >= kMaxKeys) return nullptr;
  return &map.emplace(std::string(key), typename Map::mapped_type{}).first->second;
}

}  // namespace

LiveAdvisor::LiveAdvisor(const AdvisorSettings& settings) : settings_(settings) {}
LiveAdvisor::~LiveAdvisor() = default;

void LiveAdvisor::set_clock(double (*clock)()) { clock_ = clock; }

bool LiveAdvisor::sampled(std::atomic<uint64_t>& counter) {
  return settings_.live_sample_every <= 1 ||
         counter.fetch_add(1, std::memory_order_relaxed) % settings_.live_sample_every == 0;
}

LiveAdvisor::Namespace* LiveAdvisor::state_for(std::string_view db, std::string_view coll) {
  // Traffic meets the same namespace again and again: the last one is compared by its names
  // before a key is built and looked up.
  if (last_namespace_ != nullptr && base::same_text(last_namespace_->profile.collection(), coll) &&
      base::same_text(last_namespace_->profile.db(), db)) {
    return last_namespace_;
  }
  last_namespace_ = find_or_add_namespace(db, coll);
  return last_namespace_;
}

LiveAdvisor::Namespace* LiveAdvisor::find_or_add_namespace(std::string_view db,
                                                           std::string_view coll) {
  std::string ns;
  ns.append(db).append(".").append(coll);
  auto it = namespaces_.find(ns);
  if (it != namespaces_.end()) return it->second.get();
  if (namespaces_.size() >= settings_.live_max_namespaces) return nullptr;
  auto state = std::make_unique<Namespace>(std::string(db), std::string(coll), settings_);
  return namespaces_.emplace(std::move(ns), std::move(state)).first->second.get();
}

void LiveAdvisor::on_request(std::string_view db, std::string_view coll,
                             const codec::CommandView& cmd, std::string_view app) {
  // Index and validator definitions arrive with their replies (on_catalog_reply).
  if (!cmd.is_write() && !cmd.is_read()) return;
  if (cmd.kind == codec::CommandKind::kBulkWrite) return;  // on admin, across namespaces
  if (sampled(sample_counter_)) on_sampled_request(db, coll, cmd, app);
}

void LiveAdvisor::on_sampled_request(std::string_view db, std::string_view coll,
                                     const codec::CommandView& cmd, std::string_view app) {
  // Built before the lock: walking filters allocates, and other io threads wait on the lock.
  // None while the workload ledger counts them.
  const std::vector<QueryShape> shapes =
      shapes_from_ledger() ? std::vector<QueryShape>{} : command_query_shapes(cmd);
  std::lock_guard lock(mutex_);
  if (Namespace* ns = state_for(db, coll)) {
    observe_locked(*ns, cmd);
    // Reads are counted by on_read, which sees every read (this sees those with a namespace).
    if (cmd.is_write()) ns->write_apps.count(app);
    for (const QueryShape& shape : shapes) ns->query_shapes.record(shape);
  }
}

void LiveAdvisor::on_unbounded_push(std::string_view db, std::string_view coll,
                                    std::string_view field, double, std::string_view app) {
  if (!sampled(push_counter_)) return;
  std::lock_guard lock(mutex_);
  if (Namespace* ns = state_for(db, coll)) {
    if (uint64_t* n = bounded(ns->unbounded_pushes, field)) ++*n;
    ns->push_apps.count(app);
  }
}

void LiveAdvisor::on_read(std::string_view db, std::string_view coll, bool with_lookup,
                          std::string_view app) {
  if (sampled(read_counter_)) on_sampled_read(db, coll, with_lookup, app);
}

void LiveAdvisor::on_sampled_read(std::string_view db, std::string_view coll, bool with_lookup,
                                  std::string_view app) {
  std::lock_guard lock(mutex_);
  if (Namespace* ns = state_for(db, coll)) {
    ++ns->reads;
    if (with_lookup) ++ns->reads_with_lookup;
    ns->read_apps.count(app);
  }
}

namespace {

// The fields a filter compares for equality, as views into the command: read before the
// command's bytes are let go. Most filters name a few, kept without an allocation.
using Equalities = base::InlineVector<std::string_view, 8>;

// Walks a filter: equality on reference fields, case-insensitive regexes.
void walk_filter(const codec::BsonView& filter, Equalities& equalities, std::string* regex_field,
                 int depth) {
  if (depth > 8) return;
  codec::BsonElements it(filter);
  std::string_view pattern, options;
  while (it.next()) {
    const std::string_view key = it.key;
    if (key == "$and" || key == "$or" || key == "$nor") {
      codec::BsonElements clauses(it.container());
      while (clauses.next()) {
        if (codec::is_container(clauses.type)) {
          walk_filter(clauses.container(), equalities, regex_field, depth + 1);
        }
      }
      continue;
    }
    if (codec::is_operator(key)) continue;
    if (it.regex(&pattern, &options)) {
      if (options.find('i') != std::string_view::npos) *regex_field = std::string(key);
      continue;
    }
    if (it.holds_document()) {
      bool has_operator = false;
      codec::BsonElements op(it.container());
      while (op.next()) {
        const std::string_view name = op.key;
        if (codec::is_operator(name)) has_operator = true;
        if (name == "$options" && op.utf8().find('i') != std::string_view::npos) {
          *regex_field = std::string(key);
        }
        if (name == "$regex" && op.regex(&pattern, &options) &&
            options.find('i') != std::string_view::npos) {
          *regex_field = std::string(key);
        }
        if (name == "$eq" || name == "$in") equalities.push_back(key);
      }
      if (!has_operator) equalities.push_back(key);
      continue;
    }
    equalities.push_back(key);
  }
}

// Top-level inclusion fields of a projection ({a: 1, b: 1}); empty for exclusions.
std::vector<std::string> inclusion_fields(const codec::BsonView& projection) {
  std::vector<std::string> fields;
  codec::BsonElements it(projection);
  while (it.next()) {
    const std::string_view key = it.key;
    if (key == "_id") continue;
    if (!it.as_bool()) return {};
    fields.emplace_back(key.substr(0, key.find('.')));
  }
  return fields;
}

// Field names mentioned in a $lookup sub-pipeline or projection ("$field" strings and the keys
// of $project).
void collect_used_fields(const codec::BsonView& start, std::set<std::string>& out, int depth) {
  if (depth > 6 || out.size() >= kMaxKeys) return;
  codec::BsonElements it(start);
  while (it.next()) {
    const std::string_view key = it.key;
    if (!key.empty() && key[0] != '$' && (key[0] < '0' || key[0] > '9')) {
      out.emplace(key.substr(0, key.find('.')));
    }
    const std::string_view s = it.utf8();
    if (s.size() > 1 && s[0] == '$' && s[1] != '$') out.emplace(s.substr(1, s.find('.') - 1));
    if (codec::is_container(it.type)) collect_used_fields(it.container(), out, depth + 1);
  }
}

}  // namespace

void LiveAdvisor::observe_locked(Namespace& ns, const codec::CommandView& cmd) {
  const double now = clock_ ? clock_() : steady_seconds();
  if (cmd.is_write()) ++ns.writes;
  if (cmd.kind == codec::CommandKind::kInsert) {
    for (const codec::BsonView& doc : cmd.statements) {
      if (doc.empty()) continue;
      // Walking a document costs about 1.5 ms per MB (under this lock): large ones are profiled
      // 1 in kLargeDocumentSampling, so a stream of big inserts cannot stall the io threads.
      if (doc.size <= kLargeDocumentBytes || ns.large_documents++ % kLargeDocumentSampling == 0) {
        // A document the profile cannot walk is skipped: the server accepted it.
        (void)ns.profile.add_document(doc.data, doc.size);
      }
      if (ns.inserts++ == 0) ns.first_insert = now;
      ns.last_insert = now;
      if (doc.size <= settings_.bucket_max_p90_bytes) ++ns.tiny_inserts;
    }
    return;
  }
  Equalities equalities;
  std::string regex_field;
  if (cmd.kind == codec::CommandKind::kFind) {
    // The filter and projection as the command's view read them (a document, else empty).
    if (!cmd.query.empty()) walk_filter(cmd.query, equalities, &regex_field, 0);
    if (!cmd.projection.empty()) {
      const auto fields = inclusion_fields(cmd.projection);
      if (!fields.empty()) {
        ++ns.projected_reads;
        for (const auto& f : fields) {
          if (uint64_t* n = bounded(ns.projected_fields, f)) ++*n;
        }
      }
    }
  } else if (cmd.kind == codec::CommandKind::kAggregate && !cmd.pipeline.empty()) {
    codec::BsonElements stages(cmd.pipeline);
    while (stages.next()) {
      // A stage is a document (or array) whose first key names it.
      codec::BsonElements stage(stages.container());
      if (!stage.next()) continue;
      const std::string_view name = stage.key;
      const bool has_operand = codec::is_container(stage.type);
      if (name == "$match" && has_operand) {
        walk_filter(stage.container(), equalities, &regex_field, 0);
      } else if (name == "$group") {
        const uint64_t hash = base::hash_bytes(
            std::string_view(reinterpret_cast<const char*>(cmd.pipeline.data), cmd.pipeline.size));
        auto found = ns.groups.find(hash);
        if (found == ns.groups.end() && ns.groups.size() < kMaxKeys) {
          std::string keys;
          codec::BsonElements group(stage.container());
          while (group.next()) keys += (keys.empty() ? "" : ", ") + std::string(group.key);
          found = ns.groups.emplace(hash, std::make_pair(uint64_t{0}, keys)).first;
        }
        if (found != ns.groups.end()) ++found->second.first;
      } else if (name == "$lookup" && has_operand) {
        std::string from, local, foreign, as;
        std::set<std::string> used;
        codec::BsonElements op(stage.container());
        while (op.next()) {
          const std::string_view k = op.key;
          if (k == "from") from = op.utf8();
          if (k == "localField") local = op.utf8();
          if (k == "foreignField") foreign = op.utf8();
          if (k == "as") as = op.utf8();
          if ((k == "pipeline" || k == "let") && codec::is_container(op.type)) {
            collect_used_fields(op.container(), used, 0);
          }
        }
        if (from.empty()) continue;
        if (LookupInfo* info = bounded(ns.lookups, from)) {
          ++info->count;
          if (!local.empty()) info->local_field = local;
          if (!foreign.empty()) info->foreign_field = foreign;
          if (!as.empty()) info->as = as;
          for (const auto& f : used) {
            if (info->used_fields.size() < kMaxKeys) info->used_fields.insert(f);
          }
        }
      } else if (name == "$project" && has_operand) {
        // A projection after a $lookup names the joined fields the reads use: `<as>.<field>`.
        codec::BsonElements op(stage.container());
        while (op.next()) {
          const std::string_view k = op.key;
          for (auto& [from, info] : ns.lookups) {
            if (info.as.empty() || k.size() <= info.as.size() + 1 || k.rfind(info.as, 0) != 0 ||
                k[info.as.size()] != '.' || info.used_fields.size() >= kMaxKeys) {
              continue;
            }
            const std::string_view rest = k.substr(info.as.size() + 1);
            info.used_fields.emplace(rest.substr(0, rest.find('.')));
          }
        }
      }
    }
  }
  if (!regex_field.empty()) {
    ++ns.regex_i;
    ns.regex_field = regex_field;
  }
  for (const auto& field : equalities) {
    if (!is_reference(field)) continue;
    if (uint64_t* n = bounded(ns.reference_filters, field)) ++*n;
  }
}

}  // namespace docguard::advisor
