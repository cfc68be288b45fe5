#include "docguard/introspection/introspector.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <cmath>

#include "docguard/advisor/cluster_source.h"
#include "docguard/advisor/collection_profile.h"
#include "docguard/advisor/detectors.h"
#include "docguard/cluster/cluster_reader.h"
#include "docguard/introspection/catalog_facts.h"

namespace docguard::introspection {
namespace {

double unix_now() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

constexpr size_t kMaxLoggedUnknown = 1000;
// How often, between passes, collections new to traffic are looked for, and how many are read
// at a time (each read is paced like a pass's).
constexpr auto kCatchUpEvery = std::chrono::seconds(5);
constexpr size_t kCatchUpMaxCollections = 16;

// Hands each collection to the advisor as soon as its documents are read (facts become known
// collection by collection, not at the end of a long pass), and each sampled document's array
// lengths to the engine's tracker.
class IntrospectionVisitor final : public advisor::DumpVisitor {
 public:
  IntrospectionVisitor(const advisor::AdvisorSettings& settings, advisor::LiveAdvisor& advisor,
                       rules::Engine& engine)
      : settings_(settings), advisor_(advisor), engine_(engine) {}

  void on_collection(const advisor::CollectionMetadata& metadata) override {
    learn_indexes(engine_, metadata);
    // A second call for the collection being read corrects its metadata (the server refused
    // $sample and the documents were read by find).
    if (current_ && current_->db() == metadata.db &&
        current_->collection() == metadata.collection) {
      current_->set_metadata(metadata);
      return;
    }
    flush();
    current_ =
        std::make_unique<advisor::CollectionProfile>(metadata.db, metadata.collection, settings_);
    current_->set_metadata(metadata);
    if (std::find(databases_.begin(), databases_.end(), metadata.db) == databases_.end()) {
      databases_.push_back(metadata.db);
    }
    namespaces_.push_back(metadata.db + "." + metadata.collection);
  }

  base::Expected<void> on_document(std::string_view db, std::string_view collection,
                                   const uint8_t* data, uint32_t size) override {
    if (!current_ || current_->db() != db || current_->collection() != collection) return {};
    // A document the profile cannot walk is skipped, not fatal.
    (void)current_->add_document(data, size);
    engine_.learn_stored_document(db, collection, codec::BsonView{data, size});
    ++documents_;
    return {};
  }

  void flush() {
    if (!current_) return;
    for (const std::string& line : current_->metadata().unknown) {
      unknown_.push_back(current_->ns() + ": " + line);
    }
    const double now = unix_now();
    if (share_) {
      advisor::SharedCollection facts;
      facts.metadata = current_->metadata();
      advisor::run_document_detectors(*current_, settings_, facts.findings);
      for (advisor::Finding& f : facts.findings) f.source = "sample";
      facts.sampled_documents = current_->documents();
      facts.read_at = now;
      shared_.push_back(std::move(facts));
    }
    advisor_.on_cluster_collection(std::move(current_), now);
  }

  // Keep what each collection showed, for the rest of the fleet.
  void share() { share_ = true; }
  const std::vector<advisor::SharedCollection>& shared() const { return shared_; }

  const std::vector<std::string>& databases() const { return databases_; }
  const std::vector<std::string>& namespaces() const { return namespaces_; }
  const std::vector<std::string>& unknown() const { return unknown_; }
  uint64_t documents() const { return documents_; }

 private:
  const advisor::AdvisorSettings& settings_;
  advisor::LiveAdvisor& advisor_;
  rules::Engine& engine_;
  std::unique_ptr<advisor::CollectionProfile> current_;
  std::vector<std::string> databases_, namespaces_, unknown_;
  uint64_t documents_ = 0;
  bool share_ = false;
  std::vector<advisor::SharedCollection> shared_;
};

}  // namespace

Introspector::Introspector(const IntrospectionSettings& settings, IntrospectorTarget target,
                           advisor::LiveAdvisor& advisor, rules::Engine& engine,
                           IntrospectionSink& metrics)
    : settings_(settings),
      target_(std::move(target)),
      advisor_(advisor),
      engine_(engine),
      metrics_(metrics),
      random_state_(
          static_cast<uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count()) ^
          reinterpret_cast<uintptr_t>(this)) {
  if (!settings_.lease_database.empty()) {
    lease_ = std::make_unique<IntrospectionLease>(settings_.lease_database, fleet_instance_id());
  }
}

Introspector::~Introspector() { stop(); }

void Introspector::start() {
  advisor_.expect_cluster_facts(true);
  thread_ = std::thread([this] { run(); });
}

