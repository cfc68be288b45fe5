// Which cluster a recording's traffic went to (docs/recording.md, "Side files"): the identity an
// upstream gives in its hello reply. The recorder writes it from the replies as they came, before
// docguard rewrites any for its clients; a replay reads it to refuse running against that
// cluster, and reads its target's the same way.
#pragma once

#include <bson/bson.h>

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "docguard/codec/message.h"

namespace docguard::recording {

struct SourceIdentity {
  std::string set_name;            // replica set name; empty for a standalone or a mongos
  std::vector<std::string> hosts;  // the set's members as it names them
  std::string process_id;          // topologyVersion.processId, in hex; unique per process
  // $clusterTime.signature.keyId: the cluster's signing key, shared by every member of a replica
  // set or sharded cluster that has keys (0 when the reply has none: a standalone).
  int64_t key_id = 0;
  bool empty() const {
    return set_name.empty() && hosts.empty() && process_id.empty() && key_id == 0;
  }
};

// The identity in a hello reply document; empty members where the reply has none.
SourceIdentity identity_of_hello(const bson_t& reply);

// The identity in a hello reply message (OP_MSG or OP_REPLY), as the side file's `source`
// object ({"setName", "hosts", "processId"}); "" when the message holds none of them.
std::string hello_source_json(codec::Bytes reply);

// Reads a side line's `source` object back.
SourceIdentity source_from_json(const bson_t& source);

bool is_hello_command(std::string_view command);

}  // namespace docguard::recording
