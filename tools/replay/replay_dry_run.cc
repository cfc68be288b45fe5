// The dry run (replay_dry_run.h): one line per recorded request on stdout.
#include "replay_dry_run.h"

#include <fmt/format.h>

#include <cstdio>
#include <map>
#include <unordered_map>

#include "docguard/codec/bson_elements.h"
#include "docguard/codec/op_msg.h"
#include "docguard/recording/recording_reader.h"
#include "docguard/tools/replay_request.h"

namespace docguard::tools {

namespace {

// The recorded lsid's id (a UUID) in hex, as the dry run names the session.
std::string hex_of(const codec::BsonView& lsid) {
  codec::BsonElements id(lsid);
  uint8_t subtype = 0;
  std::string_view bytes;
  if (!id.find("id") || !id.binary(&subtype, &bytes)) return "(unreadable)";
  std::string out;
  for (const char byte : bytes) out += fmt::format("{:02x}", static_cast<uint8_t>(byte));
  return out;
}

class DryRun {
 public:
  DryRun(const ReplayOptions& options, const RecordingOutline& o)
      : options_(options), outline_(o), selection_(o.selection) {}

  base::Expected<void> run() {
    auto reader = recording::RecordingReader::open(
        options_.recording, recording::ReadOptions{options_.accept_torn_tail});
    if (!reader) return reader.error();
    while (true) {
      auto packet = reader->next();
      if (!packet) return packet.error();
      if (!packet->has_value()) break;
      const recording::RecordedPacket& p = **packet;
      if (p.message.size() < codec::kHeaderSize) continue;
      if (p.event == codec::RecordedEvent::kRequest) {
        request(p);
      } else if (p.event == codec::RecordedEvent::kResponse) {
        selection_.on_reply(p);
        response(p);
      }
    }
    return {};
  }

  ReplayCounts counts;
  size_t sessions() const { return sessions_.size(); }

 private:
  std::string where(const recording::RecordedPacket& p) const {
    return fmt::format("order {} (connection {}, +{:.3f} s)", p.order, p.connection,
                       static_cast<double>(p.offset_micros - outline_.first_offset) / 1e6);
  }

  void skip(const recording::RecordedPacket& p, std::string_view name, std::string_view why) {
    std::printf("%s: skip %s: %s\n", where(p).c_str(),
                name.empty() ? "(unnamed)" : std::string(name).c_str(), std::string(why).c_str());
  }

  void request(const recording::RecordedPacket& p) {
    if (!selection_.selects(p)) {
      ++counts.skipped["not_selected"];
      skip(p, p.side.command, "not_selected");
      return;
    }
    const bool answered_by_docguard =
        p.side.verdict == "answered_by_docguard" || (p.side.refused && p.side.verdict == "nothing");
    const RequestClass kind = classify_request(
        p.message, answered_by_docguard || p.side.unrecorded,
        {options_.read_only, options_.allow_writes_out, options_.as_sent_by_client},
        recorded_refusal(outline_, p.connection, codec::read_header(p.message.data()).request_id));
    if (kind.skip != SkipReason::kNone) {
      count_skip(counts, kind);
      skip(p, kind.name, skip_reason_name(kind.skip));
      return;
    }
    const std::span<const int32_t> refused =
        options_.as_sent_by_client ? std::span<const int32_t>() : p.side.refused_statements;
    const ReplayRequest r = rewrite_request(p.message, CursorMap{}, refused);
    if (r.action != RequestAction::kSend) {
      const char* why = skip_reason_of(r.action);
      ++counts.skipped[why];
      skip(p, r.name, why);
      return;
    }
    if (!refused.empty()) ++counts.trimmed_batches;
    ++counts.sent;
    ++counts.commands[r.name].first;
    std::string line = fmt::format("{}: send {} on {}", where(p), r.name,
                                   r.database.empty() ? "admin" : r.database);
    if (!p.side.ns.empty()) line += " (namespace " + p.side.ns + ")";
    if (!r.lsid.empty()) {
      const std::string lsid = hex_of(r.lsid);
      auto [it, added] = sessions_.try_emplace(lsid, sessions_.size() + 1);
      line += fmt::format(", recorded lsid {} -> session {}{}", lsid, it->second,
                          added ? " (new)" : "");
    }
    if (r.recorded_cursor != 0) {
      const auto opener = cursor_opener_.find(r.recorded_cursor);
      line += opener == cursor_opener_.end()
                  ? fmt::format(", cursor {} -> (opened before the recording: no live cursor)",
                                r.recorded_cursor)
                  : fmt::format(", cursor {} -> (live id of request at order {})",
                                r.recorded_cursor, opener->second);
    }
    if (!refused.empty())
      line += fmt::format(", without the {} refused statements", refused.size());
    std::printf("%s\n", line.c_str());
    auto& pending = awaiting_[p.connection];
    if (pending.size() >= 64) pending.erase(pending.begin());
    pending[codec::read_header(p.message.data()).request_id] = p.order;
  }

  void response(const recording::RecordedPacket& p) {
    const auto connection = awaiting_.find(p.connection);
    if (connection == awaiting_.end()) return;
    const auto request = connection->second.find(codec::read_header(p.message.data()).response_to);
    if (request == connection->second.end()) return;
    const int64_t cursor = reply_cursor_id(p.message);
    if (cursor != 0) cursor_opener_[cursor] = request->second;
    connection->second.erase(request);
  }

  const ReplayOptions& options_;
  const RecordingOutline& outline_;
  SelectionTracker selection_;
  std::map<std::string, size_t> sessions_;  // recorded lsid -> the live session standing for it
  std::unordered_map<int64_t, uint64_t> cursor_opener_;  // recorded cursor -> its request's order
  // connection -> request id -> order, of the requests sent whose reply has not come
  std::unordered_map<uint64_t, std::map<int32_t, uint64_t>> awaiting_;
};

}  // namespace

base::Expected<ReplayOutcome> dry_run_recording(const ReplayOptions& options,
                                                const RecordingOutline& outline) {
  DryRun dry(options, outline);
  if (auto ran = dry.run(); !ran) return ran.error();
  ReplayOutcome outcome;
  outcome.dry_run = true;
  outcome.counts = std::move(dry.counts);
  ReplayCounts& counts = outcome.counts;
  counts.connections = outline.connections;
  counts.peak_connections = outline.peak_connections;
  counts.requests = outline.requests;
  counts.recorded_micros = outline.last_offset - outline.first_offset;
  counts.unverified_files = outline.unverified_files;
  counts.sessions = dry.sessions();
  return outcome;
}

}  // namespace docguard::tools
