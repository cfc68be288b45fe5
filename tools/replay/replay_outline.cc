// The replay's first pass (replay_outline.h).
#include "replay_outline.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <unordered_set>

#include "docguard/recording/recording_reader.h"
#include "replay_policy.h"

namespace docguard::tools {

namespace {

void add_unique(std::vector<std::string>& list, const std::string& value) {
  if (!value.empty() && list.size() < 256 &&
      std::find(list.begin(), list.end(), value) == list.end()) {
    list.push_back(value);
  }
}

void add_source(RecordedSource& source, const recording::SideFacts& side) {
  add_unique(source.upstreams, side.upstream);
  add_unique(source.upstreams, side.upstream_resolved);
  if (!side.source.empty() && source.identities.size() < 64) {
    source.identities.push_back(side.source);
  }
}

// "<ms>.bin": the milliseconds since the epoch at which the first data file was opened.
uint64_t start_of(const std::vector<std::string>& files) {
  uint64_t ms = 0;
  if (files.empty()) return 0;
  const std::string& name = files.front();
  std::from_chars(name.data(), name.data() + name.size(), ms);
  return ms;
}

// The peak of connections open at once: a connection is open from its first packet to its last.
base::Expected<uint64_t> peak_connections(const ReplayOptions& options, const RecordingOutline& o) {
  auto reader = recording::RecordingReader::open(options.recording,
                                                 recording::ReadOptions{options.accept_torn_tail});
  if (!reader) return reader.error();
  std::unordered_set<uint64_t> open;
  uint64_t peak = 0;
  while (true) {
    auto packet = reader->next();
    if (!packet) return packet.error();
    if (!packet->has_value()) break;
    const recording::RecordedPacket& p = **packet;
    open.insert(p.connection);
    peak = std::max<uint64_t>(peak, open.size());
    const auto last = o.last_order.find(p.connection);
    if (last == o.last_order.end() || last->second == p.order) open.erase(p.connection);
  }
  return peak;
}

}  // namespace

base::Expected<RecordingOutline> outline(const ReplayOptions& options) {
  RecordingOutline o;
  {
    auto reader = recording::RecordingReader::open(
        options.recording, recording::ReadOptions{options.accept_torn_tail});
    if (!reader) return reader.error();
    o.start_epoch_ms = start_of(reader->data_files());
    auto selection = RequestSelection::make(options.selection, o.start_epoch_ms);
    if (!selection) return selection.error();
    o.selection = std::move(*selection);
    bool first = true;
    bool first_selected = true;
    while (true) {
      auto packet = reader->next();
      if (!packet) return packet.error();
      if (!packet->has_value()) break;
      const recording::RecordedPacket& p = **packet;
      if (first) o.first_offset = p.offset_micros;
      first = false;
      o.last_offset = std::max(o.last_offset, p.offset_micros);
      o.last_order[p.connection] = p.order;
      add_source(o.source, p.side);
      if (p.event == codec::RecordedEvent::kResponse && p.message.size() >= codec::kHeaderSize) {
        if (const int32_t code = recorded_refusal_code(p.message); code != 0) {
          if (o.refused_when_recorded.size() >= kMaxRecordedRefusals) {
            return base::bad_input(fmt::format(
                "the recording holds more than {} requests the recorded server refused for their "
                "form or as unauthorized; replay part of it",
                kMaxRecordedRefusals));
          }
          o.refused_when_recorded[{p.connection,
                                   codec::read_header(p.message.data()).response_to}] = code;
        }
      }
      if (p.event != codec::RecordedEvent::kRequest || p.message.empty()) continue;
      ++o.requests;
      if (!o.selection.matches(p)) continue;
      if (first_selected) o.selected_first = p.offset_micros;
      first_selected = false;
      o.selected_last = std::max(o.selected_last, p.offset_micros);
    }
    if (o.selection.all()) {
      o.selected_first = o.first_offset;
      o.selected_last = o.last_offset;
    }
    o.unverified_files = static_cast<uint64_t>(reader->unverified_files());
  }
  o.connections = o.last_order.size();
  auto peak = peak_connections(options, o);
  if (!peak) return peak.error();
  o.peak_connections = *peak;
  return o;
}

}  // namespace docguard::tools
