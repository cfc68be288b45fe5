// One explicit administrative command sent to a cluster on an operator's request (for example
// `docguard validator --apply`'s collMod): never on the data path, never automatic.
#pragma once

#include <bson/bson.h>

#include <string>

namespace docguard::cluster {

struct CommandResult {
  bool ok = false;
  int32_t code = 0;        // the server's error code when refused (0: none, or not reached)
  std::string message;     // the server's errmsg, or why it could not be sent
  std::string reply_json;  // the reply, relaxed extended JSON
};

// Runs `command` on database `db` of the cluster at `uri` (the primary), waiting at most
// `timeout_ms` for a server.
CommandResult run_admin_command(const std::string& uri, const std::string& db,
                                const bson_t* command, int timeout_ms = 10000);

}  // namespace docguard::cluster
