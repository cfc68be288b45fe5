// `docguard whatif`: judges a traffic recording offline with a candidate configuration, as a
// live docguard with that configuration would have judged the same traffic.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "docguard/rules/rule_set.h"

namespace docguard::tools {

// What whatif takes of the candidate configuration file.
struct WhatifConfig {
  std::shared_ptr<const rules::RuleSet> rules;
  uint32_t max_message_bytes = 0;
};
// Reads the file through the one settings reader (main's to call); throws what it finds wrong.
using WhatifConfigLoader = std::function<WhatifConfig(const std::string& path)>;

// What the command line gives whatif (the program's command line, app/, reads it).
struct WhatifArguments {
  std::string config;
  std::string recording;
  std::string format = "text";  // text, json or html
  std::string output;           // "": standard output
  std::string facts_from;  // a mongodump or a cluster whose indexes stand in for introspection's
  bool show_values = false;
  bool accept_torn_tail = false;
};

// Exit code: 0 nothing would be refused, 1 something would, 2 an I/O or configuration error.
int run_whatif(const WhatifArguments& args, const WhatifConfigLoader& load_config);

}  // namespace docguard::tools
