// docguard reading the cluster it guards: at start and then every interval, on a thread and a
// libmongoc pool of its own (never a client's connection, never the monitor's), one paced command
// at a time from a secondary when there is one, it lists databases, collections, validators,
// indexes and statistics and samples each collection's documents. What it learns goes to the
// live advisor (catalog facts, a profile of the stored documents) and to the rules engine (the
// array lengths of the sampled documents, so a $push onto a long stored array is judged).
//
// Client traffic never waits for it: it shares no lock with a session beyond the advisor's and
// the engine's short ones, its memory is one collection's profile at a time plus what the
// advisor keeps (bounded by its namespace bound), and a stop ends it within one command.
#pragma once

#include <atomic>
#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>

#include "docguard/advisor/live_advisor.h"
#include "docguard/cluster/cluster_reader.h"
#include "docguard/introspection/introspection_lease.h"
#include "docguard/introspection/introspection_settings.h"
#include "docguard/introspection/introspection_sink.h"
#include "docguard/rules/engine.h"

namespace docguard::introspection {

// Where and as whom to read: built by the layer that knows the upstream (the proxy's settings).
struct IntrospectorTarget {
  std::string uri;           // with credentials and TLS options; never logged as is
  std::string redacted_uri;  // for log lines and /status
  std::optional<std::string> username, password;
  uint32_t max_namespaces = 1000;
  advisor::AdvisorSettings profile_settings;  // bounds of each sampled collection's profile
};

class Introspector {
 public:
  Introspector(const IntrospectionSettings& settings, IntrospectorTarget target,
               advisor::LiveAdvisor& advisor, rules::Engine& engine, IntrospectionSink& metrics);
  ~Introspector();  // stops and joins
  Introspector(const Introspector&) = delete;
  Introspector& operator=(const Introspector&) = delete;

  void start();
  void stop();

  // {"enabled":true,"uri":...,"passes":N,"last_result":...,"last_started":...,"last_seconds":...,
  //  "next_pass_in_seconds":...,"commands":N,"lease_database":...,"lease_holder":...}
  std::string status_json() const;

 private:
  void run();
  void pass();
  // Between passes: reads the collections traffic reached that no pass read yet.
  void catch_up();
  // The reader, opened on first use and kept (its pool reconnects by itself); an error when the
  // URI or credentials are refused.
  base::Expected<cluster::ClusterReader*> reader();
  // With a lease held by another instance: its stored facts instead of a read.
  base::Expected<void> load_shared(cluster::ClusterReader& reader);
  // Sleeps until `deadline` (or stop); false when stopped.
  bool wait_until(std::chrono::steady_clock::time_point deadline);
  double unit_random();  // [0, 1)
  std::chrono::milliseconds jittered(std::chrono::milliseconds base);
  void log_unknown_once(const std::string& line);

  const IntrospectionSettings settings_;
  const IntrospectorTarget target_;
  advisor::LiveAdvisor& advisor_;
  rules::Engine& engine_;
  IntrospectionSink& metrics_;

  std::unique_ptr<IntrospectionLease> lease_;  // null: every instance reads for itself
  std::unique_ptr<cluster::ClusterReader> reader_;
  std::atomic<bool> stop_{false};
  std::thread thread_;
  mutable std::mutex mutex_;  // guards the status below and wakes wait()
  std::condition_variable wake_;
  uint64_t passes_ = 0;
  uint64_t commands_ = 0;
  PassResult last_result_ = PassResult::kNone;
  std::string last_error_;
  double last_started_ = 0;  // Unix seconds
  double last_seconds_ = 0;
  std::chrono::steady_clock::time_point next_pass_{};
  std::set<std::string> logged_unknown_;  // bounded: each unknown fact is logged once
  uint64_t random_state_;
  bool lease_held_ = false;
};

}  // namespace docguard::introspection
