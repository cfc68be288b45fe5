#include "describe.h"

#include <memory>
#include <utility>

#include "docguard/codec/bson_elements.h"

namespace docguard::cluster {
namespace {

std::optional<int32_t> int_field(const bson_t* doc, const char* key) {
  codec::BsonElements it(doc);
  if (!it.find(key)) return std::nullopt;
  // Servers send int32, but a relay or an older server may send int64 or double.
  if (it.holds_int32()) return it.int32();
  if (it.holds_int64()) return static_cast<int32_t>(it.int64());
  if (it.holds_double()) return static_cast<int32_t>(it.double_value());
  return std::nullopt;
}

std::string string_field(const bson_t* doc, const char* key) {
  codec::BsonElements it(doc);
  if (!it.find(key) || !it.holds_utf8()) return {};
  return std::string(it.utf8());
}

struct ServersDeleter {
  size_t n;
  void operator()(mongoc_server_description_t** sds) const {
    mongoc_server_descriptions_destroy_all(sds, n);
  }
};

}  // namespace

Persona persona_from_hello(const bson_t* hello, std::string address) {
  Persona p;
  p.address = std::move(address);
  p.min_wire_version = int_field(hello, "minWireVersion");
  p.max_wire_version = int_field(hello, "maxWireVersion");
  p.logical_session_timeout_minutes = int_field(hello, "logicalSessionTimeoutMinutes");
  p.max_bson_object_size = int_field(hello, "maxBsonObjectSize");
  p.max_message_size_bytes = int_field(hello, "maxMessageSizeBytes");
  p.max_write_batch_size = int_field(hello, "maxWriteBatchSize");
  p.set_name = string_field(hello, "setName");
  p.is_mongos = string_field(hello, "msg") == "isdbgrid";
  return p;
}

Topology describe(const mongoc_topology_description_t* td,
                  std::chrono::milliseconds local_threshold) {
  Topology t;
  t.type = topology_type_from_string(mongoc_topology_description_type(td));
  size_t n = 0;
  mongoc_server_description_t** raw = mongoc_topology_description_get_servers(td, &n);
  std::unique_ptr<mongoc_server_description_t*, ServersDeleter> sds(raw, ServersDeleter{n});
  t.servers.reserve(n);
  for (size_t i = 0; i < n; ++i) {
    ServerInfo s;
    s.address = mongoc_server_description_host(sds.get()[i])->host_and_port;
    s.type = server_type_from_string(mongoc_server_description_type(sds.get()[i]));
    s.round_trip_ms = mongoc_server_description_round_trip_time(sds.get()[i]);
    t.servers.push_back(std::move(s));
  }
  derive_writable(t, local_threshold);
  if (!t.candidates.empty()) {
    for (size_t i = 0; i < n; ++i) {
      if (t.servers[i].address == t.candidates.front()) {
        t.persona = persona_from_hello(mongoc_server_description_hello_response(sds.get()[i]),
                                       t.servers[i].address);
        break;
      }
    }
  }
  return t;
}

}  // namespace docguard::cluster
