// Replays a recording: packets grouped per connection, requests paired with their recorded
// replies, one thread per connection replaying its requests in order at the recorded offsets
// (scaled by the speed) through a libmongoc client of one pool, each answer compared.
#include "replay_runner.h"

#include <fmt/format.h>
#include <mongoc/mongoc.h>

#include <chrono>
#include <latch>
#include <map>
#include <memory>
#include <optional>
#include <thread>

#include "docguard/cluster/upstream_uri.h"
#include "docguard/codec/bson_elements.h"
#include "docguard/codec/op_msg.h"
#include "docguard/proxy/recording_reader.h"
#include "docguard/proxy/replay_request.h"

namespace docguard::proxy {

namespace {

using Clock = std::chrono::steady_clock;

// A recorded request and, when one was recorded, its reply.
struct Step {
  std::vector<uint8_t> request;
  uint64_t request_offset = 0;
  std::vector<uint8_t> reply;
  uint64_t reply_offset = 0;
};

struct RecordedConnection {
  uint64_t id = 0;
  std::vector<Step> steps;  // in the connection's order
  uint64_t end_offset = 0;  // its last packet: the session's end, when it was recorded
};

struct Loaded {
  std::vector<RecordedConnection> connections;
  uint64_t first_offset = 0;
  uint64_t last_offset = 0;
};

base::Expected<Loaded> load(const std::filesystem::path& dir) {
  auto reader = RecordingReader::open(dir);
  if (!reader) return reader.error();
  Loaded loaded;
  std::map<uint64_t, RecordedConnection> by_id;
  // Per connection: request id -> its step, for the reply (responseTo) to find it.
  std::map<uint64_t, std::map<int32_t, size_t>> open_requests;
  bool first = true;
  while (true) {
    auto packet = reader->next();
    if (!packet) return packet.error();
    if (!packet->has_value()) break;
    RecordedPacket& p = **packet;
    if (first) loaded.first_offset = p.offset_micros;
    first = false;
    loaded.last_offset = std::max(loaded.last_offset, p.offset_micros);
    RecordedConnection& connection = by_id[p.connection];
    connection.id = p.connection;
    connection.end_offset = std::max(connection.end_offset, p.offset_micros);
    if (p.message.size() < codec::kHeaderSize) continue;  // session events
    const codec::MsgHeader header = codec::read_header(p.message.data());
    if (p.event == RecordedEvent::kRequest) {
      open_requests[p.connection][header.request_id] = connection.steps.size();
      connection.steps.push_back(Step{std::move(p.message), p.offset_micros, {}, 0});
    } else if (p.event == RecordedEvent::kResponse) {
      auto& open = open_requests[p.connection];
      const auto found = open.find(header.response_to);
      if (found == open.end()) continue;  // an exhaust cursor's further replies
      Step& step = connection.steps[found->second];
      step.reply = std::move(p.message);
      step.reply_offset = p.offset_micros;
      open.erase(found);
    }
  }
  for (auto& [id, connection] : by_id) loaded.connections.push_back(std::move(connection));
  return loaded;
}

// What one connection's thread shares with the others.
struct Shared {
  const ReplayOptions& options;
  mongoc_client_pool_t* pool;
  SessionMap sessions;
  CursorMap cursors;
  Clock::time_point start;  // written before `go` opens
  uint64_t first_offset = 0;
  ReplayProgress& progress;
  std::latch& connected;  // every connection ready (and the starter)
  std::latch& go;         // the clock has started
};

constexpr size_t kMaxShownJson = 8192;

void append_shown(std::string& out, const codec::BsonView& doc) {
  if (out.size() >= kMaxShownJson || doc.empty()) return;
  if (!out.empty()) out += "\n";
  out += codec::to_json(doc);
  if (out.size() > kMaxShownJson) {
    out.resize(kMaxShownJson);
    out += " ...";
  }
}

class ConnectionReplay {
 public:
  ConnectionReplay(Shared& shared, const RecordedConnection& recorded)
      : shared_(shared), recorded_(recorded) {}

  void run() {
    client_ = mongoc_client_pool_pop(shared_.pool);
    // Connect and authenticate before the clock starts, so that no replayed latency and no
    // pacing includes a handshake the recording did not time.
    if (!recorded_.steps.empty()) {
      codec::ScopedBson ping;
      BSON_APPEND_INT32(ping.get(), "ping", 1);
      codec::ScopedBson reply;
      mongoc_client_command_simple(client_, "admin", ping.get(), nullptr, reply.get(), nullptr);
    }
    shared_.connected.count_down();
    shared_.go.wait();
    for (const Step& step : recorded_.steps) {
      replay(step);
      shared_.progress.done.fetch_add(1, std::memory_order_relaxed);
    }
    // The connection lived until its recorded end (an application's pause before it closed):
    // so does the replay's, and a replay at 1x lasts as long as the recording.
    pace(recorded_.end_offset);
    for (auto& [key, session] : sessions_) mongoc_client_session_destroy(session);
    sessions_.clear();
    mongoc_client_pool_push(shared_.pool, client_);
  }

