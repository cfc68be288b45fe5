// Replays a recording (replay_runner.h). A first pass reads the whole recording (checksums
// checked, nothing sent) for its connections: how many were open at once, when each ended. The
// second pass streams it: the reader thread (this one) paces each request to its recorded
// offset, holds it until every reply recorded before it has come in the replay (the recorded
// causality), and hands it to its connection's thread; each recorded reply follows to the
// thread that compares it. Memory holds the requests in flight and the operations whose cursor
// is open, never the recording.
#include "replay_runner.h"

#include <fmt/format.h>
#include <mongoc/mongoc.h>

#include <chrono>
#include <cstdio>
#include <memory>
#include <thread>
#include <unordered_map>
#include <unordered_set>

#include "connection_replay.h"
#include "docguard/cluster/upstream_uri.h"
#include "docguard/codec/bson_elements.h"
#include "docguard/codec/op_msg.h"
#include "docguard/recording/recording_reader.h"
#include "replay_clients.h"
#include "replay_dry_run.h"
#include "replay_outline.h"
#include "replay_policy.h"
#include "replay_source.h"

namespace docguard::tools {

namespace {

using Clock = std::chrono::steady_clock;

base::Error target_error(const std::string& what, const ReplayOptions& options) {
  return base::Error{
      base::ErrorKind::kConfiguration, base::ErrorSource::kConfiguration,
      options.target_option + " " + cluster::redact_uri(options.target) + ": " + what,
      cluster::redact_uri(options.target)};
}

// The target's pool, with short timeouts unless the URI sets its own: an unreachable target or
// one that refuses authentication ends the replay in seconds, not per request.
base::Expected<mongoc_client_pool_t*> open_pool(const ReplayOptions& options, size_t clients) {
  bson_error_t error;
  mongoc_uri_t* uri = mongoc_uri_new_with_error(options.target.c_str(), &error);
  if (uri == nullptr) return target_error(error.message, options);
  for (const char* option : {MONGOC_URI_SERVERSELECTIONTIMEOUTMS, MONGOC_URI_CONNECTTIMEOUTMS}) {
    if (!mongoc_uri_has_option(uri, option)) mongoc_uri_set_option_as_int32(uri, option, 5000);
  }
  mongoc_client_pool_t* pool = mongoc_client_pool_new_with_error(uri, &error);
  mongoc_uri_destroy(uri);
  if (pool == nullptr) return target_error(error.message, options);
  mongoc_client_pool_set_error_api(pool, MONGOC_ERROR_API_VERSION_2);
  mongoc_client_pool_set_appname(pool, "docguard-replay");
  mongoc_client_pool_max_size(pool, static_cast<uint32_t>(std::max<size_t>(clients, 1)));
  return pool;
}

// Connects and authenticates every slot's client before the clock starts, so that no replayed
// latency and no pacing includes a handshake the recording did not time; the first that fails
// ends the replay.
base::Expected<void> connect_all(ReplayClients& clients, const ReplayOptions& options) {
  for (size_t i = 0; i < clients.slots(); ++i) {
    codec::ScopedBson ping;
    BSON_APPEND_INT32(ping.get(), "ping", 1);
    codec::ScopedBson reply;
    bson_error_t error;
    if (!mongoc_client_command_simple(clients.slot(i).client, "admin", ping.get(), nullptr,
                                      reply.get(), &error)) {
      return target_error(error.message, options);
    }
  }
  return {};
}

// One recorded connection being replayed: its thread, and the request awaiting its reply.
struct LiveConnection {
  std::unique_ptr<ConnectionReplay> replay;
  std::thread thread;
  size_t slot = 0;
  std::shared_ptr<PendingStep> awaiting;
  int32_t awaiting_id = 0;
  std::unordered_set<int32_t> skipped;  // request ids not replayed: their replies are not either
};

class Dispatcher {
 public:
  Dispatcher(ReplayShared& shared, const RecordingOutline& o)
      : shared_(shared), outline_(o), selection_(o.selection) {}

  base::Expected<void> run() {
    auto reader = recording::RecordingReader::open(
        shared_.options.recording, recording::ReadOptions{shared_.options.accept_torn_tail});
    if (!reader) return reader.error();
    start_ = Clock::now();
    while (true) {
      auto packet = reader->next();
      if (!packet) {
        end_all();
        return packet.error();
      }
      // A failing target: nothing more is sent (the report says after how many).
      if (!packet->has_value() || shared_.abort.stopped()) break;
      handle(**packet);
    }
    end_all();
    return {};
  }

  ReplayCounts counts;
  Clock::time_point start_;

