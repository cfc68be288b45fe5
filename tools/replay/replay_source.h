// The replay's refusal to run against the cluster its recording came from: a target (or
// baseline) whose address is a recorded upstream's, or whose hello gives a recorded identity
// (the same replica set with a member in common, or the same server process).
#pragma once

#include <mongoc/mongoc.h>

#include <string>

#include "docguard/base/expected.h"
#include "replay_outline.h"

namespace docguard::tools {

// What of the target's URI names a recorded upstream ("" when nothing does): the addresses
// resolved on both sides, and any loopback address taken for any other on the same port.
std::string address_in_common(const RecordedSource& source, const std::string& target_uri);

// What of the target's hello reply matches a recorded identity ("" when nothing does).
std::string identity_in_common(const RecordedSource& source,
                               const recording::SourceIdentity& target);

// An error (exit 2) naming what matched when the target is the recording's source. Without a
// client: by the target URI's addresses; with one: by the target's answer to `hello` on it.
// `option` names the target in the message ("--target", "--baseline").
base::Expected<void> refuse_own_source(const RecordedSource& source, const std::string& target_uri,
                                       mongoc_client_t* client, const std::string& option);

}  // namespace docguard::tools