  ReplayCounts counts;
  std::vector<ComparedOperation> operations;

 private:
  void pace(uint64_t offset) {
    if (shared_.options.speed <= 0) return;
    const double micros =
        static_cast<double>(offset - shared_.first_offset) / shared_.options.speed;
    std::this_thread::sleep_until(shared_.start +
                                  std::chrono::microseconds(static_cast<int64_t>(micros)));
  }

  void replay(const Step& step) {
    ReplayRequest request = rewrite_request(step.request, shared_.sessions, shared_.cursors);
    if (request.action == RequestAction::kHandshake) {
      ++counts.handshakes;
      return;
    }
    if (request.action == RequestAction::kUnsupported) {
      ++counts.skipped_legacy;
      return;
    }
    if (shared_.options.read_only && request.is_write) {
      ++counts.skipped_writes;
      return;
    }
    pace(step.request_offset);
    // A getMore continues the operation that opened its cursor; anything else starts one.
    size_t index = operations.size();
    const auto opened = cursor_operations_.find(request.recorded_cursor);
    if (request.name == "getMore" && opened != cursor_operations_.end()) {
      index = opened->second;
    } else {
      const RequestShape shape = shape_of_request(step.request);
      operations.push_back(ComparedOperation{});
      operations.back().shape = shape.text;
      operations.back().sorted = shape.sorted;
    }
    ComparedOperation& op = operations[index];
    const codec::BsonView recorded_reply = reply_document(step.reply);
    if (!step.reply.empty()) {
      add_reply(op.recorded, recorded_reply);
      op.recorded_micros.push_back(step.reply_offset - step.request_offset);
    }
    append_shown(op.request_json, request.command.view());
    append_shown(op.recorded_reply_json, recorded_reply);

    codec::ScopedBson reply;
    const auto started = Clock::now();
    const bool answered = send(request, reply);
    const auto micros =
        std::chrono::duration_cast<std::chrono::microseconds>(Clock::now() - started).count();
    ++counts.sent;
    if (!answered) {
      ++counts.failed;
      if (op.live_error.empty()) op.live_error = failure_;
      return;
    }
    auto& [sent, ok] = counts.commands[request.name];
    ++sent;
    codec::BsonElements status(reply.get());
    ok += status.find("ok") && status.as_double() == 1.0;
    // An unacknowledged write (moreToCome), or a request whose reply the recording ended
    // before: nothing to compare the live reply with. libmongoc waits for one all the same.
    if (step.reply.empty()) return;
    op.live_micros.push_back(static_cast<uint64_t>(micros));
    add_reply(op.live, reply.view());
    append_shown(op.live_reply_json, reply.view());
    // The recorded cursor id now means the live one, on the server that holds it.
    if (op.recorded.cursor_id != 0 && op.live.cursor_id != 0) {
      shared_.cursors.put(op.recorded.cursor_id, {op.live.cursor_id, server_id_});
      cursor_operations_[op.recorded.cursor_id] = index;
    }
  }

  // Runs the command; false when no reply came at all (the server's refusals are replies).
  bool send(const ReplayRequest& request, codec::ScopedBson& reply) {
    std::unique_ptr<mongoc_read_prefs_t, decltype(&mongoc_read_prefs_destroy)> prefs(
        mongoc_read_prefs_new(read_mode(request.read_preference)), &mongoc_read_prefs_destroy);
    bson_error_t error;
    server_id_ = request.server_id;
    if (server_id_ == 0) {
      // A write goes to the primary: libmongoc takes no read preference with it.
      mongoc_server_description_t* server = mongoc_client_select_server(
          client_, request.is_write, request.is_write ? nullptr : prefs.get(), &error);
      if (server == nullptr) {
        bson_init(reply.get());
        return record_failure(error);
      }
      server_id_ = mongoc_server_description_id(server);
      mongoc_server_description_destroy(server);
    }
    codec::ScopedBson opts;
    BSON_APPEND_INT32(opts.get(), "serverId", static_cast<int32_t>(server_id_));
    if (!request.lsid.empty()) {
      mongoc_client_session_t* session = session_for(request.lsid, error);
      if (session == nullptr || !mongoc_client_session_append(session, opts.get(), &error)) {
        bson_init(reply.get());
        return record_failure(error);
      }
    }
    const char* db = request.database.empty() ? "admin" : request.database.c_str();
    const bool ok = mongoc_client_command_with_opts(client_, db, request.command.get(),
                                                    request.is_write ? nullptr : prefs.get(),
                                                    opts.get(), reply.get(), &error);
    if (!ok && reply.get()->len <= 5) return record_failure(error);
    return true;
  }

