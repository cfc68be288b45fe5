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

#include "docguard/advisor/scan_command.h"
#include "docguard/cluster/mongoc_log.h"
#include "docguard/cluster/upstream_uri.h"
#include "docguard/proxy/config.h"
#include "docguard/proxy/introspector.h"
#include "docguard/proxy/log_format.h"
#include "docguard/proxy/server.h"
#include "docguard/proxy/tls.h"
#include "docguard/rules/rule_set.h"

namespace {

using docguard::proxy::ConfigError;
using docguard::proxy::ProxyConfig;

constexpr const char* kUsage = R"(usage: docguard [options]
       docguard scan PATH|URI [--config FILE] [--format text|json|html] [--fail-on warn|block]
                     [--sample N] [--db NAME] [--collection NAME] [--credentials-file FILE]
       docguard validator PATH|URI NAMESPACE

A MongoDB wire-protocol proxy that decodes every OP_MSG and enforces document design rules.
`scan` reads mongodump output, or a live cluster (mongodb://, mongodb+srv://) as mongodump
reads it, and prints the design advisor's findings (and, with --config, the file's rules
applied to every document); `validator` prints a collMod $jsonSchema.

options:
  --listen HOST:PORT        where clients connect (default 127.0.0.1:27018); unix:PATH.sock for a
                            Unix domain socket (mode 0660); repeat for several, e.g. TCP and a socket
  --upstream URI            the cluster: any connection string a driver accepts, e.g. mongodb://HOST:PORT,
                            mongodb://a,b,c/?replicaSet=rs0, mongodb+srv://NAME (default
                            mongodb://127.0.0.1:27017); ?tls=true&tlsCAFile=FILE for TLS
  --admin HOST:PORT         admin HTTP listener: /metrics /healthz /readyz /status /report /report.json
                            (default 127.0.0.1:9216)
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

struct Flags {
  std::map<std::string, std::string> values;
  std::vector<std::string> listen;  // every --listen, in order: they replace the file's
  bool check_config = false;
  bool version = false;
  bool help = false;
};

Flags parse_flags(int argc, char** argv) {
  static const std::vector<std::string> kValued = {"listen",  "upstream",   "admin",     "config",
                                                   "threads", "log-format", "log-level", "tls-cert",
                                                   "tls-key", "tls-ca"};
  Flags flags;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg.rfind("--", 0) != 0) throw ConfigError("unexpected argument '" + arg + "'");
    std::string name = arg.substr(2), value;
    bool has_value = false;
    if (auto eq = name.find('='); eq != std::string::npos) {
      value = name.substr(eq + 1);
      name = name.substr(0, eq);
      has_value = true;
    }
    if (name == "help") {
      flags.help = true;
    } else if (name == "version") {
      flags.version = true;
    } else if (name == "check-config") {
      flags.check_config = true;
      if (has_value) {
        flags.values["config"] = value;
      } else if (i + 1 < argc && std::string(argv[i + 1]).rfind("--", 0) != 0) {
        flags.values["config"] = argv[++i];
      }
    } else if (std::find(kValued.begin(), kValued.end(), name) != kValued.end()) {
      if (!has_value) {
        if (i + 1 >= argc) throw ConfigError("--" + name + " needs a value");
        value = argv[++i];
      }
      if (name == "listen") {
        flags.listen.push_back(value);
      } else {
        flags.values[name] = value;
      }
    } else {
      throw ConfigError("unknown option --" + name + " (see --help)");
    }
  }
  return flags;
}

ProxyConfig build_config(const Flags& flags) {
  ProxyConfig config;
  if (auto it = flags.values.find("config"); it != flags.values.end()) {
    config = docguard::proxy::load_config_file(it->second);
  } else {
    config.rules = docguard::rules::parse_rules(YAML::Node(), "<defaults>");
  }
  if (!flags.listen.empty()) {
    config.listen.clear();
    config.listen_unix.clear();
    for (const auto& value : flags.listen) {
      docguard::proxy::add_listen_address(config, value, "--listen");
    }
  }
  for (const auto& [name, value] : flags.values) {
    if (name == "upstream") {
      docguard::proxy::set_upstream(config, value);
    } else if (name == "admin") {
      config.admin = docguard::proxy::parse_host_port(value, "--admin");
    } else if (name == "threads") {
      try {
        size_t used = 0;
        const int n = std::stoi(value, &used);
        if (used != value.size() || n < 0 || n > 256) throw std::out_of_range("threads");
        config.threads = static_cast<unsigned>(n);
      } catch (const std::exception&) {
        throw ConfigError("--threads: expected a number from 0 to 256, got '" + value + "'");
      }
    } else if (name == "log-format") {
      using docguard::proxy::kLogFormatNames;
      const auto format = kLogFormatNames.value(value);
      if (!format) {
        throw ConfigError("--log-format: expected " + kLogFormatNames.choices() + ", got '" +
                          value + "'");
      }
      config.log_format = *format;
    } else if (name == "tls-cert") {
      config.tls.cert_file = value;
    } else if (name == "tls-key") {
      config.tls.key_file = value;
    } else if (name == "tls-ca") {
      config.tls.ca_file = value;
    } else if (name == "log-level") {
      using docguard::proxy::kLogLevelNames;
      const auto level = kLogLevelNames.value(value);
      if (!level) {
        throw ConfigError("--log-level: expected " + kLogLevelNames.choices() + ", got '" + value +
                          "'");
      }
      config.log_level = *level;
    }
  }
  return config;
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
    return docguard::advisor::run_scan(argc - 1, argv + 1, [](const std::string& path) {
      const ProxyConfig file = docguard::proxy::load_config_file(path);
      return docguard::advisor::ScanConfig{file.advisor, file.rules};
    });
  }
  if (argc > 1 && std::string_view(argv[1]) == "validator") {
    return docguard::advisor::run_validator(argc - 1, argv + 1);
  }
  // libmongoc would print its own warnings while the upstream URI is parsed; the error
  // docguard reports names the option instead. The server routes its log into spdlog later.
  docguard::cluster::set_mongoc_log_handler({});
  Flags flags;
  ProxyConfig config;
  try {
    flags = parse_flags(argc, argv);
    if (flags.help) {
      std::cout << kUsage;
      return 0;
    }
    if (flags.version) {
      std::cout << "docguard " << DOCGUARD_VERSION << "\n";
      return 0;
    }
    config = build_config(flags);
    if (config.tls.cert_file.empty() != config.tls.key_file.empty()) {
      throw ConfigError("--tls-cert and --tls-key go together");
    }
    (void)docguard::proxy::make_tls_contexts(config);  // certificates load, or say which not
    // The introspection credentials file reads, or says why not (never quoting the secret).
    if (config.introspection.enabled) (void)docguard::proxy::introspection_target(config);
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
