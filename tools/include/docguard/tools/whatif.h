// `docguard whatif`: judges a traffic recording offline with a candidate configuration, as a
// live docguard with that configuration would have judged the same traffic.
//   whatif --config FILE --recording DIR [--format text|json|html] [--output FILE] [--show-values]
//          [--facts-from DUMP]
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

// argv[0] is "whatif". Exit code: 0 nothing would be refused, 1 something would, 2 a usage or
// I/O error.
int run_whatif(int argc, char** argv, const WhatifConfigLoader& load_config);

}  // namespace docguard::tools