  // The libmongoc session standing for a recorded lsid on this connection: started on first
  // use, so its server session id is a fresh one.
  mongoc_client_session_t* session_for(const codec::BsonView& lsid, bson_error_t& error) {
    std::string key(reinterpret_cast<const char*>(lsid.data), lsid.size);
    const auto found = sessions_.find(key);
    if (found != sessions_.end()) return found->second;
    mongoc_client_session_t* session = mongoc_client_start_session(client_, nullptr, &error);
    if (session != nullptr) sessions_.emplace(std::move(key), session);
    return session;
  }

  bool record_failure(const bson_error_t& error) {
    failure_ = error.message;
    return false;
  }

  static mongoc_read_mode_t read_mode(const std::string& mode) {
    if (mode == "secondary") return MONGOC_READ_SECONDARY;
    if (mode == "secondaryPreferred") return MONGOC_READ_SECONDARY_PREFERRED;
    if (mode == "primaryPreferred") return MONGOC_READ_PRIMARY_PREFERRED;
    if (mode == "nearest") return MONGOC_READ_NEAREST;
    return MONGOC_READ_PRIMARY;
  }

  Shared& shared_;
  const RecordedConnection& recorded_;
  mongoc_client_t* client_ = nullptr;
  uint32_t server_id_ = 0;
  std::string failure_;  // libmongoc's message when the last command got no reply
  std::map<int64_t, size_t> cursor_operations_;               // recorded cursor id -> its operation
  std::map<std::string, mongoc_client_session_t*> sessions_;  // SessionMap key -> session
};

}  // namespace

base::Expected<ReplayOutcome> replay_recording(const ReplayOptions& options,
                                               ReplayProgress& progress) {
  auto loaded = load(options.recording);
  if (!loaded) return loaded.error();
  if (loaded->connections.size() > options.max_connections) {
    return base::bad_input(fmt::format(
        "the recording has {} connections, more than --max-connections {} (each replays on a "
        "thread and a connection of its own)",
        loaded->connections.size(), options.max_connections));
  }
  cluster::ensure_mongoc_initialized();
  bson_error_t error;
  mongoc_uri_t* uri = mongoc_uri_new_with_error(options.target.c_str(), &error);
  if (uri == nullptr) {
    return base::Error{base::ErrorKind::kConfiguration, base::ErrorSource::kConfiguration,
                       std::string("--target: ") + error.message,
                       cluster::redact_uri(options.target)};
  }
  mongoc_client_pool_t* pool = mongoc_client_pool_new_with_error(uri, &error);
  mongoc_uri_destroy(uri);
  if (pool == nullptr) {
    return base::Error{base::ErrorKind::kConfiguration, base::ErrorSource::kConfiguration,
                       std::string("--target: ") + error.message,
                       cluster::redact_uri(options.target)};
  }
  mongoc_client_pool_set_error_api(pool, MONGOC_ERROR_API_VERSION_2);
  mongoc_client_pool_set_appname(pool, "docguard-replay");
  // Every recorded connection replays at once: the pool must not make one wait for another.
  mongoc_client_pool_max_size(
      pool, static_cast<uint32_t>(std::max<size_t>(loaded->connections.size(), 1)));

  ReplayOutcome outcome;
  for (const RecordedConnection& connection : loaded->connections) {
    progress.total.fetch_add(connection.steps.size(), std::memory_order_relaxed);
  }
  std::latch connected(static_cast<std::ptrdiff_t>(loaded->connections.size()) + 1);
  std::latch go(1);
  Shared shared{options, pool, {}, {}, Clock::now(), loaded->first_offset, progress, connected, go};
  std::vector<std::unique_ptr<ConnectionReplay>> replays;
  replays.reserve(loaded->connections.size());
  for (const RecordedConnection& connection : loaded->connections) {
    replays.push_back(std::make_unique<ConnectionReplay>(shared, connection));
  }
  {
    std::vector<std::jthread> threads;
    threads.reserve(replays.size());
    for (auto& replay : replays) threads.emplace_back([&replay] { replay->run(); });
    connected.arrive_and_wait();
    shared.start = Clock::now();
    go.count_down();
  }
  const auto elapsed = Clock::now() - shared.start;
  mongoc_client_pool_destroy(pool);

  ReplayCounts& counts = outcome.counts;
  counts.connections = loaded->connections.size();
  counts.recorded_micros = loaded->last_offset - loaded->first_offset;
  counts.replay_micros =
      static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::microseconds>(elapsed).count());
  for (auto& replay : replays) {
    const ReplayCounts& c = replay->counts;
    counts.sent += c.sent;
    counts.handshakes += c.handshakes;
    counts.skipped_writes += c.skipped_writes;
    counts.skipped_legacy += c.skipped_legacy;
    counts.failed += c.failed;
    for (const auto& [name, tally] : c.commands) {
      counts.commands[name].first += tally.first;
      counts.commands[name].second += tally.second;
    }
    for (ComparedOperation& op : replay->operations) outcome.operations.push_back(std::move(op));
  }
  counts.requests = progress.total.load();
  return outcome;
}

}  // namespace docguard::proxy
