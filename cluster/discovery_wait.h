// Private to the cluster library: the wait a new reader makes before its first command.
#pragma once

#include <mongoc/mongoc.h>

#include <atomic>
#include <chrono>

namespace docguard::cluster {

// secondaryPreferred picks the primary while the secondaries are still unchecked, and the
// primary's hello is often the first to return: a new pool's first reads would land on the
// primary. This waits (at most 3 s, or until `stop`) until a secondary is known, or the topology
// shows there is none (a standalone, a mongos, a primary that lists no other member).
void await_first_discovery(mongoc_client_t* client, const std::atomic<bool>* stop);

// Whether some server of the topology has answered (its type is no longer Unknown), waiting for
// one at most `limit` while `stop` is not set. libmongoc's server selection waits as long for a
// server that never answers, but without looking at the stop flag: a stopping docguard, which
// joins the thread reading, would wait out the whole serverSelectionTimeoutMS.
bool await_answering_server(mongoc_client_t* client, std::chrono::milliseconds limit,
                            const std::atomic<bool>* stop);

}  // namespace docguard::cluster
