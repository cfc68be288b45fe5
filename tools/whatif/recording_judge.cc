// The judge: every recorded request goes through a Conversation of its own connection, in the
// recording's global order, against one rules::Engine, exactly as a live Session hands them over
// (Session::handle_request, Session::upstream_to_client). Replies go through the conversation
// too, because the live path learns from them: a client's listIndexes and the catalog commands
// feed the query guardrail's index catalog, sampled reads the document tracker, a hello reply
// the upstream's features. Only what docguard reads from the cluster itself (introspection) has
// no place in a recording.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <map>
#include <set>
#include <tuple>

#include "docguard/codec/request_identity.h"
#include "docguard/conversation/conversation.h"
#include "docguard/introspection/catalog_facts.h"
#include "docguard/recording/recording_reader.h"
#include "docguard/rules/engine.h"
#include "whatif_judgement.h"

namespace docguard::tools::whatif {

namespace {

// Ids for messages the conversation writes itself (refusals); nothing counts anything offline.
class OfflineHost final : public conversation::ConversationHost {
 public:
  int32_t new_request_id() override { return ++last_id_; }

 private:
  int32_t last_id_ = 0;
};

// The namespace and command of a request, for shapes that are not the guardrail's own: as the
// server reads them (request_identity.h), as the recorder and the replay do.
std::string request_place(codec::Bytes message) {
  const codec::RequestIdentity id = codec::identify_request(message);
  if (id.form == codec::RequestForm::kMalformed) return "?";
  std::string place(id.command);
  if (!id.database.empty()) {
    place.append(" ").append(id.database);
    if (!id.collection.empty()) place.append(".").append(id.collection);
  }
  return place;
}

std::string number_text(double v) {
  char text[32];
  std::snprintf(text, sizeof text, "%.15g", v);
  return text;
}

std::string detail_of(const rules::Violation& v) {
  std::string detail;
  if (!v.field_path.empty()) detail = "field " + v.field_path + ": ";
  if (v.kind == rules::RuleKind::kRequireIndex) {
    detail += "no known index serves it";
    const rules::IndexKeys& index = v.unindexed_query().suggested_index;
    if (!index.empty()) {
      detail += "; an index that would: {";
      for (size_t i = 0; i < index.size(); ++i) {
        if (i > 0) detail += ", ";
        detail += index[i].first + ": " + index[i].second;
      }
      detail += "}";
    }
  } else if (rules::rule_kind(v.kind).refusal == rules::RefusalStyle::kDocumentValidation) {
    detail += "fails the $jsonSchema";  // the server's errInfo details are not summed up here
  } else if (v.bound > 0 || v.measured > 0) {
    detail += number_text(v.measured) + " against the bound " + number_text(v.bound);
  }
  if (v.statement_index >= 0) detail += " (statement " + std::to_string(v.statement_index) + ")";
  if (!v.rule_match.empty()) detail += "; rule match " + v.rule_match;
  return detail;
}

using GroupKey = std::tuple<bool, std::string, std::string, std::string>;  // !refused, app, rule

// What the rules could not judge offline, counted once per request.
class NotJudged final : public rules::MeasurementSink {
 public:
  void on_guardrail_unknown(const rules::NamespaceLabels& /*ns*/) override { unknown = true; }
  void on_schema_unjudged(const rules::NamespaceLabels& /*ns*/) override { unjudged = true; }
  void on_length_unknown(const rules::NamespaceLabels& /*ns*/) override { length = true; }
  bool unknown = false;
  bool unjudged = false;
  bool length = false;
};

// The recording's clock: a request is judged at its recorded time, so a time window
// (max_lookup_ratio's lookup_window) sees the traffic spread as it was live, not as one burst.
class RecordedClock {
 public:
  void set(uint64_t offset_micros) {
    now_ = origin_ + std::chrono::microseconds(static_cast<int64_t>(offset_micros));
  }
  rules::Engine::Clock::time_point now() const { return now_; }

