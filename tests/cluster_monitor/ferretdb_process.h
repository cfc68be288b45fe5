// A FerretDB (SQLite backend) on a free 127.0.0.1 port, started like
// tests/integration/python/harness.py does, that a test can kill and start again on that port.
#pragma once

#include <sys/types.h>

#include <string>

namespace docguard::cluster::testing {

// The FerretDB binary: $FERRETDB_BIN, else $DOCGUARD_TOOLS/bin/ferretdb, else the shared tools
// of this checkout's main worktree. Empty if none exists.
std::string find_ferretdb();

class FerretDb {
 public:
  explicit FerretDb(std::string binary);
  ~FerretDb();  // kills it and removes its data directory

  bool start();  // on port() (a free one chosen at construction); waits until it accepts
  void kill();   // SIGKILL and reap
  int port() const { return port_; }
  std::string address() const { return "127.0.0.1:" + std::to_string(port_); }

 private:
  std::string binary_;
  std::string dir_;
  int port_ = 0;
  pid_t pid_ = -1;
};

}  // namespace docguard::cluster::testing
