#include "docguard/cluster/topology.h"

#include <algorithm>
#include <utility>

#include "docguard/base/json_string.h"

namespace docguard::cluster {
namespace {

void append_strings(std::string& out, const std::vector<std::string>& v) {
  out += '[';
  for (size_t i = 0; i < v.size(); ++i) {
    if (i) out += ',';
    json::append_string(out, v[i]);
  }
  out += ']';
}

void append_optional(std::string& out, std::string_view key, const std::optional<int32_t>& v) {
  if (!v) return;
  out += ',';
  json::append_string(out, key);
  out += ':' + std::to_string(*v);
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
  std::string out = "{\"type\":";
  json::append_string(out, to_string(t.type));
  out += ",\"primary\":";
  json::append_string(out, t.primary);
  out += ",\"primary_generation\":" + std::to_string(t.primary_generation);
  out += ",\"writable\":";
  append_strings(out, t.writable);
  out += ",\"candidates\":";
  append_strings(out, t.candidates);
  out += ",\"servers\":[";
  for (size_t i = 0; i < t.servers.size(); ++i) {
    const auto& s = t.servers[i];
    if (i) out += ',';
    out += "{\"address\":";
    json::append_string(out, s.address);
    out += ",\"type\":";
    json::append_string(out, to_string(s.type));
    out += ",\"rtt_ms\":" + std::to_string(s.round_trip_ms) + '}';
  }
  out += ']';
  if (t.persona) {
    const Persona& p = *t.persona;
    out += ",\"persona\":{\"address\":";
    json::append_string(out, p.address);
    append_optional(out, "minWireVersion", p.min_wire_version);
    append_optional(out, "maxWireVersion", p.max_wire_version);
    append_optional(out, "logicalSessionTimeoutMinutes", p.logical_session_timeout_minutes);
    append_optional(out, "maxBsonObjectSize", p.max_bson_object_size);
    append_optional(out, "maxMessageSizeBytes", p.max_message_size_bytes);
    append_optional(out, "maxWriteBatchSize", p.max_write_batch_size);
    if (!p.set_name.empty()) {
      out += ",\"setName\":";
      json::append_string(out, p.set_name);
    }
    out += std::string(",\"isdbgrid\":") + (p.is_mongos ? "true" : "false") + '}';
  }
  out += '}';
  return out;
}

}  // namespace docguard::cluster
