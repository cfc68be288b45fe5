// A document read back from the database, as the chain of checks learns from it (each check's
// learn_read()).
#pragma once

#include <string_view>

#include "docguard/codec/bson_view.h"

namespace docguard::rules {

class RuleSet;
struct CollectionStats;

// A document read back from the database: one of a sampled reply's batch, or one docguard read
// of the store itself (introspection). What it teaches the checks (learn_read).
struct ReadDocument {
  std::string_view db;
  std::string_view coll;
  CollectionStats* stats = nullptr;
  codec::BsonView document;
  const RuleSet* rules = nullptr;  // in force (with its candidates)
  // Read by docguard from the store: its array lengths are facts. Else a reply's, sampled.
  bool from_store = false;
  // The namespace has array bounds: the document's array lengths are remembered.
  bool track_arrays = false;
  double now = 0;  // steady seconds, for the tracker's histories
};

}  // namespace docguard::rules
