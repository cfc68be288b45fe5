// What the live advisor knows of the catalog: collections, indexes and validators, from
// docguard's own reads of the cluster (introspection passes) and from the successful replies to
// catalog commands that clients run, so a createIndexes or a collMod counts at once rather than
// at the next pass.
#include <bson/bson.h>

#include <algorithm>

#include "docguard/advisor/catalog_documents.h"
#include "docguard/advisor/cluster_metadata.h"
#include "docguard/advisor/live_advisor.h"
#include "docguard/codec/bson_elements.h"
#include "live_state.h"

namespace docguard::advisor {
namespace {

// Calls `each` with every document held in `container` (an array or a document).
template <typename Each>
void for_each_in(const codec::BsonView& container, const Each& each) {
  if (container.empty() || !framed_document(container.data, container.size)) return;
  codec::BsonElements it(container);
  while (it.next()) {
    if (it.holds_document()) each(it.container());
  }
}

// The same for the array or document field named `key` of `doc`.
template <typename Each>
void for_each_document(const codec::BsonView& doc, const char* key, const Each& each) {
  if (doc.empty() || !framed_document(doc.data, doc.size)) return;
  codec::BsonElements it(doc);
  if (!it.find(key)) return;
  for_each_in(it.container(), each);  // empty unless an array or a document
}

void drop_indexes(const codec::BsonView& body, CollectionMetadata& m) {
  if (!framed_document(body.data, body.size)) return;
  codec::BsonElements it(body);
  if (!it.find("index")) return;
  auto erase_if = [&](auto&& pred) {
    m.indexes.erase(std::remove_if(m.indexes.begin(), m.indexes.end(), pred), m.indexes.end());
  };
  if (it.utf8() == "*") {
    erase_if([](const IndexSpec& i) { return i.name != "_id_"; });
  } else if (it.holds_utf8()) {
    const std::string name(it.utf8());
    erase_if([&](const IndexSpec& i) { return i.name == name; });
  } else if (it.holds_array()) {
    codec::BsonElements names(it.container());
    while (names.next()) {
      const std::string name(names.utf8());
      erase_if([&](const IndexSpec& i) { return i.name == name; });
    }
  } else if (it.holds_document()) {
    IndexSpec by_key;
    codec::BsonElements keys(it.container());
    while (keys.next()) by_key.keys.emplace_back(keys.key, index_key_text(keys));
    erase_if([&](const IndexSpec& i) { return i.keys == by_key.keys; });
  }
}

// The collection's kind and validator as `from` says them: known from now on.
void take_options(CollectionMetadata& to, const CollectionMetadata& from) {
  to.known = true;
  to.type = from.type;
  to.capped = from.capped;
  to.has_validator = from.has_validator;
  to.validator_json = from.validator_json;
  to.validation_level = from.validation_level;
  to.validation_action = from.validation_action;
}

void add_index(const IndexSpec& spec, CollectionMetadata& m) {
  for (IndexSpec& existing : m.indexes) {
    if (existing.name == spec.name) {
      existing = spec;
      return;
    }
  }
  // A collection has at most 64 indexes; more in traffic is not a collection's index list.
  if (m.indexes.size() < 64) m.indexes.push_back(spec);
}

}  // namespace

void LiveAdvisor::on_catalog_reply(const codec::CommandView& request,
                                   const codec::BsonView& reply) {
  const std::string_view name = request.name, db = request.database;
  if (request.body.empty() || reply.empty()) return;
  std::lock_guard lock(mutex_);
  if (name == "dropDatabase") {
    last_namespace_ = nullptr;
    std::erase_if(namespaces_, [&](const auto& entry) { return entry.second->profile.db() == db; });
    return;
  }
  if (name == "renameCollection") {
    // {renameCollection: "db.from", to: "db.to"} on admin: the facts move with the collection;
    // its sampled documents are read again at the next pass.
    std::string from, to;
    if (!framed_document(request.body.data, request.body.size)) return;
    codec::BsonElements it(request.body);
    while (it.next()) {
      if (it.key == "renameCollection") from = it.utf8();
      if (it.key == "to") to = it.utf8();
    }
    auto old = namespaces_.find(from);
    const size_t dot = to.find('.');
    if (old == namespaces_.end() || dot == std::string::npos) return;
    CollectionMetadata moved = old->second->metadata;
    last_namespace_ = nullptr;
    namespaces_.erase(old);
    namespaces_.erase(to);
    if (Namespace* ns = state_for(to.substr(0, dot), to.substr(dot + 1))) {
      moved.db = to.substr(0, dot);
      moved.collection = to.substr(dot + 1);
      ns->metadata = std::move(moved);
    }
    return;
  }
  if (name == "listCollections") {
    codec::BsonView batch;
    if (!codec::complete_first_batch(reply, &batch)) return;
    for_each_in(batch, [&](const codec::BsonView& entry) {
      CollectionMetadata listed;
      if (!apply_collection_entry(BsonBytes{entry.data, entry.size}, &listed)) return;
      if (Namespace* ns = state_for(db, listed.collection)) {
        take_options(ns->metadata, listed);
        ns->metadata_changed();
      }
    });
    return;
  }
  const std::string_view coll = request.collection;
  if (coll.empty()) return;
  if (name == "drop") {
    last_namespace_ = nullptr;
    namespaces_.erase(std::string(db) + "." + std::string(coll));
    return;
  }
  Namespace* ns = state_for(db, coll);
  if (ns == nullptr) return;
  CollectionMetadata& m = ns->metadata;
  if (name == "createIndexes") {
    for_each_document(request.body, "indexes", [&](const codec::BsonView& index) {
      IndexSpec spec;
      if (read_index_spec(index.data, index.size, &spec)) add_index(spec, m);
    });
  } else if (name == "dropIndexes" || name == "deleteIndexes") {
    drop_indexes(request.body, m);
  } else if (name == "listIndexes") {
    codec::BsonView batch;
    if (!codec::complete_first_batch(reply, &batch)) return;
    std::vector<IndexSpec> listed;
    for_each_in(batch, [&](const codec::BsonView& index) {
      IndexSpec spec;
      if (read_index_spec(index.data, index.size, &spec)) listed.push_back(std::move(spec));
    });
    m.indexes = std::move(listed);
    m.indexes_known = true;
  } else if (name == "create") {
    // A new collection: its options are all there is, and its only index is _id's.
    CollectionMetadata created;
    apply_create_options(request.body.data, request.body.size, &created);
    take_options(m, created);
    m.indexes.clear();
    if (!created.is_view()) m.indexes.push_back(IndexSpec{.name = "_id_", .keys = {{"_id", "1"}}});
    m.indexes_known = true;
  } else if (name == "collMod") {
    CollectionMetadata changed = m;
    apply_collmod(request.body.data, request.body.size, &changed);
    m = std::move(changed);
  }
  ns->metadata_changed();
}

void LiveAdvisor::expect_cluster_facts(bool expected) {
  std::lock_guard lock(mutex_);
  expect_cluster_facts_ = expected;
}

void LiveAdvisor::on_cluster_collection(std::unique_ptr<CollectionProfile> stored, double read_at) {
  std::lock_guard lock(mutex_);
  Namespace* ns = state_for(stored->db(), stored->collection());
  if (ns == nullptr) return;
  ns->metadata = stored->metadata();
  ns->cluster_facts = true;
  ns->read_at = read_at;
  ns->stored = std::move(stored);
  ns->shared_findings.clear();
  ns->shared_sampled_documents = 0;
}

void LiveAdvisor::on_shared_collection(SharedCollection shared) {
  std::lock_guard lock(mutex_);
  Namespace* ns = state_for(shared.metadata.db, shared.metadata.collection);
  if (ns == nullptr) return;
  ns->metadata = std::move(shared.metadata);
  ns->cluster_facts = true;
  ns->read_at = shared.read_at;
  ns->stored.reset();
  ns->shared_findings = std::move(shared.findings);
  ns->shared_sampled_documents = shared.sampled_documents;
}

void LiveAdvisor::on_cluster_pass(const std::vector<std::string>& databases_read,
                                  const std::vector<std::string>& namespaces_read) {
  std::lock_guard lock(mutex_);
  last_namespace_ = nullptr;
  std::erase_if(namespaces_, [&](const auto& entry) {
    const Namespace& ns = *entry.second;
    const bool db_read = std::find(databases_read.begin(), databases_read.end(), ns.profile.db()) !=
                         databases_read.end();
    return db_read && ns.cluster_facts &&
           std::find(namespaces_read.begin(), namespaces_read.end(), entry.first) ==
               namespaces_read.end();
  });
}

std::vector<std::pair<std::string, std::string>> LiveAdvisor::take_unread_namespaces(size_t max) {
  std::lock_guard lock(mutex_);
  std::vector<std::pair<std::string, std::string>> out;
  for (auto& [name, ns] : namespaces_) {
    if (out.size() >= max) break;
    const CollectionMetadata& m = ns->metadata;
    if (ns->cluster_facts || ns->catch_up_asked || (m.known && m.indexes_known)) continue;
    ns->catch_up_asked = true;
    out.emplace_back(ns->profile.db(), ns->profile.collection());
  }
  return out;
}

bool LiveAdvisor::has_cluster_facts(std::string_view db, std::string_view coll) const {
  std::lock_guard lock(mutex_);
  auto it = namespaces_.find(std::string(db) + "." + std::string(coll));
  return it != namespaces_.end() && it->second->cluster_facts;
}

std::vector<LiveAdvisor::CollectionFacts> LiveAdvisor::collection_facts() const {
  std::lock_guard lock(mutex_);
  std::vector<CollectionFacts> out;
  out.reserve(namespaces_.size());
  for (const auto& [name, ns] : namespaces_) {
    CollectionFacts facts;
    facts.metadata = ns->metadata;
    facts.cluster_facts = ns->cluster_facts;
    facts.sampled_documents = ns->stored ? ns->stored->documents() : ns->shared_sampled_documents;
    facts.read_at = ns->read_at;
    out.push_back(std::move(facts));
  }
  return out;
}

std::vector<std::string> LiveAdvisor::unknown_facts_locked() const {
  std::vector<std::string> out;
  for (const auto& [name, ns] : namespaces_) {
    for (const std::string& line : ns->metadata.unknown) out.push_back(name + ": " + line);
    if (expect_cluster_facts_ && !ns->cluster_facts && !ns->metadata.known) {
      out.push_back(name + ": not read from the cluster yet (the next introspection pass will)");
    }
  }
  return out;
}

}  // namespace docguard::advisor
