// docguard: a MongoDB wire-protocol proxy that enforces document design rules.
#include <malloc.h>
#include <spdlog/sinks/stdout_sinks.h>
#include <spdlog/spdlog.h>

#include <cstdio>
#include <iostream>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "docguard/cluster/mongoc_log.h"
#include "docguard/cluster/upstream_uri.h"
#include "docguard/proxy/admin_endpoints.h"
#include "docguard/proxy/config.h"
#include "docguard/proxy/log_format.h"
#include "docguard/proxy/server.h"
#include "docguard/proxy/tls.h"
#include "docguard/settings/introspection_target.h"
#include "docguard/settings/settings_reader.h"
#include "docguard/tools/replay_command.h"
#include "docguard/tools/scan_command.h"
#include "docguard/tools/whatif.h"

namespace {

using docguard::proxy::ProxyConfig;

constexpr const char* kUsage = R"(usage: docguard [options]
       docguard scan PATH|URI [--config FILE] [--format text|json|html] [--fail-on warn|block]
                     [--sample N] [--db NAME] [--collection NAME] [--credentials-file FILE]
       docguard validator PATH|URI NAMESPACE
       docguard whatif --config FILE --recording DIR [--format text|json|html] [--output FILE]
                       [--show-values] [--facts-from DUMP|URI]
       docguard replay --recording DIR --target URI [--speed 1|4|max] [--read-only]
                       [--report-dir DIR] [--max-connections N]

A MongoDB wire-protocol proxy that decodes every OP_MSG and enforces document design rules.
`scan` reads mongodump output, or a live cluster (mongodb://, mongodb+srv://) as mongodump
reads it, and prints the design advisor's findings (and, with --config, the file's rules
applied to every document); `validator` prints a collMod $jsonSchema; `whatif` judges a
traffic recording with the file's rules as a live docguard would have (exit code 1 when some
request would be refused); `replay` runs a recording against another cluster, paced as
recorded, and compares the answers per query shape (report.json and report.html; exit 1 when a
shape differs).

options:
  --listen HOST:PORT        where clients connect (default 127.0.0.1:27018); unix:PATH.sock for a
                            Unix domain socket (mode 0660); repeat for several, e.g. TCP and a socket
  --upstream URI            the cluster: any connection string a driver accepts, e.g. mongodb://HOST:PORT,
                            mongodb://a,b,c/?replicaSet=rs0, mongodb+srv://NAME (default
                            mongodb://127.0.0.1:27017); ?tls=true&tlsCAFile=FILE for TLS
  --admin HOST:PORT         admin HTTP listener (default 127.0.0.1:9216); its endpoints are below
  --config FILE             YAML file with proxy settings and rules; flags override it
  --threads N               io threads (default: one per core)
  --tls-cert FILE           serve clients over TLS with this certificate chain (PEM)
  --tls-key FILE            the certificate's private key (PEM)
  --tls-ca FILE             require client certificates signed by this CA (PEM)
  --log-format text|json    log line format on stderr (default text)
  --log-level LEVEL         trace, debug, info, warn, error, critical, off (default info)
  --check-config [FILE]     validate the configuration and exit (0 valid, 1 invalid)
  --version                 print the version and exit
  --help                    print this help and exit

admin endpoints (all but /healthz need `admin_token:` as a bearer token when one is set):
)";

spdlog::level::level_enum spdlog_level(docguard::proxy::LogLevel level) {
  using docguard::proxy::LogLevel;
  switch (level) {
    case LogLevel::kTrace:
      return spdlog::level::trace;
    case LogLevel::kDebug:
      return spdlog::level::debug;
    case LogLevel::kInfo:
      return spdlog::level::info;
    case LogLevel::kWarn:
      return spdlog::level::warn;
    case LogLevel::kError:
      return spdlog::level::err;
    case LogLevel::kCritical:
      return spdlog::level::critical;
    case LogLevel::kOff:
      return spdlog::level::off;
  }
  return spdlog::level::info;
}

void setup_logging(const ProxyConfig& config) {
  auto logger = spdlog::stderr_logger_mt("docguard");
  logger->set_formatter(docguard::proxy::make_log_formatter(config.log_format));
  logger->set_level(spdlog_level(config.log_level));
  logger->flush_on(spdlog::level::info);
  spdlog::set_default_logger(logger);
}

}  // namespace

int main(int argc, char** argv) {
  // Message buffers up to the largest message come from the heap and are reused there, instead
  // of being mapped, faulted in page by page and unmapped for every large message; the server
  // returns unused heap memory to the system every few seconds (malloc_trim), so a burst of
  // large messages does not pin it.
  mallopt(M_MMAP_THRESHOLD, 64 * 1024 * 1024);
  mallopt(M_TRIM_THRESHOLD, 128 * 1024 * 1024);
  // First, for every subcommand: a docguard killed later leaves no libmongoc file behind.
  docguard::cluster::ensure_mongoc_initialized();
  if (argc > 1 && std::string_view(argv[1]) == "scan") {
    // Rule violations become findings; the engine's per-violation log lines would only repeat
    // them on the console.
    spdlog::set_level(spdlog::level::off);
    // The one config reader: `advisor:` thresholds and the rules, for the scanned documents.
    return docguard::tools::run_scan(argc - 1, argv + 1, [](const std::string& path) {
      const ProxyConfig file = docguard::settings::load_config_file(path);
      return docguard::tools::ScanConfig{file.advisor, file.rules};
    });
  }
  if (argc > 1 && std::string_view(argv[1]) == "validator") {
    return docguard::tools::run_validator(argc - 1, argv + 1);
  }
  if (argc > 1 && std::string_view(argv[1]) == "whatif") {
    // The candidate file through the one config reader, as `scan` reads its rules.
    return docguard::tools::run_whatif(argc - 1, argv + 1, [](const std::string& path) {
      const ProxyConfig file = docguard::settings::load_config_file(path);
      return docguard::tools::WhatifConfig{file.rules, file.max_message_bytes};
    });
  }
  if (argc > 1 && std::string_view(argv[1]) == "replay") {
    return docguard::tools::run_replay(argc - 1, argv + 1);
  }
  // libmongoc would print its own warnings while the upstream URI is parsed; the error
  // docguard reports names the option instead. The server routes its log into spdlog later.
  docguard::cluster::set_mongoc_log_handler({});
  docguard::settings::Flags flags;
  ProxyConfig config;
  try {
    flags = docguard::settings::parse_flags(argc, argv);
    if (flags.help) {
      std::cout << kUsage << docguard::proxy::admin_endpoints_help();
      return 0;
    }
    if (flags.version) {
      std::cout << "docguard " << DOCGUARD_VERSION << "\n";
      return 0;
    }
    config = docguard::settings::build_config(flags);
    (void)docguard::proxy::make_tls_contexts(config);  // certificates load, or say which not
    // The introspection credentials file reads, or says why not (never quoting the secret).
    if (config.introspection.enabled) (void)docguard::settings::introspection_target(config);
  } catch (const std::exception& e) {
    std::cerr << "docguard: " << e.what() << "\n";
    return 1;
  }
  if (flags.check_config) {
    std::cout << "docguard: configuration "
              << (flags.values.count("config") ? flags.values["config"] : "<defaults>")
              << " is valid\n";
    return 0;
  }
  setup_logging(config);
  return docguard::proxy::run_server(std::move(config));
}
