// The `docguard scan` arguments, for a dump and for a live cluster, and credentials files:
//   scan PATH|URI [--config FILE] [--format text|json|html] [--fail-on warn|block]
//        [--sample N] [--db NAME] [--collection NAME] [--credentials-file FILE] [--quiet]
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "docguard/advisor/finding.h"
#include "docguard/advisor/report.h"
#include "docguard/base/expected.h"

namespace docguard::advisor {

// mongodb:// or mongodb+srv://: a cluster to read rather than a dump.
bool is_cluster_uri(std::string_view source);

struct ScanArguments {
  std::string source;  // the dump's path, or the cluster's URI
  ReportFormat format = ReportFormat::kText;
  std::string config_path;
  std::optional<Severity> fail_on;
  // A cluster only:
  uint64_t sample = 0;  // 0: every document
  std::string db;
  std::string collection;
  std::string credentials_file;
  bool quiet = false;  // no progress lines on stderr
};

// Whether the arguments go together (the program's command line, app/, reads them): a source is
// named, and the cluster's options come with a cluster. A configuration error says why not.
base::Expected<void> check_scan_arguments(const ScanArguments& args);

struct Credentials {
  std::optional<std::string> username;
  std::optional<std::string> password;
};

// A credentials file: `user: NAME` and `password: SECRET` lines (blank lines and # comments
// ignored), or one connection string line whose user and password are taken. A kConfiguration
// error (its message never quoting the secret) when it is neither; reading the file, a kIo error
// when it cannot be read, and the path before the message of either.
base::Expected<Credentials> parse_credentials(std::string_view text);
base::Expected<Credentials> read_credentials_file(const std::string& path);

}  // namespace docguard::advisor
