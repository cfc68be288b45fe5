#include "docguard/recording/recorder.h"

#include <fmt/chrono.h>
#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <ctime>

#include "docguard/base/time_text.h"
#include "docguard/recording/recording_namespace.h"
#include "writer_state.h"

namespace docguard::recording {
namespace {

// What a queued message costs against queue_bytes: its bytes and the bookkeeping beside them.
constexpr uint64_t kPacketOverhead = 160;

// The same connection is in or out of a sample for the whole recording: a hash of its id and
// the recording's, compared with the share.
bool in_sample(uint64_t connection, uint64_t generation, double share) {
  if (share >= 1.0) return true;
  uint64_t x = connection * 0x9E3779B97F4A7C15ull ^ generation;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  x ^= x >> 31;
  return static_cast<double>(x >> 11) / static_cast<double>(1ull << 53) < share;
}

bool user_matches(const std::vector<std::string>& users, std::string_view user) {
  if (users.empty()) return true;
  const std::string_view name = user.substr(0, user.find('@'));
  return std::any_of(users.begin(), users.end(),
                     [&](const std::string& u) { return u == user || u == name; });
}

}  // namespace

Recorder::Recorder(telemetry::Metrics& metrics, uint32_t max_message_bytes)
    : metrics_(metrics), max_message_bytes_(max_message_bytes) {}

Recorder::~Recorder() {
  stop();
  join_writer();
}

void Recorder::join_writer() {
  if (writer_.joinable()) writer_.join();
}

base::Expected<void> Recorder::start(const settings::RecordingSettings& settings) {
  if (auto usable = settings::check_recording_settings(settings); !usable) return usable;
  const base::Error running{base::ErrorKind::kRefused, base::ErrorSource::kDocguard,
                            "a recording is running already"};
  std::unique_lock lock(mutex_);
  if (state_ == State::kRecording) return running;
  lock.unlock();
  join_writer();  // a recording that ended by itself (cap, duration, failure)
  auto files = std::make_unique<RecordingFiles>(settings.directory, settings.max_file_bytes,
                                                settings.max_total_bytes);
  try {
    files->open();
  } catch (const std::exception& e) {
    return base::Error{base::ErrorKind::kIo, base::ErrorSource::kDocguard, e.what(),
                       settings.directory};
  }
  lock.lock();
  if (state_ == State::kRecording) return running;
  auto filters = std::make_shared<RecordingFilters>();
  filters->settings = settings;
  filters->generation = generation_.load() + 1;
  filters_ = filters;
  files_ = std::move(files);
  state_ = State::kRecording;
  reason_.clear();
  queue_.clear();
  queued_bytes_ = order_ = dropped_ = bytes_ = packets_ = 0;
  file_names_ = files_->file_names();
  stopping_ = false;
  started_ = std::chrono::steady_clock::now();
  started_at_ = base::utc_text(std::chrono::system_clock::now());
  generation_.store(filters->generation, std::memory_order_release);
  writer_ = std::thread([this] { writer_loop(); });
  active_.store(true, std::memory_order_relaxed);
  spdlog::info("recording traffic to {}", settings.directory);
  return {};
}

bool Recorder::stop() {
  {
    std::lock_guard lock(mutex_);
    if (state_ != State::kRecording) return false;
    active_.store(false, std::memory_order_relaxed);
    stopping_ = true;
    state_ = State::kStopped;
    reason_ = "stopped";
  }
  wake_.notify_one();
  join_writer();
  return true;
}

bool Recorder::admits(RecordingTap& tap, const RecordedFacts& facts) {
  const uint64_t generation = generation_.load(std::memory_order_acquire);
  if (tap.generation != generation) {
    // Once per connection and recording: the recording's filters, and the sample's verdict.
    std::lock_guard lock(mutex_);
    tap.filters = filters_;
    tap.generation = filters_ ? filters_->generation : 0;
    tap.started = false;
    tap.awaiting.clear();
    if (tap.connection == 0) tap.connection = next_connection_.fetch_add(1);
    tap.sampled = filters_ && in_sample(tap.connection, tap.generation, filters_->settings.sample);
  }
  if (!tap.sampled || !tap.filters) return false;
  const auto& s = tap.filters->settings;
  if (!s.apps.empty() && std::find(s.apps.begin(), s.apps.end(), facts.app) == s.apps.end()) {
    return false;
  }
  return user_matches(s.users, facts.user);
}

void Recorder::on_request(RecordingTap& tap, std::string_view peer, codec::Bytes message,
                          const RecordedFacts& facts) {
  if (!admits(tap, facts)) return;
  const auto& namespaces = tap.filters->settings.namespaces;
  if (!namespaces.empty()) {
    if (!namespace_admitted(namespaces, request_namespace(message))) return;
    if (tap.awaiting.size() >= 1024) tap.awaiting.erase(tap.awaiting.begin());
    tap.awaiting.push_back(codec::load_le32(message.data() + 4));
  }
  push(tap, RecordedEvent::kRequest, peer, message, facts);
}

void Recorder::on_reply(RecordingTap& tap, std::string_view peer, codec::Bytes message,
                        const RecordedFacts& facts) {
  if (!admits(tap, facts) || message.size() < codec::kHeaderSize) return;
  if (!tap.filters->settings.namespaces.empty()) {
    const int32_t response_to = codec::load_le32(message.data() + 8);
    const auto it = std::find(tap.awaiting.begin(), tap.awaiting.end(), response_to);
    if (it == tap.awaiting.end()) return;
    tap.awaiting.erase(it);
  }
  push(tap, RecordedEvent::kResponse, peer, message, facts);
}

void Recorder::on_session_end(RecordingTap& tap, std::string_view peer) {
  if (!tap.started || tap.generation != generation_.load(std::memory_order_acquire)) return;
  push(tap, RecordedEvent::kSessionEnd, peer, {}, RecordedFacts{});
}

void Recorder::push(RecordingTap& tap, RecordedEvent event, std::string_view peer,
                    codec::Bytes message, const RecordedFacts& facts) {
  Queued packet;
  packet.event = event;
  packet.connection = tap.connection;
  packet.session = peer;
  packet.message.assign(message.begin(), message.end());
  packet.app = facts.app;
  packet.user = facts.user;
  packet.command = facts.command;
  packet.verdict = facts.verdict;
  packet.rule = facts.rule;  // a short name: no allocation
  packet.refused = facts.refused;
  packet.refused_statements = facts.refused_statements;
  const uint64_t cost =
      packet.message.size() + kPacketOverhead + (tap.started ? 0 : kPacketOverhead);
  bool failed_now = false;
  bool wake = false;
  {
    std::lock_guard lock(mutex_);
    if (state_ != State::kRecording || tap.generation != generation_.load()) return;
    const auto limit = filters_->settings.queue_bytes;
    if (queued_bytes_ + cost > limit) {
      // Never wait for the disk: the recording fails, the message goes on to its destination.
      active_.store(false, std::memory_order_relaxed);
      state_ = State::kFailed;
      reason_ = fmt::format(
          "the queue of {} bytes was full: the writer fell behind the traffic "
          "(recording.queue_bytes)",
          limit);
      ++dropped_;
      failed_now = true;
    } else {
      const auto offset = std::chrono::duration_cast<std::chrono::microseconds>(
                              std::chrono::steady_clock::now() - started_)
                              .count();
      if (!tap.started) {
        Queued start;
        start.event = RecordedEvent::kSessionStart;
        start.connection = tap.connection;
        start.session = peer;
        start.order = ++order_;
        start.offset_micros = static_cast<uint64_t>(offset);
        start.upstream = facts.upstream;
        start.upstream_resolved = facts.upstream_resolved;
        queue_.push_back(std::move(start));
        tap.started = true;
      }
      packet.order = ++order_;
      packet.offset_micros = static_cast<uint64_t>(offset);
      queue_.push_back(std::move(packet));
      wake = queued_bytes_ < limit / 2 && queued_bytes_ + cost >= limit / 2;
      queued_bytes_ += cost;
    }
  }
  if (failed_now) {
    metrics_.recording_dropped.Increment();
    metrics_.recording_failures.get("queue_full").Increment();
    spdlog::error("recording failed: its queue was full (traffic goes on, unrecorded)");
    wake_.notify_one();
  } else if (wake) {
    wake_.notify_one();
  }
}

void Recorder::end_from_writer(State state, std::string reason) {
  std::lock_guard lock(mutex_);
  if (state_ != State::kRecording) return;
  active_.store(false, std::memory_order_relaxed);
  state_ = state;
  reason_ = std::move(reason);
  stopping_ = true;
}

void Recorder::writer_loop() {
  WriterState w;
  {
    std::lock_guard lock(mutex_);
    w.policy = filters_->settings.redaction;
    w.cursors = codec::SensitiveCursors(w.policy.max_sensitive_cursors);
    const auto max = filters_->settings.max_duration;
    if (max.count() > 0) w.deadline = started_ + max;
  }
  while (true) {
    std::deque<Queued> batch;
    bool last = false;
    {
      std::unique_lock lock(mutex_);
      // A short nap rather than a wake-up per message: a notify costs the hot path a syscall.
      wake_.wait_for(lock, std::chrono::milliseconds(20),
                     [&] { return stopping_ || state_ != State::kRecording; });
      batch.swap(queue_);
      queued_bytes_ = 0;
      last = stopping_ || state_ != State::kRecording;
    }
    write_batch(batch, w);
    if (!last && std::chrono::steady_clock::now() >= w.deadline) {
      end_from_writer(State::kStopped, "recording.max_duration reached");
      continue;  // once more: what was queued meanwhile, then the end
    }
    if (last) break;
  }
  // The connections still open end with the recording, so a replay closes them.
  std::deque<Queued> ends;
  {
    std::lock_guard lock(mutex_);
    for (const auto& [connection, session] : w.open) {
      Queued end;
      end.event = RecordedEvent::kSessionEnd;
      end.connection = connection;
      end.session = session;
      end.order = ++order_;
      end.offset_micros =
          static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::microseconds>(
                                    std::chrono::steady_clock::now() - started_)
                                    .count());
      ends.push_back(std::move(end));
    }
  }
  write_batch(ends, w);
  std::string error;
  try {
    files_->close();
  } catch (const std::exception& e) {
    error = e.what();
  }
  std::lock_guard lock(mutex_);
  if (!error.empty() && state_ != State::kFailed) {
    state_ = State::kFailed;
    reason_ = error;
    metrics_.recording_failures.get("write_error").Increment();
  }
  spdlog::info("recording {}: {} packets, {} bytes in {}", reason_, files_->packets(),
               files_->bytes(), files_->directory().string());
}

}  // namespace docguard::recording