 private:
  // Waits until the recorded offset, counted from the first selected request (a replay of part
  // of a recording neither waits for the part before it nor lingers after it).
  void pace(uint64_t offset) {
    if (shared_.options.speed <= 0 || offset <= outline_.selected_first) return;
    offset = std::min(offset, outline_.selected_last);
    // At most about 300 years (--max-duration bounds it far below): no overflow of the clock.
    const double micros = std::min(
        static_cast<double>(offset - outline_.selected_first) / shared_.options.speed, 1e16);
    const Clock::time_point until =
        start_ + std::chrono::microseconds(static_cast<int64_t>(micros));
    // In slices: a replay that stopped on a failing target does not sleep out a recorded pause.
    while (!shared_.abort.stopped() && Clock::now() < until) {
      std::this_thread::sleep_until(std::min(until, Clock::now() + std::chrono::milliseconds(100)));
    }
  }

  LiveConnection& connection(uint64_t id) {
    auto& c = live_[id];
    if (!c.replay) {
      c.slot = shared_.clients.acquire_slot();
      c.replay = std::make_unique<ConnectionReplay>(shared_, c.slot);
      c.thread = std::thread([replay = c.replay.get()] { replay->run(); });
    }
    return c;
  }

  void handle(recording::RecordedPacket& p) {
    LiveConnection& c = connection(p.connection);
    if (p.event == codec::RecordedEvent::kRequest && p.message.size() >= codec::kHeaderSize) {
      request(c, p);
    } else if (p.event == codec::RecordedEvent::kResponse &&
               p.message.size() >= codec::kHeaderSize) {
      selection_.on_reply(p);
      response(c, p);
    }
    // A connection the first pass did not see (the files changed since) ends with its packet.
    const auto last = outline_.last_order.find(p.connection);
    if (last == outline_.last_order.end() || last->second == p.order) {
      pace(p.offset_micros);  // the connection lived until its recorded end
      end(p.connection);
    }
  }

  void request(LiveConnection& c, recording::RecordedPacket& p) {
    const int32_t id = codec::read_header(p.message.data()).request_id;
    if (!selection_.selects(p)) {
      ++counts.skipped["not_selected"];
      if (c.skipped.size() > 4096) c.skipped.clear();
      c.skipped.insert(id);
      shared_.progress.done.fetch_add(1, std::memory_order_relaxed);
      return;
    }
    const bool answered_by_docguard =
        p.side.verdict == "answered_by_docguard" || (p.side.refused && p.side.verdict == "nothing");
    RequestClass kind = classify_request(p.message, answered_by_docguard || p.side.unrecorded,
                                         policy(), recorded_refusal(outline_, p.connection, id));
    if (kind.skip != SkipReason::kNone) {
      count_skip(counts, kind);
      if (c.skipped.size() > 4096) c.skipped.clear();
      c.skipped.insert(id);
      shared_.progress.done.fetch_add(1, std::memory_order_relaxed);
      return;
    }
    if (!p.side.refused_statements.empty() && !shared_.options.as_sent_by_client) {
      ++counts.trimmed_batches;
    }
    shared_.gate.wait_all();
    pace(p.offset_micros);
    auto step = std::make_shared<PendingStep>();
    step->request = std::move(p.message);
    step->request_offset = p.offset_micros;
    step->refused_statements = std::move(p.side.refused_statements);
    step->kind = std::move(kind);
    // A request before the last one's reply: that reply was not recorded.
    if (c.awaiting) c.awaiting->no_reply();
    c.awaiting = step->kind.more_to_come ? nullptr : step;
    c.awaiting_id = id;
    c.replay->push(std::move(step));
  }

  void response(LiveConnection& c, recording::RecordedPacket& p) {
    const int32_t response_to = codec::read_header(p.message.data()).response_to;
    if (c.awaiting && response_to == c.awaiting_id) {
      shared_.gate.assign();
      c.awaiting->set_reply(std::move(p.message), p.offset_micros, /*gated=*/true);
      c.awaiting = nullptr;
    } else if (!c.skipped.erase(response_to)) {
      ++counts.exhaust_not_compared;  // an exhaust cursor's further batches
    }
  }

  void end(uint64_t id) {
    const auto found = live_.find(id);
    if (found == live_.end()) return;
    LiveConnection& c = found->second;
    if (c.awaiting) c.awaiting->no_reply();
    c.replay->push(nullptr);
    c.thread.join();
    merge(c.replay->counts);
    shared_.clients.release_slot(c.slot);
    live_.erase(found);
  }

  void end_all() {
    while (!live_.empty()) end(live_.begin()->first);
  }

  ReplayPolicy policy() const {
    return {shared_.options.read_only, shared_.options.allow_writes_out,
            shared_.options.as_sent_by_client};
  }

  void merge(const ReplayCounts& c) {
    counts.sent += c.sent;
    counts.failed += c.failed;
    for (const auto& [name, n] : c.skipped) counts.skipped[name] += n;
    for (const auto& [name, tally] : c.commands) {
      counts.commands[name].first += tally.first;
      counts.commands[name].second += tally.second;
    }
  }

