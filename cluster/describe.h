// Private: turns libmongoc's topology description into docguard's Topology snapshot.
#pragma once

#include <mongoc/mongoc.h>

#include <chrono>

#include "docguard/cluster/topology.h"

namespace docguard::cluster {

// Servers, type, writable/candidates and the persona of the first candidate. Leaves
// primary_generation and updated_at to the caller. Safe inside an APM callback (touches only
// `td`, which the event owns).
Topology describe(const mongoc_topology_description_t* td,
                  std::chrono::milliseconds local_threshold);

// Persona facts read from a hello reply.
Persona persona_from_hello(const bson_t* hello, std::string address);

}  // namespace docguard::cluster
