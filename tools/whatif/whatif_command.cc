// `docguard whatif`: the candidate configuration read by the one settings reader,
// the judgement, the report and the exit code.
#include <spdlog/spdlog.h>

#include <iostream>
#include <optional>
#include <string>
#include <string_view>

#include "docguard/base/private_files.h"
#include "docguard/tools/whatif.h"
#include "whatif_judgement.h"

namespace docguard::tools {

namespace {

constexpr int kNothingRefused = 0;
constexpr int kSomethingRefused = 1;
constexpr int kUsageOrIoError = 2;

}  // namespace

int run_whatif(const WhatifArguments& args, const WhatifConfigLoader& load_config) {
  // Each violation would be logged as a live docguard logs it; the report says it once.
  spdlog::set_level(spdlog::level::off);
  WhatifConfig config;
  try {
    config = load_config(args.config);
  } catch (const std::exception& e) {
    std::cerr << "docguard whatif: " << e.what() << "\n";
    return kUsageOrIoError;
  }
  auto judgement =
      whatif::judge_recording(args.recording, config.rules, config.max_message_bytes,
                              args.show_values, args.facts_from, args.accept_torn_tail);
  if (!judgement) {
    std::cerr << "docguard whatif: " << judgement.error().message << "\n";
    return kUsageOrIoError;
  }
  const std::string report = args.format == "json"   ? whatif::render_json(*judgement)
                             : args.format == "html" ? whatif::render_html(*judgement)
                                                     : whatif::render_text(*judgement);
  if (args.output.empty()) {
    std::cout << report;
  } else {
    // Through a new file renamed over the old: a link planted under the name is replaced,
    // never written through.
    if (auto written = base::replace_file(args.output, report); !written) {
      std::cerr << "docguard whatif: " << written.error().message << "\n";
      return kUsageOrIoError;
    }
  }
  return judgement->refused.empty() ? kNothingRefused : kSomethingRefused;
}

}  // namespace docguard::tools