  ReplayShared& shared_;
  const RecordingOutline& outline_;
  SelectionTracker selection_;
  std::unordered_map<uint64_t, LiveConnection> live_;
};

// The expected wall time of a paced replay, refused past --max-duration before anything is
// sent: a recording whose offsets span years (a damaged or crafted one) must not make a replay
// wait silently.
base::Expected<double> expected_seconds(const ReplayOptions& options, const RecordingOutline& o) {
  const double span = static_cast<double>(o.selected_last - o.selected_first) / 1e6;
  if (options.speed <= 0) return 0.0;
  const double expected = span / options.speed;
  if (expected > options.max_duration_seconds) {
    return base::bad_input(fmt::format(
        "replaying {:.1f} s of traffic at speed {} would take about {:.1f} s ({:.1f} days), more "
        "than --max-duration {:.0f} s: nothing was sent (--speed max does not wait; --from/--to "
        "replay part of the recording)",
        span, options.speed, expected, expected / 86400, options.max_duration_seconds));
  }
  return expected;
}

}  // namespace

void count_skip(ReplayCounts& counts, const RequestClass& kind) {
  switch (kind.skip) {
    case SkipReason::kHandshake:
      ++counts.handshakes;
      break;
    case SkipReason::kReadOnly:
      ++counts.skipped_writes;
      break;
    case SkipReason::kLegacy:
      ++counts.skipped_legacy;  // and by reason below, with the other legacy and invalid ones
      ++counts.skipped[skip_reason_name(kind.skip)];
      break;
    case SkipReason::kNotAllowed:
      ++counts.skipped_commands[kind.name.empty() ? "(unnamed)" : kind.name];
      [[fallthrough]];
    default:
      ++counts.skipped[skip_reason_name(kind.skip)];
  }
}

base::Expected<ReplayOutcome> replay_recording(const ReplayOptions& options,
                                               ReplayProgress& progress) {
  // Read through before anything is sent: a damaged recording fails here, and the connections
  // open at once are known before any is opened.
  auto o = outline(options);
  if (!o) return o.error();
  const auto expected = expected_seconds(options, *o);
  if (!expected) return expected.error();
  cluster::ensure_mongoc_initialized();
  // Before connecting, and in a dry run too (it says what a replay would do): a target that
  // names a recorded upstream is refused at once.
  if (auto other = refuse_own_source(o->source, options.target, nullptr, options.target_option);
      !other) {
    return other.error();
  }
  if (options.dry_run) return dry_run_recording(options, *o);
  if (o->peak_connections > options.max_connections) {
    return base::bad_input(fmt::format(
        "the recording has {} connections open at once, more than --max-connections {} (each "
        "replays on a thread and a connection of its own)",
        o->peak_connections, options.max_connections));
  }
  // A client of its own for each recorded connection while there are at most
  // --max-connections of them; past that, a connection that ends frees its client for the next.
  const size_t slots =
      std::max<size_t>(std::min<size_t>(o->connections, options.max_connections), 1);
  auto pool = open_pool(options, slots);
  if (!pool) return pool.error();
  const std::unique_ptr<mongoc_client_pool_t, decltype(&mongoc_client_pool_destroy)> pool_owner(
      *pool, &mongoc_client_pool_destroy);
  ReplayOutcome outcome;
  {
    ReplayClients clients(*pool, slots, options.max_sessions);
    if (auto connected = connect_all(clients, options); !connected) {
      return connected.error();
    }
    // Connected (nothing recorded sent yet): a target whose hello is the recorded cluster's.
    if (auto other = refuse_own_source(o->source, options.target, clients.slot(0).client,
                                       options.target_option);
        !other) {
      return other.error();
    }
    if (options.speed > 0) {
      std::fprintf(stderr, "replaying %.1f s of traffic at speed %g: about %.1f s\n",
                   static_cast<double>(o->selected_last - o->selected_first) / 1e6, options.speed,
                   *expected);
    }
    progress.total.store(o->requests);
    AbortWatch abort(options);
    ReplayShared shared{options, clients, {}, {}, {}, {}, progress, abort};
    Dispatcher dispatcher(shared, *o);
    auto ran = dispatcher.run();
    const auto elapsed = Clock::now() - dispatcher.start_;
    // Operations whose cursor the recording never finished are compared as they stand.
    for (auto& open : shared.open.take_all()) {
      if (!open->folded) shared.tally.add(std::move(open->op));
    }
    if (!ran) return ran.error();
    outcome.counts = std::move(dispatcher.counts);
    outcome.counts.replay_micros = static_cast<uint64_t>(
        std::chrono::duration_cast<std::chrono::microseconds>(elapsed).count());
    outcome.counts.sessions = clients.sessions();
    outcome.shapes = shared.tally.results();
    outcome.aborted = abort.result();
  }
  ReplayCounts& counts = outcome.counts;
  counts.connections = o->connections;
  counts.peak_connections = o->peak_connections;
  counts.requests = o->requests;
  counts.recorded_micros = o->last_offset - o->first_offset;
  counts.unverified_files = o->unverified_files;
  return outcome;
}

}  // namespace docguard::tools
