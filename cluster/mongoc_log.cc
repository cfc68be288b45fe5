#include "docguard/cluster/mongoc_log.h"

#include <mongoc/mongoc.h>

#include <memory>
#include <mutex>

#include "docguard/cluster/upstream_uri.h"

namespace docguard::cluster {
namespace {

// A shared_ptr swapped under a mutex, so a handler being replaced is never destroyed while a
// monitor thread is still calling it.
std::mutex g_mu;
std::shared_ptr<const MongocLogHandler> g_handler;

void trampoline(mongoc_log_level_t level, const char* domain, const char* message, void*) {
  std::shared_ptr<const MongocLogHandler> h;
  {
    std::lock_guard lock(g_mu);
    h = g_handler;
  }
  if (h && *h) {
    (*h)(static_cast<MongocLogLevel>(level), domain ? domain : "", message ? message : "");
  }
}

}  // namespace

void set_mongoc_log_handler(MongocLogHandler handler) {
  {
    std::lock_guard lock(g_mu);
    g_handler = std::make_shared<const MongocLogHandler>(std::move(handler));
  }
  // Before mongoc_init, so that where libmongoc does not initialize itself before main, what it
  // logs while initializing goes through the handler too.
  mongoc_log_set_handler(&trampoline, nullptr);
  ensure_mongoc_initialized();
}

}  // namespace docguard::cluster
