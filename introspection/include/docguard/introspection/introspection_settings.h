// How docguard reads the cluster it guards (`introspection:` in the settings file): its own
// connections, paced, from a secondary when there is one. A plain struct: the settings layer
// fills it from the file.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

namespace docguard::introspection {

struct IntrospectionSettings {
  bool enabled = true;
  // The cluster to read; empty: the upstream's URI, with the upstream_tls settings.
  std::string uri;
  // `user: NAME` and `password: SECRET` lines, or one connection string line. Optional: without
  // it docguard reads with what the URI says (no credentials, or x.509 through TLS settings).
  std::string credentials_file;
  uint64_t sample_size = 1000;         // documents read per collection and pass
  double max_commands_per_second = 2;  // one command at a time, at most this often
  std::chrono::milliseconds interval{std::chrono::hours(1)};  // between the starts of passes
  std::chrono::milliseconds max_time{10'000};                 // maxTimeMS of each command
  // Each wait is the interval give or take this share of it, so a fleet started together does
  // not read together; the first pass starts within min(jitter x interval, 10 s).
  double jitter = 0.1;
  // Fleets: one instance at a time holds a lease document in this database (which docguard may
  // write to), reads the cluster and stores what it learned there; the others read that.
  // Empty: no lease, every instance reads for itself.
  std::string lease_database;
};

}  // namespace docguard::introspection