void Introspector::stop() {
  {
    std::lock_guard lock(mutex_);
    stop_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
}

double Introspector::unit_random() {
  // splitmix64: a fleet's instances draw different delays.
  uint64_t z = (random_state_ += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  z ^= z >> 31;
  return static_cast<double>(z >> 11) * 0x1.0p-53;  // [0, 1)
}

std::chrono::milliseconds Introspector::jittered(std::chrono::milliseconds base) {
  const double spread = settings_.jitter * static_cast<double>(base.count());
  return std::chrono::milliseconds(std::max<int64_t>(
      0, std::llround(static_cast<double>(base.count()) + (unit_random() * 2 - 1) * spread)));
}

bool Introspector::wait_until(std::chrono::steady_clock::time_point deadline) {
  std::unique_lock lock(mutex_);
  wake_.wait_until(lock, deadline, [this] { return stop_.load(); });
  return !stop_;
}

void Introspector::run() {
  using std::chrono::steady_clock;
  // The first pass starts at once, give or take a little (a fleet started together spreads).
  const auto spread = std::min<std::chrono::milliseconds>(
      std::chrono::seconds(10),
      std::chrono::milliseconds(
          std::llround(settings_.jitter * static_cast<double>(settings_.interval.count()))));
  const auto first =
      std::chrono::milliseconds(std::llround(unit_random() * static_cast<double>(spread.count())));
  if (!wait_until(steady_clock::now() + first)) return;
  while (!stop_) {
    pass();
    const auto due = steady_clock::now() + jittered(settings_.interval);
    {
      std::lock_guard lock(mutex_);
      next_pass_ = due;
    }
    // Between passes, collections that traffic reaches for the first time are read soon
    // rather than at the next pass, an interval away.
    while (steady_clock::now() < due) {
      if (!wait_until(std::min(due, steady_clock::now() + kCatchUpEvery))) return;
      if (steady_clock::now() < due) catch_up();
    }
  }
}

base::Expected<cluster::ClusterReader*> Introspector::reader() {
  if (reader_) return reader_.get();
  cluster::ReaderOptions options;
  options.uri = target_.uri;
  options.username = target_.username;
  options.password = target_.password;
  options.max_time_ms = static_cast<int32_t>(settings_.max_time.count());
  options.max_commands_per_second = settings_.max_commands_per_second;
  options.stop = &stop_;
  auto opened = cluster::ClusterReader::open(options);
  if (!opened) return opened.error();
  reader_ = std::move(opened).value();
  return reader_.get();
}

void Introspector::catch_up() {
  const auto unread = advisor_.take_unread_namespaces(kCatchUpMaxCollections);
  if (unread.empty()) return;
  auto opened = reader();
  if (!opened) return;
  cluster::ClusterReader* r = opened.value();
  const uint64_t commands_before = r->commands_sent();
  bool held;
  {
    std::lock_guard lock(mutex_);
    held = lease_held_;
  }
  // A follower first looks at what the holder stored: it may know these already.
  if (lease_ && !held) (void)load_shared(*r);  // what cannot be loaded is read below
  IntrospectionVisitor visitor(target_.profile_settings, advisor_, engine_);
  if (lease_ && held) visitor.share();
  for (const auto& [db, collection] : unread) {
    if (stop_) return;
    if (lease_ && !held && advisor_.has_cluster_facts(db, collection)) continue;
    advisor::ClusterSelection scope;
    scope.db = db;
    scope.collection = collection;
    scope.sample_size = settings_.sample_size;
    scope.max_namespaces = 1;
    if (const auto read = advisor::read_cluster(*r, scope, visitor); !read) {
      if (read.error().kind == base::ErrorKind::kStopped) return;
      spdlog::debug("introspection: {}.{} not read: {}", db, collection, read.error().message);
    }
    visitor.flush();
  }
  for (const std::string& line : visitor.unknown()) log_unknown_once(line);
  if (lease_ && held && !visitor.shared().empty()) {
    if (auto published =
            lease_->publish(*r, visitor.shared(), IntrospectionLease::FactsPass::kPartial);
        !published) {
      spdlog::debug("introspection: facts not stored for the fleet: {}", published.error().message);
    }
  }
  const uint64_t commands = r->commands_sent() - commands_before;
  metrics_.add_commands(commands);
  std::lock_guard lock(mutex_);
  commands_ += commands;
}

void Introspector::log_unknown_once(const std::string& line) {
  if (logged_unknown_.size() >= kMaxLoggedUnknown || !logged_unknown_.insert(line).second) return;
  // Once per fact: a server that lacks a stage, or rights not granted, say the same every pass.
  spdlog::warn("introspection: {} (what needs it is left out of the advice; logged once)", line);
}

void Introspector::pass() {
  const auto started = std::chrono::steady_clock::now();
  {
    std::lock_guard lock(mutex_);
    last_started_ = unix_now();
  }
  PassResult result = PassResult::kFailed;
  std::string error_text;
  uint64_t commands = 0;
  IntrospectionVisitor visitor(target_.profile_settings, advisor_, engine_);
  if (auto opened = reader(); !opened) {
    error_text = opened.error().message;
  } else {
    cluster::ClusterReader& r = *opened.value();
    const uint64_t commands_before = r.commands_sent();
    // A lease lasts two intervals: the holder renews it every pass, and when it is gone another
    // instance takes over within two intervals.
    cluster::Expected<bool> held = true;
    if (lease_) held = lease_->acquire(r, settings_.interval * 2);
    if (!held) {
      error_text = "the introspection lease in " + lease_->database() + ": " + held.error().message;
    } else if (!held.value()) {
      if (auto loaded = load_shared(r)) {
        result = PassResult::kShared;
      } else {
        error_text = loaded.error().message;
      }
    } else {
      if (lease_) visitor.share();
      advisor::ClusterSelection scope;
      scope.sample_size = settings_.sample_size;
      scope.max_namespaces = target_.max_namespaces;
      scope.ignore_uri_database = true;
      if (lease_) scope.skip_databases.push_back(lease_->database());
      const auto read = advisor::read_cluster(r, scope, visitor);
      visitor.flush();
      if (!read && read.error().kind == base::ErrorKind::kStopped) return;
      if (!read) {
        error_text = read.error().message;
        if (cluster::is_unauthorized(read.error())) {
          log_unknown_once("cannot list: " + read.error().message);
        }
      } else {
        advisor_.on_cluster_pass(visitor.databases(), visitor.namespaces());
        result = visitor.unknown().empty() ? PassResult::kOk : PassResult::kPartial;
        if (lease_) {
          if (auto published =
                  lease_->publish(r, visitor.shared(), IntrospectionLease::FactsPass::kComplete);
              !published) {
            spdlog::warn("introspection: the facts could not be stored in {} for the fleet: {}",
                         lease_->database(), published.error().message);
          }
        }
      }
    }
    commands = r.commands_sent() - commands_before;
    std::lock_guard lock(mutex_);
    lease_held_ = lease_ && held && held.value();
  }
  for (const std::string& line : visitor.unknown()) log_unknown_once(line);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  metrics_.count_run(result);
  metrics_.observe_seconds(seconds);
  metrics_.add_commands(commands);
  metrics_.set_unknown_facts(visitor.unknown().size());
  if (result == PassResult::kShared) {
    spdlog::debug("introspection: another instance holds the lease; its facts were loaded from {}",
                  settings_.lease_database);
  } else if (result == PassResult::kFailed) {
    spdlog::warn("introspection of {} failed after {:.1f} s: {} (retried at the next pass)",
                 target_.redacted_uri, seconds, error_text);
  } else {
    spdlog::info(
        "introspection of {}: {} collections, {} documents sampled, {} commands in {:.1f} s{}",
        target_.redacted_uri, visitor.namespaces().size(), visitor.documents(), commands, seconds,
        visitor.unknown().empty()
            ? ""
            : "; " + std::to_string(visitor.unknown().size()) + " facts unknown");
  }
  std::lock_guard lock(mutex_);
  ++passes_;
  commands_ += commands;
  last_result_ = result;
  last_error_ = error_text;
  last_seconds_ = seconds;
}

base::Expected<void> Introspector::load_shared(cluster::ClusterReader& reader) {
  auto loaded = lease_->load(reader);
  if (!loaded) {
    base::Error error = loaded.error();
    error.message = "the fleet's facts in " + lease_->database() + ": " + error.message;
    return error;
  }
  std::vector<std::string> databases, namespaces;
  for (advisor::SharedCollection& shared : loaded.value()) {
    const advisor::CollectionMetadata& m = shared.metadata;
    if (std::find(databases.begin(), databases.end(), m.db) == databases.end()) {
      databases.push_back(m.db);
    }
    namespaces.push_back(m.db + "." + m.collection);
    learn_indexes(engine_, m);
    advisor_.on_shared_collection(std::move(shared));
  }
  advisor_.on_cluster_pass(databases, namespaces);
  return {};
}

}  // namespace docguard::introspection
