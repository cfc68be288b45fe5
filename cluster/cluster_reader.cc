#include "docguard/cluster/cluster_reader.h"

#include <mongoc/mongoc.h>

#include <algorithm>
#include <chrono>
#include <string_view>
#include <thread>

#include "docguard/cluster/upstream_uri.h"
#include "reader_impl.h"

namespace docguard::cluster {
namespace {

// Longest single sleep of the pacing, so that the stop flag is noticed promptly.
constexpr auto kPauseSlice = std::chrono::milliseconds(50);
// A full read has no maxTimeMS; a batch that takes longer than this is a dead connection.
constexpr int32_t kSocketTimeoutMarginMs = 10000;

}  // namespace

ClusterReader::ClusterReader() : impl_(std::make_unique<Impl>()) {}
ClusterReader::~ClusterReader() = default;

Expected<std::unique_ptr<ClusterReader>> ClusterReader::open(const ReaderOptions& options) {
  ensure_mongoc_initialized();
  std::unique_ptr<ClusterReader> reader(new ClusterReader());
  Impl& impl = *reader->impl_;
  impl.owner = reader.get();
  impl.options = options;
  reader->redacted_uri_ = redact_uri(options.uri);
  impl.scrub.raw_uri = options.uri;
  impl.scrub.redacted_uri = reader->redacted_uri_;
  if (options.password && !options.password->empty())
    impl.scrub.secrets.push_back(*options.password);

  bson_error_t error{};
  impl.uri = mongoc_uri_new_with_error(options.uri.c_str(), &error);
  if (!impl.uri) {
    return Error{ErrorKind::kConfiguration, ErrorSource::kConfiguration,
                 "invalid URI " + reader->redacted_uri_ + ": " + impl.scrub(error.message)};
  }
  if (const char* written = mongoc_uri_get_password(impl.uri); written && *written) {
    impl.scrub.secrets.emplace_back(written);
  }
  if (options.username && !mongoc_uri_set_username(impl.uri, options.username->c_str())) {
    return Error{ErrorKind::kConfiguration, ErrorSource::kConfiguration,
                 "the user name is not valid UTF-8"};
  }
  if (options.password && !mongoc_uri_set_password(impl.uri, options.password->c_str())) {
    return Error{ErrorKind::kConfiguration, ErrorSource::kConfiguration,
                 "the password is not valid UTF-8"};
  }
  // Bounds a wait the URI leaves open: finding a server, and one batch of a full read.
  if (!mongoc_uri_has_option(impl.uri, MONGOC_URI_SERVERSELECTIONTIMEOUTMS) &&
      options.max_time_ms > 0) {
    mongoc_uri_set_option_as_int32(impl.uri, MONGOC_URI_SERVERSELECTIONTIMEOUTMS,
                                   options.max_time_ms);
  }
  if (!mongoc_uri_has_option(impl.uri, MONGOC_URI_SOCKETTIMEOUTMS) && options.max_time_ms > 0) {
    mongoc_uri_set_option_as_int32(impl.uri, MONGOC_URI_SOCKETTIMEOUTMS,
                                   options.max_time_ms + kSocketTimeoutMarginMs);
  }
  if (const char* db = mongoc_uri_get_database(impl.uri)) reader->uri_database_ = db;

  // Resolves mongodb+srv:// (SRV and TXT records) and applies the URI's TLS options.
  impl.pool = mongoc_client_pool_new_with_error(impl.uri, &error);
  if (!impl.pool) return impl.fail(error, "cannot use " + reader->redacted_uri_);
  mongoc_client_pool_set_error_api(impl.pool, MONGOC_ERROR_API_VERSION_2);
  if (!mongoc_uri_get_appname(impl.uri) && !options.app_name.empty()) {
    mongoc_client_pool_set_appname(impl.pool, options.app_name.c_str());
  }
  // Callbacks must be set before the first pop.
  mongoc_apm_callbacks_t* callbacks = mongoc_apm_callbacks_new();
  mongoc_apm_set_command_started_cb(callbacks, &Impl::on_command_started);
  mongoc_client_pool_set_apm_callbacks(impl.pool, callbacks, &impl);
  mongoc_apm_callbacks_destroy(callbacks);
  impl.client = mongoc_client_pool_pop(impl.pool);
  impl.read_prefs = mongoc_read_prefs_new(MONGOC_READ_SECONDARY_PREFERRED);
  return reader;
}

void ClusterReader::before_command() {
  commands_sent_.fetch_add(1, std::memory_order_relaxed);
  const double rate = impl_->options.max_commands_per_second;
  if (rate <= 0) return;
  const auto interval =
      std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(1.0 / rate));
  const Clock::time_point due = impl_->last_command + interval;
  for (auto now = Clock::now(); now < due && !stopped(impl_->options.stop); now = Clock::now()) {
    std::this_thread::sleep_for(std::min<Clock::duration>(due - now, kPauseSlice));
  }
  impl_->last_command = Clock::now();
}

Expected<ClusterReader::Document> ClusterReader::write_on_primary(
    const std::string& db, std::span<const uint8_t> command) {
  const std::string what = "a write to " + db;
  if (stopped(impl_->options.stop)) return stopped_error(what);
  bson_t cmd;
  if (!bson_init_static(&cmd, command.data(), command.size())) {
    return Error{ErrorKind::kBadInput, ErrorSource::kDocguard, what + ": not a BSON document"};
  }
  codec::ScopedBson opts, reply;
  impl_->append_max_time(opts.get());
  bson_error_t error{};
  if (!mongoc_client_write_command_with_opts(impl_->client, db.c_str(), &cmd, opts.get(),
                                             reply.get(), &error)) {
    return impl_->fail(error, what);
  }
  // libmongoc reports ok: 0 as a failure, but a write error inside an ok reply as success.
  if (auto written = check_write_errors(reply.get(), what); !written) return written.error();
  return copy_of(reply.get());
}

}  // namespace docguard::cluster
