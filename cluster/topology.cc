#include "docguard/cluster/topology.h"

#include <algorithm>
#include <utility>

#include "docguard/base/json_writer.h"

namespace docguard::cluster {
namespace {

void write_strings(json::Writer& w, const std::vector<std::string>& v) {
  w.begin_array();
  for (const std::string& text : v) w.value(text);
  w.end_array();
}

void write_optional(json::Writer& w, std::string_view key, const std::optional<int32_t>& v) {
  if (v) w.member(key, *v);
}

}  // namespace

std::string_view to_string(TopologyType type) { return kTopologyTypeNames.name(type); }
std::string_view to_string(ServerType type) { return kServerTypeNames.name(type); }

TopologyType topology_type_from_string(std::string_view name) {
  return kTopologyTypeNames.value(name).value_or(TopologyType::kUnknown);
}

ServerType server_type_from_string(std::string_view name) {
  return kServerTypeNames.value(name).value_or(ServerType::kUnknown);
}

bool Topology::is_writable(std::string_view address) const {
  return std::find(writable.begin(), writable.end(), address) != writable.end();
}

std::string Topology::pick_writable(uint64_t spread) const {
  if (candidates.empty()) return {};
  return candidates[spread % candidates.size()];
}

void derive_writable(Topology& t, std::chrono::milliseconds local_threshold) {
  t.primary.clear();
  t.writable.clear();
  t.candidates.clear();
  for (const auto& s : t.servers) {
    const bool takes_writes = [&] {
      switch (t.type) {
        case TopologyType::kReplicaSetWithPrimary:
          return s.type == ServerType::kRSPrimary;
        case TopologyType::kSharded:
          return s.type == ServerType::kMongos;
        // directConnection=true to a secondary is a Single topology too, but it refuses writes.
        case TopologyType::kSingle:
          return s.type == ServerType::kStandalone || s.type == ServerType::kMongos ||
                 s.type == ServerType::kRSPrimary;
        default:
          return false;
      }
    }();
    if (s.type == ServerType::kRSPrimary) t.primary = s.address;
    if (takes_writes) t.writable.push_back(s.address);
  }
  // Sorted, so that equal sets compare equal whatever order libmongoc lists servers in.
  std::sort(t.writable.begin(), t.writable.end());
  if (t.type != TopologyType::kSharded) {
    t.candidates = t.writable;
    return;
  }
  // Latency window (server selection spec): within localThresholdMS of the fastest known RTT.
  // A mongos without an RTT yet counts as in the window rather than being starved.
  int64_t fastest = -1;
  for (const auto& s : t.servers) {
    if (s.type == ServerType::kMongos && s.round_trip_ms >= 0 &&
        (fastest < 0 || s.round_trip_ms < fastest)) {
      fastest = s.round_trip_ms;
    }
  }
  for (const auto& s : t.servers) {
    if (s.type != ServerType::kMongos) continue;
    if (fastest < 0 || s.round_trip_ms < 0 ||
        s.round_trip_ms <= fastest + local_threshold.count()) {
      t.candidates.push_back(s.address);
    }
  }
  std::sort(t.candidates.begin(), t.candidates.end());
}

std::string to_json(const Topology& t) {
  json::Writer w;
  w.begin_object().member("type", to_string(t.type)).member("primary", t.primary);
  w.member("primary_generation", t.primary_generation).key("writable");
  write_strings(w, t.writable);
  w.key("candidates");
  write_strings(w, t.candidates);
  w.key("servers").begin_array();
  for (const auto& s : t.servers) {
    w.begin_object().member("address", s.address).member("type", to_string(s.type));
    w.member("rtt_ms", s.round_trip_ms).end_object();
  }
  w.end_array();
  if (t.persona) {
    const Persona& p = *t.persona;
    w.key("persona").begin_object().member("address", p.address);
    write_optional(w, "minWireVersion", p.min_wire_version);
    write_optional(w, "maxWireVersion", p.max_wire_version);
    write_optional(w, "logicalSessionTimeoutMinutes", p.logical_session_timeout_minutes);
    write_optional(w, "maxBsonObjectSize", p.max_bson_object_size);
    write_optional(w, "maxMessageSizeBytes", p.max_message_size_bytes);
    write_optional(w, "maxWriteBatchSize", p.max_write_batch_size);
    if (!p.set_name.empty()) w.member("setName", p.set_name);
    w.member("isdbgrid", p.is_mongos).end_object();
  }
  w.end_object();
  return w.take();
}

}  // namespace docguard::cluster
