// What the engine learns from what comes back: the documents of sampled replies and those
// docguard reads from the store, handed down the chain of checks (learn_read: shapes, tracked
// arrays, the validators' census), and catalog replies for the index catalog.
#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <cmath>
#include <cstring>

#include "engine_internal.h"

namespace docguard::rules {

bool Engine::wants_reply_sample(const codec::CommandView& cmd) {
  if (cmd.more_to_come) return false;
  if (cmd.kind != CommandKind::kFind && cmd.kind != CommandKind::kAggregate &&
      cmd.kind != CommandKind::kGetMore) {
    return false;
  }
  const double rate = thread_snapshot().rules->tracking().read_sample_rate;
  if (rate <= 0) return false;
  if (rate >= 1) return true;
  // splitmix64 per thread: cheap and good enough for sampling.
  thread_local uint64_t state = reinterpret_cast<uintptr_t>(&state) ^ 0x9E3779B97F4A7C15ull;
  uint64_t z = (state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  z ^= z >> 31;
  return static_cast<double>(z >> 11) * 0x1.0p-53 < rate;
}

void Engine::observe_reply(const codec::CommandView& request, const codec::OpMsg& reply) {
  if (!codec::well_framed(reply.body)) return;
  codec::BsonElements top(reply.body);
  if (!top.find("cursor") || !top.holds_document()) return;
  std::string_view db = request.database;
  std::string_view coll = request.collection;
  codec::BsonView batch;
  for (codec::BsonElements cursor(top.container()); cursor.next();) {
    if (cursor.key == "ns" && cursor.holds_utf8()) {
      const std::string_view ns = cursor.utf8();
      const size_t dot = ns.find('.');
      if (dot != std::string_view::npos) {
        db = ns.substr(0, dot);
        coll = ns.substr(dot + 1);
      }
    } else if ((cursor.key == "firstBatch" || cursor.key == "nextBatch") && cursor.holds_array()) {
      batch = cursor.container();
    }
  }
  if (batch.empty() || db.empty() || coll.empty()) return;
  const std::shared_ptr<const RuleSet> rules = snapshot_.load()->rules;
  CollectionStats* stats = stats_for(db, coll, *rules);
  ReadDocument read{db, coll, stats, {}, rules.get()};
  read.track_arrays = limits_for(stats, db, coll, *rules)->tracks_arrays;
  read.now = read.track_arrays ? seconds_now() : -1;
  for (codec::BsonElements doc(batch); doc.next();) {
    if (!doc.holds_document()) continue;
    read.document = doc.container();
    checks().run<phase::LearnRead>(read);
  }
}

void Engine::learn_stored_document(std::string_view db, std::string_view coll,
                                   const codec::BsonView& document) {
  if (document.empty()) return;
  const std::shared_ptr<const RuleSet> rules = snapshot_.load()->rules;
  CollectionStats* stats = stats_for(db, coll, *rules);
  ReadDocument read{db, coll, stats, document, rules.get()};
  read.from_store = true;
  read.track_arrays = limits_for(stats, db, coll, *rules)->tracks_arrays;
  read.now = seconds_now();
  checks().run<phase::LearnRead>(read);
}

void Engine::observe_catalog_reply(const codec::CommandView& request, const codec::OpMsg& reply) {
  if (!codec::well_framed(reply.body)) return;
  codec::BsonElements ok(reply.body);
  if (!ok.find("ok") || ok.as_double() != 1.0) return;
  checks().run<phase::LearnCatalogReply>(request, reply.body);
  if (advice_ != nullptr) advice_->on_catalog_reply(request, reply.body);
}

}  // namespace docguard::rules