 private:
  // Any fixed point will do: only differences between recorded times matter.
  rules::Engine::Clock::time_point origin_ = rules::Engine::Clock::now();
  rules::Engine::Clock::time_point now_ = origin_;
};

}  // namespace

base::Expected<Judgement> judge_recording(const std::filesystem::path& dir,
                                          std::shared_ptr<const rules::RuleSet> rules,
                                          uint32_t max_message_bytes, bool show_values,
                                          const std::string& facts_from, bool accept_torn_tail) {
  auto reader = recording::RecordingReader::open(dir, recording::ReadOptions{accept_torn_tail});
  if (!reader) return reader.error();
  Judgement judgement;
  judgement.data_files = reader->data_files();

  NotJudged not_judged_here;
  rules::Engine engine(std::move(rules), &not_judged_here, nullptr);
  RecordedClock clock;
  engine.set_clock([&clock] { return clock.now(); });
  if (!facts_from.empty()) {
    auto learned = introspection::names_a_cluster(facts_from)
                       ? introspection::learn_indexes_from_cluster(facts_from, engine)
                       : introspection::learn_indexes_from_dump(facts_from, engine);
    if (!learned) return learned.error();
  }
  conversation::ConversationSettings settings;
  settings.max_message_bytes = max_message_bytes;
  OfflineHost host;
  std::unordered_map<uint64_t, std::unique_ptr<conversation::Conversation>> connections;
  std::map<GroupKey, Group> groups;

  const auto conversation_of =
      [&](const recording::RecordedPacket& p) -> conversation::Conversation& {
    auto& replayed = connections[p.connection];
    if (!replayed) {
      replayed = std::make_unique<conversation::Conversation>(engine, settings, p.session, host);
      ++judgement.connections;
    }
    return *replayed;
  };

  while (true) {
    auto next = reader->next();
    if (!next) return next.error();
    if (!next->has_value()) break;
    const recording::RecordedPacket& p = **next;
    clock.set(p.offset_micros);
    switch (p.event) {
      case codec::RecordedEvent::kSessionStart:
        (void)conversation_of(p);
        continue;
      case codec::RecordedEvent::kSessionEnd:
        connections.erase(p.connection);
        continue;
      case codec::RecordedEvent::kResponse: {
        if (p.message.size() < codec::kHeaderSize) continue;
        try {
          (void)conversation_of(p).on_reply(p.message);
          conversation_of(p).release_reply_buffer();
        } catch (const std::exception&) {
          ++judgement.malformed;
        }
        continue;
      }
      case codec::RecordedEvent::kRequest:
        break;
    }
    if (p.side.unrecorded) {
      ++judgement.unrecorded;
      continue;
    }
    if (p.message.size() < codec::kHeaderSize) continue;
    ++judgement.requests;
    conversation::Conversation& conversation = conversation_of(p);
    if (p.side.present) conversation.adopt_recorded_identity(p.side.app, p.side.user);
    conversation.set_received_at(clock.now());
    not_judged_here = {};
    try {
      (void)conversation.on_request(p.message);
    } catch (const std::exception&) {
      ++judgement.malformed;
      continue;
    }
    judgement.guardrail_unknown += not_judged_here.unknown ? 1 : 0;
    judgement.schema_unjudged += not_judged_here.unjudged ? 1 : 0;
    judgement.length_unknown += not_judged_here.length ? 1 : 0;
    const auto& violations = conversation.request_violations();
    if (!violations.empty()) {
      const RequestRef at{p.connection, p.order};
      const std::string app(conversation.app_name());
      const std::string place = request_place(p.message);
      bool refused = false;
      std::set<GroupKey> counted;  // one count per group and request, however many statements
      for (const rules::Violation& v : violations) {
        const bool blocks = v.action == rules::Action::kBlock;
        refused = refused || blocks;
        const std::string& shape = v.unindexed_query().shape;
        GroupKey key{!blocks, app, rules::rule_name(v.kind), shape.empty() ? place : shape};
        if (!counted.insert(key).second) continue;
        Group& g = groups[key];
        if (g.count == 0) {
          std::tie(std::ignore, g.app, g.rule, g.shape) = key;
          g.refused = blocks;
        }
        ++g.count;
        g.requests.push_back(at);
        if (g.examples.size() < kMaxExamples) {
          g.examples.push_back({at, request_example(p.message, show_values), detail_of(v)});
        }
      }
      if (refused) judgement.refused.push_back(at);
    }
    conversation.release_request_buffer();
  }
  judgement.unverified_files = static_cast<uint64_t>(reader->unverified_files());
  judgement.groups.reserve(groups.size());
  for (auto& [key, group] : groups) judgement.groups.push_back(std::move(group));
  return judgement;
}

}  // namespace docguard::tools::whatif
