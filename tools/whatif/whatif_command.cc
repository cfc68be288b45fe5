// `docguard whatif`: the arguments, the candidate configuration read by the one settings reader,
// the judgement, the report and the exit code.
#include <spdlog/spdlog.h>

#include <fstream>
#include <iostream>
#include <optional>
#include <string>
#include <string_view>

#include "docguard/tools/whatif.h"
#include "whatif_judgement.h"

namespace docguard::tools {

namespace {

constexpr const char* kUsage =
    "usage: docguard whatif --config FILE --recording DIR [--format text|json|html]\n"
    "                       [--output FILE] [--show-values] [--facts-from DUMP|URI]\n"
    "                       [--accept-torn-tail]\n";

constexpr int kNothingRefused = 0;
constexpr int kSomethingRefused = 1;
constexpr int kUsageOrIoError = 2;

struct WhatifArguments {
  std::string config;
  std::string recording;
  std::string format = "text";
  std::string output;
  std::string facts_from;  // a mongodump or a cluster whose indexes stand in for introspection's
  bool show_values = false;
  bool accept_torn_tail = false;
};

// The arguments, or nullopt after saying what is wrong.
std::optional<WhatifArguments> parse(int argc, char** argv) {
  WhatifArguments a;
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    const auto value = [&](std::string& into) {
      if (i + 1 >= argc) return false;
      into = argv[++i];
      return true;
    };
    bool ok = true;
    if (arg == "--config") {
      ok = value(a.config);
    } else if (arg == "--recording") {
      ok = value(a.recording);
    } else if (arg == "--format") {
      ok = value(a.format);
    } else if (arg == "--output") {
      ok = value(a.output);
    } else if (arg == "--facts-from") {
      ok = value(a.facts_from);
    } else if (arg == "--show-values") {
      a.show_values = true;
    } else if (arg == "--accept-torn-tail") {
      a.accept_torn_tail = true;
    } else {
      std::cerr << "docguard whatif: unknown argument " << arg << "\n" << kUsage;
      return std::nullopt;
    }
    if (!ok) {
      std::cerr << "docguard whatif: " << arg << " needs a value\n" << kUsage;
      return std::nullopt;
    }
  }
  if (a.config.empty() || a.recording.empty()) {
    std::cerr << "docguard whatif: --config and --recording are required\n" << kUsage;
    return std::nullopt;
  }
  if (a.format != "text" && a.format != "json" && a.format != "html") {
    std::cerr << "docguard whatif: --format is text, json or html, not " << a.format << "\n";
    return std::nullopt;
  }
  return a;
}

}  // namespace

int run_whatif(int argc, char** argv, const WhatifConfigLoader& load_config) {
  if (argc > 1 && (std::string_view(argv[1]) == "--help" || std::string_view(argv[1]) == "-h")) {
    std::cout << kUsage;
    return kNothingRefused;
  }
  const auto args = parse(argc, argv);
  if (!args) return kUsageOrIoError;
  // Each violation would be logged as a live docguard logs it; the report says it once.
  spdlog::set_level(spdlog::level::off);
  WhatifConfig config;
  try {
    config = load_config(args->config);
  } catch (const std::exception& e) {
    std::cerr << "docguard whatif: " << e.what() << "\n";
    return kUsageOrIoError;
  }
  auto judgement =
      whatif::judge_recording(args->recording, config.rules, config.max_message_bytes,
                              args->show_values, args->facts_from, args->accept_torn_tail);
  if (!judgement) {
    std::cerr << "docguard whatif: " << judgement.error().message << "\n";
    return kUsageOrIoError;
  }
  const std::string report = args->format == "json"   ? whatif::render_json(*judgement)
                             : args->format == "html" ? whatif::render_html(*judgement)
                                                      : whatif::render_text(*judgement);
  if (args->output.empty()) {
    std::cout << report;
  } else {
    std::ofstream out(args->output, std::ios::binary | std::ios::trunc);
    out << report;
    if (!out.flush()) {
      std::cerr << "docguard whatif: cannot write " << args->output << "\n";
      return kUsageOrIoError;
    }
  }
  return judgement->refused.empty() ? kNothingRefused : kSomethingRefused;
}

}  // namespace docguard::tools
