// The traffic recorder: sessions hand it each request and reply they relay; a thread of its own
// takes the secrets out and writes the files (recording_files.h). It never slows or fails live
// traffic: a hand-off is a copy into a bounded queue, and when the queue is full the recording
// fails (logged once, counted, shown by GET /recording and /status) while traffic goes on.
// Not recording, a session's only cost is one relaxed atomic load per message (active()).
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "docguard/base/expected.h"
#include "docguard/codec/message.h"
#include "docguard/recording/recording_files.h"
#include "docguard/settings/recording_settings.h"
#include "docguard/telemetry/metrics.h"

namespace docguard::recording {

// What one recording admits (its settings, fixed while it runs).
struct RecordingFilters;

// One connection's part in the recording, kept by its session (used by its thread only).
struct RecordingTap {
  uint64_t connection = 0;  // the connection's id in the files, given on first use
  uint64_t generation = 0;  // the recording the rest is about
  std::shared_ptr<const RecordingFilters> filters;
  bool sampled = false;
  bool started = false;  // its session-start packet is queued
  // With a namespace filter: the requests recorded, whose replies are recorded too.
  std::vector<int32_t> awaiting;
};

// What docguard knows of the connection and the request, for the side file.
struct RecordedFacts {
  std::string_view app;
  std::string_view user;
  std::string_view command;  // requests: the command's name
  std::string_view verdict;  // requests: forwarded, answered_by_docguard, nothing
  // Requests docguard judged: the deciding rule's name (rule_kinds.h), and whether docguard
  // refused the request or some of its statements (rather than only warning).
  std::string_view rule = {};
  bool refused = false;
  // The refused statements' indexes in the client's batch ("1,3"), when docguard refused some
  // statements of a batch and forwarded the rest: a replay sends what was forwarded.
  std::string_view refused_statements = {};
  // The upstream server the connection was forwarded to, as configured (host:port) and as its
  // socket resolved it (ip:port): written once per connection, on its session_start line, so a
  // replay can refuse to run against the cluster the traffic came from.
  std::string_view upstream = {};
  std::string_view upstream_resolved = {};
};

class Recorder {
 public:
  Recorder(telemetry::Metrics& metrics, uint32_t max_message_bytes);
  ~Recorder();
  Recorder(const Recorder&) = delete;
  Recorder& operator=(const Recorder&) = delete;

  // True while a recording takes messages: the hot path's only check.
  bool active() const { return active_.load(std::memory_order_relaxed); }

  // Starts a recording, or says why it did not start: bad settings (kConfiguration), one is
  // running (kRefused), the directory cannot be written (kIo).
  base::Expected<void> start(const settings::RecordingSettings& settings);
  // Stops the recording and waits until its queue is written and its files are closed. False
  // when none was running.
  bool stop();
  // {"state": "recording|stopped|failed", "reason", "directory", "files", "bytes", "packets",
  //  "dropped", "queued_bytes", ...}
  std::string status_json() const;

  // The session's hooks; call them only when active().
  void on_request(RecordingTap& tap, std::string_view peer, codec::Bytes message,
                  const RecordedFacts& facts);
  void on_reply(RecordingTap& tap, std::string_view peer, codec::Bytes message,
                const RecordedFacts& facts);
  void on_session_end(RecordingTap& tap, std::string_view peer);

 private:
  enum class State { kStopped, kRecording, kFailed };
  struct Queued {
    RecordedEvent event = RecordedEvent::kRequest;
    uint64_t connection = 0;
    uint64_t order = 0;
    uint64_t offset_micros = 0;
    std::string session;
    std::vector<uint8_t> message;
    std::string app, user, command, verdict, rule, refused_statements;
    std::string upstream, upstream_resolved;  // session_start only
    bool refused = false;
  };
  struct WriterState;

  // Whether this connection's message goes in: the tap follows the current recording, then
  // the sample and the app and user filters.
  bool admits(RecordingTap& tap, const RecordedFacts& facts);
  void push(RecordingTap& tap, RecordedEvent event, std::string_view peer, codec::Bytes message,
            const RecordedFacts& facts);
  void writer_loop();
  void write_batch(std::deque<Queued>& batch, WriterState& w);
  // Fails the recording on a write or flush error: nothing more goes to the files.
  void fail_write(const std::exception& e, WriterState& w);
  // Ends the recording from the writer thread (cap, duration, write error).
  void end_from_writer(State state, std::string reason);
  void join_writer();

  telemetry::Metrics& metrics_;
  const uint32_t max_message_bytes_;
  std::atomic<bool> active_{false};
  std::atomic<uint64_t> generation_{0};
  std::atomic<uint64_t> next_connection_{1};

  mutable std::mutex mutex_;
  std::condition_variable wake_;
  State state_ = State::kStopped;
  std::string reason_;
  std::shared_ptr<const RecordingFilters> filters_;
  std::unique_ptr<RecordingFiles> files_;  // the writer thread's while it runs
  std::deque<Queued> queue_;
  uint64_t queued_bytes_ = 0;
  uint64_t order_ = 0;
  uint64_t dropped_ = 0;
  bool stopping_ = false;
  std::chrono::steady_clock::time_point started_;
  std::string started_at_;  // UTC, ISO 8601
  // Copied from the files after each batch, for status_json.
  uint64_t bytes_ = 0;
  uint64_t packets_ = 0;
  std::vector<std::string> file_names_;
  std::thread writer_;
};

}  // namespace docguard::recording
