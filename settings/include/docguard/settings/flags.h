// The proxy's command-line options as given (the program's command line, app/, reads them):
// build_config (settings_reader.h) lays them over the file.
#pragma once

#include <map>
#include <string>
#include <vector>

namespace docguard::settings {

struct Flags {
  std::map<std::string, std::string> values;  // by name without "--": "upstream", "config", ...
  std::vector<std::string> listen;            // every --listen, in order: they replace the file's
  bool check_config = false;
};

}  // namespace docguard::settings
