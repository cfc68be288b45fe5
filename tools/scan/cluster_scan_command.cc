#include "cluster_scan_command.h"

#include <chrono>
#include <ostream>

#include "docguard/advisor/cluster_source.h"
#include "docguard/advisor/text_format.h"
#include "docguard/cluster/mongoc_log.h"
#include "docguard/cluster/upstream_uri.h"

namespace docguard::tools {
namespace {

using Clock = std::chrono::steady_clock;

// The application name a scan introduces itself with (introspection has its own).
constexpr const char* kScanAppName = "docguard-scan";
// Progress lines come at most this often; notes always.
constexpr auto kProgressInterval = std::chrono::seconds(1);

// Prints progress: a collection's line when it is done (or still reading) if a second has passed
// since the last line, so a quick scan of small collections prints little.
class ProgressPrinter {
 public:
  ProgressPrinter(const char* command, std::ostream& err, bool quiet)
      : command_(command), err_(err), quiet_(quiet) {}

  void operator()(const advisor::ClusterProgress& p) {
    if (p.event == advisor::ClusterProgress::Event::kCollectionDone) {
      ++collections_;
      documents_ += p.documents;
      bytes_ += p.bytes;
    }
    if (p.event == advisor::ClusterProgress::Event::kNote) {
      err_ << command_ << ": " << namespace_of(p) << p.note << "\n";
      return;
    }
    if (quiet_ || p.event == advisor::ClusterProgress::Event::kCollectionStarted) return;
    const auto now = Clock::now();
    if (now - last_line_ < kProgressInterval) return;
    last_line_ = now;
    err_ << command_ << ": " << namespace_of(p) << advisor::with_commas(p.documents) << " documents"
         << (p.expected_documents ? " of " + advisor::with_commas(*p.expected_documents) : "")
         << ", " << advisor::human_bytes(p.bytes) << " (" << p.method << ")"
         << (p.event == advisor::ClusterProgress::Event::kDocuments ? ", reading" : "") << "\n";
  }

  void summary(uint64_t commands) const {
    if (quiet_) return;
    const auto seconds =
        std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - started_).count() /
        1000.0;
    err_ << command_ << ": read " << collections_
         << (collections_ == 1 ? " collection, " : " collections, ")
         << advisor::with_commas(documents_) << " documents, " << advisor::human_bytes(bytes_)
         << " in " << seconds << " s (" << commands << " commands)\n";
  }

 private:
  static std::string namespace_of(const advisor::ClusterProgress& p) {
    if (p.db.empty()) return "";
    return p.db + (p.collection.empty() ? "" : "." + p.collection) + ": ";
  }

  const char* command_;
  std::ostream& err_;
  bool quiet_;
  Clock::time_point started_ = Clock::now();
  Clock::time_point last_line_ = started_;
  uint64_t collections_ = 0, documents_ = 0, bytes_ = 0;
};

}  // namespace

bool scan_cluster(const advisor::ScanArguments& args, const char* command,
                  advisor::DumpVisitor& visitor, std::ostream& err, std::string* source) {
  *source = cluster::strip_credentials(args.source);
  cluster::ReaderOptions options;
  options.uri = args.source;
  options.app_name = kScanAppName;
  if (!args.credentials_file.empty()) {
    const auto credentials = advisor::read_credentials_file(args.credentials_file);
    if (!credentials) {
      err << command << ": " << credentials.error().message << "\n";
      return false;
    }
    options.username = credentials->username;
    options.password = credentials->password;
  }
  // libmongoc's own warnings, on stderr like ours; its debug lines (failed heartbeats) only
  // repeat the error reported below. A password, in a URI the message quotes or from the
  // credentials file, is masked. The handler refers to `err`, so it goes with this selection.
  cluster::set_mongoc_log_handler(
      [&err, command, secret = options.password.value_or("")](
          cluster::MongocLogLevel level, std::string_view domain, std::string_view message) {
        if (level > cluster::MongocLogLevel::kWarning) return;
        std::string text(message);
        for (auto at = secret.empty() ? std::string::npos : text.find(secret);
             at != std::string::npos; at = text.find(secret, at)) {
          text.replace(at, secret.size(), "****");
        }
        err << command << ": libmongoc " << domain << ": " << cluster::redact_uri(text) << "\n";
      });
  struct QuietAgain {
    ~QuietAgain() { cluster::set_mongoc_log_handler({}); }
  } quiet_again;
  auto reader = cluster::ClusterReader::open(options);
  if (!reader) {
    err << command << ": " << reader.error().message << "\n";
    return false;
  }
  advisor::ClusterSelection selection;
  selection.db = args.db;
  selection.collection = args.collection;
  selection.sample_size = args.sample;
  ProgressPrinter printer(command, err, args.quiet);
  auto read = advisor::read_cluster(*reader.value(), selection, visitor,
                                    [&printer](const advisor::ClusterProgress& p) { printer(p); });
  if (!read) {
    err << command << ": " << reader.value()->redacted_uri() << ": " << read.error().message
        << "\n";
    return false;
  }
  printer.summary(reader.value()->commands_sent());
  return true;
}

}  // namespace docguard::tools
