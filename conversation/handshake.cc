#include "docguard/conversation/handshake.h"

#include <algorithm>
#include <string_view>

#include "docguard/codec/bson_view.h"
#include "docguard/codec/error_kinds.h"

namespace docguard::conversation {

using codec::key_of;
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
  bson_t b = hello_request.borrow();
  bson_iter_t it, child;
  if (!bson_iter_init_find(&it, &b, "compression") || !BSON_ITER_HOLDS_ARRAY(&it) ||
      !bson_iter_recurse(&it, &child)) {
    return out;
  }
  while (bson_iter_next(&child)) {
    if (!BSON_ITER_HOLDS_UTF8(&child)) continue;
    auto c = codec::compressor_from_name(codec::utf8_of(child));
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
  bson_t in = upstream_reply.borrow();
  bson_iter_t it;
  bool hello_style = false;  // "isWritablePrimary" (hello) vs "ismaster" (legacy)
  bool writable = true;
  if (bson_iter_init(&it, &in)) {
    while (bson_iter_next(&it)) {
      const auto key = key_of(it);
      if (key == "isWritablePrimary") {
        hello_style = true;
        writable = bson_iter_as_bool(&it);
      } else if (key == "ismaster") {
        writable = bson_iter_as_bool(&it);
      } else if (key == "maxWireVersion" && BSON_ITER_HOLDS_NUMBER(&it)) {
        result.upstream_max_wire_version = bson_iter_as_int64(&it);
      } else if (key == "compression" && BSON_ITER_HOLDS_ARRAY(&it)) {
        bson_iter_t child;
        if (bson_iter_recurse(&it, &child)) {
          while (bson_iter_next(&child)) {
            if (!BSON_ITER_HOLDS_UTF8(&child)) continue;
            if (auto c = codec::compressor_from_name(codec::utf8_of(child))) {
              result.upstream_compressors.push_back(*c);
            }
          }
        }
      }
      if (key == "ok" || key == "maxMessageSizeBytes" || is_topology_field(key)) continue;
      // Real servers send ASCII keys; a key that is not UTF-8 is dropped rather than relayed
      // (libbson's own validation rejects the copy; found by fuzz_op_query).
      if (!bson_utf8_validate(key.data(), key.size(), false)) continue;
      bson_append_iter(out, nullptr, 0, &it);
    }
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
  if (bson_iter_init_find(&it, &in, "maxMessageSizeBytes") && BSON_ITER_HOLDS_NUMBER(&it)) {
    upstream_max = std::min<int64_t>(bson_iter_as_int64(&it), settings.max_message_bytes);
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
  if (bson_iter_init_find(&it, &in, "ok")) ok = bson_iter_as_double(&it);
  BSON_APPEND_DOUBLE(out, "ok", ok);
  return result;
}

std::string client_app_name(const codec::BsonView& hello_request) {
  if (hello_request.empty()) return {};
  bson_t b = hello_request.borrow();
  bson_iter_t it;
  if (bson_iter_init(&it, &b) && bson_iter_find_descendant(&it, "client.application.name", &it) &&
      BSON_ITER_HOLDS_UTF8(&it)) {
    return std::string(codec::utf8_of(it).substr(0, 128));
  }
  return {};
}

}  // namespace docguard::conversation
