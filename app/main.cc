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

#include "command_line.h"
#include "docguard/cluster/mongoc_log.h"
#include "docguard/cluster/upstream_uri.h"
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
  using Run = docguard::app::CommandLine::Run;
  const docguard::app::CommandLine line =
      docguard::app::read_command_line(argc, argv, std::cout, std::cerr);
  switch (line.run) {
    case Run::kExit:
      return line.exit_code;
    case Run::kScan:
      // Rule violations become findings; the engine's per-violation log lines would only
      // repeat them on the console.
      spdlog::set_level(spdlog::level::off);
      // The one config reader: `advisor:` thresholds and the rules, for the scanned documents.
      return docguard::tools::run_scan(
          line.scan, std::cout, std::cerr, [](const std::string& path) {
            const ProxyConfig file = docguard::settings::load_config_file(path);
            return docguard::tools::ScanConfig{file.advisor, file.rules};
          });
    case Run::kValidator:
      return docguard::tools::run_validator(line.scan, line.validator_namespace,
                                            line.validator_apply, std::cout, std::cerr);
    case Run::kWhatif:
      // The candidate file through the one config reader, as `scan` reads its rules.
      return docguard::tools::run_whatif(line.whatif, [](const std::string& path) {
        const ProxyConfig file = docguard::settings::load_config_file(path);
        return docguard::tools::WhatifConfig{file.rules, file.max_message_bytes};
      });
    case Run::kReplay:
      return docguard::tools::run_replay(line.replay);
    case Run::kProxy:
      break;
  }
  // libmongoc would print its own warnings while the upstream URI is parsed; the error
  // docguard reports names the option instead. The server routes its log into spdlog later.
  docguard::cluster::set_mongoc_log_handler({});
  ProxyConfig config;
  try {
    config = docguard::settings::build_config(line.proxy);
    (void)docguard::proxy::make_tls_contexts(config);  // certificates load, or say which not
    // The introspection credentials file reads, or says why not (never quoting the secret).
    if (config.introspection.enabled) (void)docguard::settings::introspection_target(config);
  } catch (const std::exception& e) {
    std::cerr << "docguard: " << e.what() << "\n";
    return 1;
  }
  if (line.proxy.check_config) {
    const auto file = line.proxy.values.find("config");
    std::cout << "docguard: configuration "
              << (file != line.proxy.values.end() ? file->second : "<defaults>") << " is valid\n";
    return 0;
  }
  setup_logging(config);
  return docguard::proxy::run_server(std::move(config));
}
