// The recorder's writer thread's work on each batch, and the recorder's status.
#include <spdlog/spdlog.h>

#include <algorithm>
#include <unordered_map>

#include "docguard/base/json_writer.h"
#include "docguard/codec/recording_redaction.h"
#include "docguard/recording/recorded_shape.h"
#include "docguard/recording/recorded_source.h"
#include "docguard/recording/recorder.h"
#include "docguard/recording/recording_namespace.h"
#include "writer_state.h"

namespace docguard::recording {

namespace {

const char* event_name(RecordedEvent e) {
  switch (e) {
    case RecordedEvent::kRequest:
      return "request";
    case RecordedEvent::kResponse:
      return "response";
    case RecordedEvent::kSessionStart:
      return "session_start";
    case RecordedEvent::kSessionEnd:
      return "session_end";
  }
  return "unknown";
}

// Where the traffic went: a session_start's upstream server, a hello reply's cluster identity
// (a JSON object, recorded_source.h). Empty on most lines.
struct SourceFacts {
  std::string_view upstream;
  std::string_view upstream_resolved;
  std::string_view source_json;
};

// docguard's facts of one packet, keyed like the packet (connection, order): one JSON line.
std::string side_line(const PacketHeader& h, std::string_view ns, std::string_view app,
                      std::string_view user, std::string_view command, std::string_view shape,
                      std::string_view verdict, std::string_view rule, bool refused, bool marker,
                      std::string_view refused_statements, const SourceFacts& source) {
  json::Writer w;
  w.begin_object().member("connection", h.connection).member("order", h.order);
  w.member("event", event_name(h.event));
  const auto member = [&w](const char* name, std::string_view value) {
    if (!value.empty()) w.member(name, value);
  };
  member("app", app);
  member("user", user);
  member("command", command);
  member("ns", ns);
  member("shape", shape);
  member("verdict", verdict);
  member("rule", rule);
  if (refused) w.member("refused", true);
  // Digits and commas only (the session writes them): a JSON array as it stands.
  if (!refused_statements.empty()) {
    w.key("refused_statements").raw("[" + std::string(refused_statements) + "]");
  }
  if (marker) w.member("unrecorded", true);
  member("upstream", source.upstream);
  member("upstream_resolved", source.upstream_resolved);
  if (!source.source_json.empty()) w.key("source").raw(source.source_json);
  w.end_object();
  return w.take();
}

// Whether `response_to` names a sensitive request among `requests` (and forgets it); `*cursor`:
// the cursor that request continued.
bool take_sensitive(std::vector<SensitiveRequest>& requests, int32_t response_to, int64_t* cursor) {
  const auto it = std::find_if(requests.begin(), requests.end(),
                               [&](const auto& r) { return r.request_id == response_to; });
  if (it == requests.end()) return false;
  *cursor = it->cursor;
  requests.erase(it);
  return true;
}

// Remembers a connection's sensitive request (or exhaust reply) among a few, oldest forgotten
// first.
void remember_sensitive(std::vector<SensitiveRequest>& requests, SensitiveRequest request) {
  if (requests.size() >= 64) requests.erase(requests.begin());
  requests.push_back(request);
}

// Remembers a connection's request id among a few (oldest forgotten first).
void remember(std::vector<int32_t>& ids, int32_t id) {
  if (ids.size() >= 64) ids.erase(ids.begin());
  ids.push_back(id);
}

// Whether `response_to` answers one of the remembered request ids (and forgets it).
bool take_id(std::vector<int32_t>& ids, int32_t response_to) {
  const auto it = std::find(ids.begin(), ids.end(), response_to);
  if (it == ids.end()) return false;
  ids.erase(it);
  return true;
}

}  // namespace

void Recorder::fail_write(const std::exception& e, WriterState& w) {
  spdlog::error("recording failed: {}", e.what());
  metrics_.recording_failures.get("write_error").Increment();
  {
    std::lock_guard lock(mutex_);
    if (state_ == State::kRecording) {
      active_.store(false, std::memory_order_relaxed);
      state_ = State::kFailed;
      reason_ = e.what();
      stopping_ = true;
    }
  }
  w.broken = true;
}

void Recorder::write_batch(std::deque<Queued>& batch, WriterState& w) {
  uint64_t written = 0;
  for (auto& p : batch) {
    if (w.broken) break;
    PacketHeader h{p.event, p.connection, p.session, p.offset_micros, p.order};
    codec::RecordableMessage safe;
    std::string ns;
    std::string shape;
    std::string source;  // a hello reply's cluster identity, when not written before
    if (p.event == RecordedEvent::kRequest) {
      // Only a hello the upstream answered: docguard's own answer names docguard's persona.
      if (is_hello_command(p.command) && p.verdict == "forwarded" &&
          p.message.size() >= codec::kHeaderSize) {
        remember(w.hellos[p.connection], codec::load_le32(p.message.data() + 4));
      }
      safe = codec::redact_request(p.message, max_message_bytes_, w.policy, &w.cursors);
      if (safe.sensitive) {
        remember_sensitive(w.sensitive[p.connection],
                           {codec::load_le32(safe.bytes.data() + 4), safe.cursor});
      }
      ns = request_namespace(safe.bytes);
      // Here on the writer thread, not on the session's: the shape costs a walk of the command.
      if (!safe.marker) shape = shape_of_request(safe.bytes).text;
    } else if (p.event == RecordedEvent::kResponse) {
      const int32_t response_to =
          p.message.size() >= codec::kHeaderSize ? codec::load_le32(p.message.data() + 8) : 0;
      auto it = w.sensitive.find(p.connection);
      int64_t cursor = 0;
      const bool to_sensitive =
          it != w.sensitive.end() && take_sensitive(it->second, response_to, &cursor);
      // The upstream's hello reply as it came, before the redaction and before any rewrite for
      // the client: which cluster answered. Written once per identity, the line stays small.
      if (auto hello = w.hellos.find(p.connection);
          hello != w.hellos.end() && take_id(hello->second, response_to)) {
        source = hello_source_json(p.message);
        if (std::find(w.sources.begin(), w.sources.end(), source) != w.sources.end()) {
          source.clear();
        } else if (!source.empty() && w.sources.size() < 64) {
          w.sources.push_back(source);
        }
      }
      safe = codec::redact_reply(p.message, to_sensitive, max_message_bytes_, w.policy, &w.cursors,
                                 cursor);
      // An exhaust cursor's next reply answers this reply's own request id, with no request in
      // between: a sensitive reply with moreToCome (or one too broken to tell) passes its
      // sensitivity and its cursor on to it.
      const bool passes_on = (safe.sensitive && safe.more_to_come) || (to_sensitive && safe.marker);
      if (passes_on && p.message.size() >= codec::kHeaderSize) {
        remember_sensitive(w.sensitive[p.connection],
                           {codec::load_le32(p.message.data() + 4), cursor});
      }
    }
    // The raw message is not needed past this point: no copy of it outlives the redaction.
    p.message.clear();
    p.message.shrink_to_fit();
    if (p.event == RecordedEvent::kSessionStart) w.open[p.connection] = p.session;
    if (p.event == RecordedEvent::kSessionEnd) {
      w.open.erase(p.connection);
      w.sensitive.erase(p.connection);
      w.hellos.erase(p.connection);
    }
    const std::string line =
        side_line(h, ns, p.app, p.user, p.command, shape, p.verdict, p.rule, p.refused, safe.marker,
                  p.refused_statements, {p.upstream, p.upstream_resolved, source});
    try {
      if (files_->write(h, safe.bytes, line) == RecordingFiles::Written::kCapReached) {
        end_from_writer(State::kStopped, "recording.max_total_bytes reached");
        w.broken = true;
        break;
      }
      ++written;
    } catch (const std::exception& e) {
      fail_write(e, w);
    }
  }
  // Each batch reaches the files before the next is taken: a docguard killed mid-recording
  // leaves what it had written (a reader stops at a torn last packet). Not each message: a
  // batch is what the sessions queued while the last one was written.
  if (written > 0 && !w.broken) {
    try {
      files_->flush();
    } catch (const std::exception& e) {
      fail_write(e, w);
    }
  }
  if (written > 0) metrics_.recording_packets.Increment(static_cast<double>(written));
  std::lock_guard lock(mutex_);
  bytes_ = files_->bytes();
  packets_ = files_->packets();
  file_names_ = files_->file_names();
}

std::string Recorder::status_json() const {
  std::lock_guard lock(mutex_);
  const char* state = state_ == State::kRecording ? "recording"
                      : state_ == State::kFailed  ? "failed"
                                                  : "stopped";
  json::Writer w;
  w.begin_object().member("state", state).member("reason", reason_);
  if (filters_) {
    const auto& s = filters_->settings;
    w.member("directory", s.directory).member("started_at", started_at_).key("files");
    w.begin_array();
    for (const std::string& name : file_names_) w.value(name);
    w.end_array();
    w.member("bytes", bytes_).member("packets", packets_).member("dropped", dropped_);
    w.member("queued_bytes", queued_bytes_).member("queue_bytes", s.queue_bytes);
    w.member("max_file_bytes", s.max_file_bytes).member("max_total_bytes", s.max_total_bytes);
    w.member("sample", s.sample).member("max_duration_ms", s.max_duration.count());
  } else {
    w.key("files").begin_array().end_array();
    w.member("bytes", 0).member("packets", 0).member("dropped", 0);
  }
  w.end_object();
  return w.take();
}

}  // namespace docguard::recording
