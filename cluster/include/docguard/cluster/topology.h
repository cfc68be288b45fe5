// An immutable snapshot of the upstream topology as libmongoc's server discovery and monitoring
// sees it, plus what docguard derives from it: which servers take writes, and the persona of the
// writable server (the limits and versions docguard should advertise to its clients).
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "docguard/base/enum_names.h"

namespace docguard::cluster {

// The SDAM topology types (mongoc_topology_description_type).
enum class TopologyType {
  kUnknown,
  kSingle,
  kReplicaSetNoPrimary,
  kReplicaSetWithPrimary,
  kSharded,
  kLoadBalanced,
};

// The SDAM server types (mongoc_server_description_type).
enum class ServerType {
  kUnknown,
  kStandalone,
  kMongos,
  kPossiblePrimary,
  kRSPrimary,
  kRSSecondary,
  kRSArbiter,
  kRSOther,
  kRSGhost,
  kLoadBalancer,
};

// The SDAM names, as libmongoc spells them (and /status and the topology metric show them).
inline constexpr auto kTopologyTypeNames =
    base::enum_names<TopologyType>({{TopologyType::kUnknown, "Unknown"},
                                    {TopologyType::kSingle, "Single"},
                                    {TopologyType::kReplicaSetNoPrimary, "ReplicaSetNoPrimary"},
                                    {TopologyType::kReplicaSetWithPrimary, "ReplicaSetWithPrimary"},
                                    {TopologyType::kSharded, "Sharded"},
                                    {TopologyType::kLoadBalanced, "LoadBalanced"}},
                                   "Unknown");
inline constexpr auto kServerTypeNames =
    base::enum_names<ServerType>({{ServerType::kUnknown, "Unknown"},
                                  {ServerType::kStandalone, "Standalone"},
                                  {ServerType::kMongos, "Mongos"},
                                  {ServerType::kPossiblePrimary, "PossiblePrimary"},
                                  {ServerType::kRSPrimary, "RSPrimary"},
                                  {ServerType::kRSSecondary, "RSSecondary"},
                                  {ServerType::kRSArbiter, "RSArbiter"},
                                  {ServerType::kRSOther, "RSOther"},
                                  {ServerType::kRSGhost, "RSGhost"},
                                  {ServerType::kLoadBalancer, "LoadBalancer"}},
                                 "Unknown");

std::string_view to_string(TopologyType type);
std::string_view to_string(ServerType type);
TopologyType topology_type_from_string(std::string_view sdam_name);  // kUnknown if unknown
ServerType server_type_from_string(std::string_view sdam_name);      // kUnknown if unknown

struct ServerInfo {
  std::string address;  // host:port as libmongoc names it (the name in the hello `hosts` list)
  ServerType type = ServerType::kUnknown;
  int64_t round_trip_ms = -1;  // libmongoc's moving average; -1 while unknown
};

// Facts of the writable server's hello reply that docguard's handshake persona mirrors. Absent
// fields stay empty (e.g. no logicalSessionTimeoutMinutes: sessions unsupported).
struct Persona {
  std::string address;  // the server they were read from
  std::optional<int32_t> min_wire_version;
  std::optional<int32_t> max_wire_version;
  std::optional<int32_t> logical_session_timeout_minutes;
  std::optional<int32_t> max_bson_object_size;
  std::optional<int32_t> max_message_size_bytes;
  std::optional<int32_t> max_write_batch_size;
  std::string set_name;    // replica set name, empty for a standalone or mongos
  bool is_mongos = false;  // msg: "isdbgrid"
};

struct Topology {
  TopologyType type = TopologyType::kUnknown;
  // Known servers. libmongoc leaves out members it currently has as Unknown.
  std::vector<ServerInfo> servers;
  std::string primary;  // address of the RS primary, empty if none (or not a replica set)
  // Every server that takes writes: the RS primary; every mongos (Sharded); the server of a
  // Single topology if it is a standalone, mongos or primary. A pinned connection whose server
  // is no longer in this list should be closed after its reply in flight.
  std::vector<std::string> writable;
  // The writable servers new connections should go to: for Sharded the mongos within
  // localThresholdMS of the fastest one (as drivers select), otherwise `writable`.
  std::vector<std::string> candidates;
  // Increments whenever `writable` changes (including to empty and back), starting at 1 with
  // the first snapshot that has a writable server. Connections remember the generation they
  // were pinned in; a change tells them to check is_writable(their server).
  uint64_t primary_generation = 0;
  std::optional<Persona> persona;  // of candidates.front(), when there is one
  std::chrono::system_clock::time_point updated_at{};

  bool has_writable() const { return !candidates.empty(); }
  bool is_writable(std::string_view address) const;
  // Server for a new connection: round-robin over `candidates` by `spread` (e.g. a connection
  // counter), so connections spread across the mongos in the latency window. Empty if none.
  std::string pick_writable(uint64_t spread) const;
};

// Fills writable/candidates/primary of `t` from its type and servers (pure; unit-tested).
void derive_writable(Topology& t, std::chrono::milliseconds local_threshold);

// One JSON object (a single line) describing `t`, for logs, /status and docguard_cluster_probe.
std::string to_json(const Topology& t);

}  // namespace docguard::cluster
