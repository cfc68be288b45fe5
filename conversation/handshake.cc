#include "docguard/conversation/handshake.h"

#include <algorithm>
#include <string_view>

#include "docguard/codec/bson_elements.h"
#include "docguard/codec/bson_view.h"
#include "docguard/codec/error_kinds.h"

namespace docguard::conversation {

using codec::BsonElements;
namespace {

// Fields that describe replica-set or topology membership: a driver that sees them starts
// monitoring the members directly and bypasses the proxy.
bool is_topology_field(std::string_view key) {
  static constexpr std::string_view kFields[] = {
      "hosts",        "passives",   "arbiters",          "setName",     "setVersion",
      "primary",      "me",         "secondary",         "arbiterOnly", "passive",
      "hidden",       "tags",       "electionId",        "lastWrite",   "topologyVersion",
      "isreplicaset", "msg",        "compression",       "ismaster",    "isWritablePrimary",
      "buildIndexes", "slaveDelay", "secondaryDelaySecs"};
  return std::find(std::begin(kFields), std::end(kFields), key) != std::end(kFields);
}

}  // namespace

std::vector<codec::Compressor> supported_compressors(const codec::BsonView& hello_request) {
  std::vector<codec::Compressor> out;
  if (hello_request.empty()) return out;
  BsonElements it(hello_request);
  if (!it.find("compression") || !it.holds_array()) return out;
  BsonElements child(it.container());
  while (child.next()) {
    if (!child.holds_utf8()) continue;
    auto c = codec::compressor_from_name(child.utf8());
    if (c && *c != codec::Compressor::kNoop && std::find(out.begin(), out.end(), *c) == out.end()) {
      out.push_back(*c);
    }
  }
  return out;
}

HelloRewrite rewrite_hello_reply(const codec::BsonView& upstream_reply,
                                 const std::vector<codec::Compressor>& client_compressors,
                                 const PersonaSettings& settings) {
  // The reply is copied element by element into what the client reads: a corrupt nested
  // document must not pass through (found by fuzz_op_query). docguard's own structural check,
  // not libbson's: libbson's misses corrupt content in a document's last element.
  if (!codec::bson_structure_valid(upstream_reply, nullptr)) {
    throw codec::ProtocolError(codec::ErrorKind::kBadReply,
                               "upstream hello reply is not valid BSON");
  }
  HelloRewrite result;
  bson_t* out = result.reply.get();
  bool hello_style = false;  // "isWritablePrimary" (hello) vs "ismaster" (legacy)
  bool writable = true;
  BsonElements it(upstream_reply);
  while (it.next()) {
    const auto key = it.key;
    if (key == "isWritablePrimary") {
      hello_style = true;
      writable = it.as_bool();
    } else if (key == "ismaster") {
      writable = it.as_bool();
    } else if (key == "maxWireVersion" && it.holds_number()) {
      result.upstream_max_wire_version = it.as_int64();
    } else if (key == "compression" && it.holds_array()) {
      BsonElements child(it.container());
      while (child.next()) {
        if (!child.holds_utf8()) continue;
        if (auto c = codec::compressor_from_name(child.utf8())) {
          result.upstream_compressors.push_back(*c);
        }
      }
    }
    if (key == "ok" || key == "maxMessageSizeBytes" || is_topology_field(key)) continue;
    // Real servers send ASCII keys; a key that is not UTF-8 is dropped rather than relayed
    // (libbson's own validation rejects the copy; found by fuzz_op_query).
    if (!bson_utf8_validate(key.data(), key.size(), false)) continue;
    it.append_to(out, key);
  }
  // The upstream's role is hidden, but an upstream that cannot take writes (a secondary
  // behind docguard) must not be presented as writable.
  if (hello_style) {
    BSON_APPEND_BOOL(out, "isWritablePrimary", writable);
  } else {
    BSON_APPEND_BOOL(out, "ismaster", writable);
  }
  const auto& address = settings.advertised_address;
  if (settings.persona == Persona::kMongos) {
    BSON_APPEND_UTF8(out, "msg", "isdbgrid");
  } else {
    BSON_APPEND_UTF8(out, "setName", settings.replica_set_name.c_str());
    BSON_APPEND_INT32(out, "setVersion", 1);
    BSON_APPEND_BOOL(out, "secondary", false);
    bson_t hosts;
    BSON_APPEND_ARRAY_BEGIN(out, "hosts", &hosts);
    BSON_APPEND_UTF8(&hosts, "0", address.c_str());
    bson_append_array_end(out, &hosts);
    BSON_APPEND_UTF8(out, "primary", address.c_str());
    BSON_APPEND_UTF8(out, "me", address.c_str());
  }
  // Advertise our own message limit when it is lower than the upstream's.
  int64_t upstream_max = settings.max_message_bytes;
  BsonElements max_size(upstream_reply);
  if (max_size.find("maxMessageSizeBytes") && max_size.holds_number()) {
    upstream_max = std::min<int64_t>(max_size.as_int64(), settings.max_message_bytes);
  }
  BSON_APPEND_INT32(out, "maxMessageSizeBytes", static_cast<int32_t>(upstream_max));
  if (!client_compressors.empty()) {
    bson_t arr;
    BSON_APPEND_ARRAY_BEGIN(out, "compression", &arr);
    int i = 0;
    for (auto c : client_compressors) {
      const std::string idx = std::to_string(i++);
      BSON_APPEND_UTF8(&arr, idx.c_str(), codec::compressor_name(c));
    }
    bson_append_array_end(out, &arr);
  }
  double ok = 1.0;
  BsonElements ok_element(upstream_reply);
  if (ok_element.find("ok")) ok = ok_element.as_double();
  BSON_APPEND_DOUBLE(out, "ok", ok);
  return result;
}

std::string client_app_name(const codec::BsonView& hello_request) {
  if (hello_request.empty()) return {};
  BsonElements name(hello_request);
  if (codec::find_path(hello_request, "client.application.name", &name) && name.holds_utf8()) {
    return std::string(name.utf8().substr(0, 128));
  }
  return {};
}

}  // namespace docguard::conversation
