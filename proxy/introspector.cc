#include "docguard/proxy/introspector.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <cmath>

#include "docguard/advisor/cluster_source.h"
#include "docguard/advisor/collection_profile.h"
#include "docguard/advisor/scan_arguments.h"
#include "docguard/cluster/cluster_reader.h"
#include "docguard/cluster/upstream_uri.h"
#include "docguard/proxy/config.h"
#include "docguard/rules/structured_log.h"

namespace docguard::proxy {
namespace {

double unix_now() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

constexpr size_t kMaxLoggedUnknown = 1000;

// Hands each collection to the advisor as soon as its documents are read (facts become known
// collection by collection, not at the end of a long pass), and each sampled document's array
// lengths to the engine's tracker.
class IntrospectionVisitor final : public advisor::DumpVisitor {
 public:
  IntrospectionVisitor(const advisor::AdvisorSettings& settings, advisor::LiveAdvisor& advisor,
                       rules::Engine& engine)
      : settings_(settings), advisor_(advisor), engine_(engine) {}

  void on_collection(const advisor::CollectionMetadata& metadata) override {
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

  bool on_document(std::string_view db, std::string_view collection, const uint8_t* data,
                   uint32_t size, std::string*) override {
    if (!current_ || current_->db() != db || current_->collection() != collection) return true;
    std::string ignored;  // a document the profile cannot walk is skipped, not fatal
    current_->add_document(data, size, &ignored);
    engine_.learn_stored_document(db, collection, codec::BsonView{data, size});
    ++documents_;
    return true;
  }

  void flush() {
    if (!current_) return;
    for (const std::string& line : current_->metadata().unknown) {
      unknown_.push_back(current_->ns() + ": " + line);
    }
    advisor_.on_cluster_collection(std::move(current_), unix_now());
  }

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
};

std::string json_string(std::string_view s) {
  std::string out = "\"";
  log::Fields::escape_into(out, s);
  return out + "\"";
}

std::string with_option(std::string uri, const std::string& option) {
  const size_t slash = uri.find('/', uri.find("://") + 3);
  if (slash == std::string::npos) uri += "/";
  uri += uri.find('?') == std::string::npos ? "?" : "&";
  return uri + option;
}

}  // namespace

IntrospectionMetrics::IntrospectionMetrics(prometheus::Registry& registry)
    : runs_(prometheus::BuildCounter()
                .Name("docguard_introspection_runs_total")
                .Help("Introspection passes (docguard's own reads of the cluster), by result")
                .Register(registry)),
      seconds_(prometheus::BuildHistogram()
                   .Name("docguard_introspection_seconds")
                   .Help("Duration of introspection passes")
                   .Register(registry)
                   .Add({}, prometheus::Histogram::BucketBoundaries{1, 5, 15, 60, 300, 900, 3600})),
      commands_(prometheus::BuildCounter()
                    .Name("docguard_introspection_commands_total")
                    .Help("Commands docguard sent to read the cluster")
                    .Register(registry)
                    .Add({})),
      unknown_facts_(prometheus::BuildGauge()
                         .Name("docguard_introspection_unknown_facts")
                         .Help("Facts the last pass could not read (rights, server support)")
                         .Register(registry)
                         .Add({})),
      documents_(prometheus::BuildGauge()
                     .Name("docguard_collection_documents")
                     .Help("Documents in the collection, from the server's statistics")
                     .Register(registry)),
      size_bytes_(prometheus::BuildGauge()
                      .Name("docguard_collection_size_bytes")
                      .Help("Uncompressed data size of the collection, from the server")
                      .Register(registry)) {}

void IntrospectionMetrics::count_run(const std::string& result) {
  std::lock_guard lock(mutex_);
  auto [it, inserted] = run_series_.try_emplace(result, nullptr);
  if (inserted) it->second = &runs_.Add({{"result", result}});
  it->second->Increment();
}

void IntrospectionMetrics::update_collections(
    const std::vector<advisor::LiveAdvisor::CollectionFacts>& facts) {
  std::lock_guard lock(mutex_);
  std::set<std::string> present;
  for (const auto& f : facts) {
    if (!f.metadata.stats.known) continue;
    const std::string ns = f.metadata.db + "." + f.metadata.collection;
    present.insert(ns);
    auto [it, inserted] = collection_series_.try_emplace(ns);
    if (inserted) {
      const prometheus::Labels labels{{"db", f.metadata.db}, {"collection", f.metadata.collection}};
      it->second = {&documents_.Add(labels), &size_bytes_.Add(labels)};
    }
    it->second.first->Set(static_cast<double>(f.metadata.stats.documents));
    it->second.second->Set(static_cast<double>(f.metadata.stats.size_bytes));
  }
  for (auto it = collection_series_.begin(); it != collection_series_.end();) {
    if (present.count(it->first)) {
      ++it;
      continue;
    }
    documents_.Remove(it->second.first);
    size_bytes_.Remove(it->second.second);
    it = collection_series_.erase(it);
  }
}

Introspector::Introspector(const IntrospectionSettings& settings, IntrospectorTarget target,
                           advisor::LiveAdvisor& advisor, rules::Engine& engine,
                           IntrospectionMetrics& metrics)
    : settings_(settings),
      target_(std::move(target)),
      advisor_(advisor),
      engine_(engine),
      metrics_(metrics),
      random_state_(
          static_cast<uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count()) ^
          reinterpret_cast<uintptr_t>(this)) {}

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

bool Introspector::wait(std::chrono::milliseconds delay) {
  std::unique_lock lock(mutex_);
  next_pass_ = std::chrono::steady_clock::now() + delay;
  wake_.wait_until(lock, next_pass_, [this] { return stop_.load(); });
  return !stop_;
}

void Introspector::run() {
  // The first pass starts at once, give or take a little (a fleet started together spreads).
  const auto spread = std::min<std::chrono::milliseconds>(
      std::chrono::seconds(10),
      std::chrono::milliseconds(
          std::llround(settings_.jitter * static_cast<double>(settings_.interval.count()))));
  const auto first =
      std::chrono::milliseconds(std::llround(unit_random() * static_cast<double>(spread.count())));
  if (!wait(first)) return;
  while (!stop_) {
    pass();
    if (!wait(jittered(settings_.interval))) return;
  }
}

void Introspector::log_unknown_once(const std::string& line) {
  if (logged_unknown_.size() >= kMaxLoggedUnknown || !logged_unknown_.insert(line).second) return;
  spdlog::warn(
      "introspection: {} (docguard leaves out what needs it; grant the rights or set "
      "introspection.credentials_file)",
      line);
}

void Introspector::pass() {
  const auto started = std::chrono::steady_clock::now();
  {
    std::lock_guard lock(mutex_);
    last_started_ = unix_now();
  }
  cluster::ReaderOptions options;
  options.uri = target_.uri;
  options.username = target_.username;
  options.password = target_.password;
  options.max_time_ms = static_cast<int32_t>(settings_.max_time.count());
  options.max_commands_per_second = settings_.max_commands_per_second;
  options.stop = &stop_;
  std::string result, error_text;
  uint64_t commands = 0;
  IntrospectionVisitor visitor(target_.profile_settings, advisor_, engine_);
  if (auto reader = cluster::ClusterReader::open(options); !reader) {
    result = "failed";
    error_text = reader.error().message;
  } else {
    advisor::ClusterScope scope;
    scope.sample_size = settings_.sample_size;
    scope.max_namespaces = target_.max_namespaces;
    scope.ignore_uri_database = true;
    const auto error = advisor::read_cluster(*reader.value(), scope, visitor);
    visitor.flush();
    commands = reader.value()->commands_sent();
    if (error && error->code == cluster::kStopped) return;
    if (error) {
      result = "failed";
      error_text = error->message;
      if (cluster::is_unauthorized(*error)) log_unknown_once("cannot list: " + error->message);
    } else {
      advisor_.on_cluster_pass(visitor.databases(), visitor.namespaces());
      result = visitor.unknown().empty() ? "ok" : "partial";
    }
  }
  for (const std::string& line : visitor.unknown()) log_unknown_once(line);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  metrics_.count_run(result);
  metrics_.observe_seconds(seconds);
  metrics_.add_commands(commands);
  metrics_.set_unknown_facts(visitor.unknown().size());
  if (result == "failed") {
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

std::string Introspector::status_json() const {
  std::lock_guard lock(mutex_);
  const double next =
      std::chrono::duration<double>(next_pass_ - std::chrono::steady_clock::now()).count();
  char numbers[160];
  std::snprintf(numbers, sizeof numbers,
                "\"passes\":%llu,\"commands\":%llu,\"last_started\":%.3f,\"last_seconds\":%.3f,"
                "\"next_pass_in_seconds\":%.1f",
                static_cast<unsigned long long>(passes_),
                static_cast<unsigned long long>(commands_), last_started_, last_seconds_,
                std::max(0.0, next));
  return std::string("{\"enabled\":true,\"uri\":") + json_string(target_.redacted_uri) + "," +
         numbers + ",\"last_result\":" + json_string(last_result_) +
         ",\"last_error\":" + json_string(last_error_) +
         ",\"lease_database\":" + json_string(settings_.lease_database) + "}";
}

IntrospectorTarget introspection_target(const ProxyConfig& config) {
  const IntrospectionSettings& s = config.introspection;
  IntrospectorTarget target;
  target.uri = s.uri.empty() ? config.upstream_uri : s.uri;
  if (s.uri.empty()) {
    // docguard's own TLS settings towards the upstream, as URI options libmongoc reads (a client
    // certificate here is how x.509 authentication reaches introspection).
    const UpstreamTlsSettings tls = effective_upstream_tls(config);
    if (tls.enabled && target.uri.find("tls=") == std::string::npos &&
        target.uri.find("ssl=") == std::string::npos) {
      target.uri = with_option(target.uri, "tls=true");
      if (!tls.ca_file.empty()) target.uri = with_option(target.uri, "tlsCAFile=" + tls.ca_file);
      if (!tls.cert_file.empty() && (tls.key_file.empty() || tls.key_file == tls.cert_file)) {
        target.uri = with_option(target.uri, "tlsCertificateKeyFile=" + tls.cert_file);
      }
      if (tls.allow_invalid_certificates) {
        target.uri = with_option(target.uri, "tlsAllowInvalidCertificates=true");
      }
      if (tls.allow_invalid_hostnames) {
        target.uri = with_option(target.uri, "tlsAllowInvalidHostnames=true");
      }
    }
  }
  target.redacted_uri = cluster::redact_uri(target.uri);
  if (!s.credentials_file.empty()) {
    advisor::Credentials credentials;
    std::string why;
    if (!advisor::read_credentials_file(s.credentials_file, &credentials, &why)) {
      throw ConfigError("introspection.credentials_file: " + why);
    }
    target.username = credentials.username;
    target.password = credentials.password;
  }
  target.profile_settings = config.advisor;
  target.max_namespaces =
      std::min(config.rules->tracking().max_namespaces, config.advisor.live_max_namespaces);
  return target;
}

}  // namespace docguard::proxy
