// The handshake persona: rewriting upstream hello/isMaster replies so drivers keep talking
// only through docguard.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "docguard/codec/bson_view.h"
#include "docguard/codec/error_kinds.h"
#include "docguard/codec/op_compressed.h"

namespace docguard::conversation {

// What docguard presents itself as to drivers.
enum class Persona { kMongos, kReplicaSet };

struct PersonaSettings {
  Persona persona = Persona::kMongos;
  std::string replica_set_name;
  std::string advertised_address;  // host:port of docguard as drivers should dial it
  uint32_t max_message_bytes = codec::kDefaultMaxMessageBytes;
};

struct HelloRewrite {
  codec::OwnedBson reply;
  std::vector<codec::Compressor> upstream_compressors;  // what the upstream agreed to
  std::optional<int64_t> upstream_max_wire_version;     // when the reply has one
};

// The compressors docguard can decompress, in the client's order of preference.
std::vector<codec::Compressor> supported_compressors(const codec::BsonView& hello_request);

// Rewrites an upstream hello reply. Topology fields that would make a driver dial members
// directly (hosts, setName, primary, me, ...) are dropped or replaced by docguard's address;
// `compression` lists what the client asked for and docguard can decompress; everything else
// (wire versions, logicalSessionTimeoutMinutes, connectionId, limits, SASL fields) is kept.
// `topologyVersion` is dropped because docguard does not implement streaming hello.
// Throws codec::ProtocolError(kBadReply) if the reply is not valid BSON throughout.
HelloRewrite rewrite_hello_reply(const codec::BsonView& upstream_reply,
                                 const std::vector<codec::Compressor>& client_compressors,
                                 const PersonaSettings& settings);

// Returns the application name from a hello's client metadata (client.application.name).
std::string client_app_name(const codec::BsonView& hello_request);

}  // namespace docguard::conversation
