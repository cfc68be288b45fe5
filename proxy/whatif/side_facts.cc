// The side files of a recording, read back for the judge: the user of each connection is only
// there, since the recorded authentication is redacted.
#include <bson/bson.h>

#include <fstream>

#include "whatif_judgement.h"

namespace docguard::proxy::whatif {

namespace {

std::string string_member(const bson_t& doc, const char* key) {
  bson_iter_t it;
  if (!bson_iter_init_find(&it, &doc, key) || !BSON_ITER_HOLDS_UTF8(&it)) return {};
  uint32_t length = 0;
  const char* text = bson_iter_utf8(&it, &length);
  return {text, length};
}

}  // namespace

base::Expected<SideFactsByOrder> read_side_facts(const std::filesystem::path& dir,
                                                 const std::vector<std::string>& data_files) {
  SideFactsByOrder facts;
  for (const std::string& data_file : data_files) {
    // <ms>.bin beside <ms>.docguard.jsonl
    const std::filesystem::path side =
        dir / (std::filesystem::path(data_file).stem().string() + ".docguard.jsonl");
    std::ifstream in(side);
    if (!in) continue;
    size_t line_number = 0;
    for (std::string line; std::getline(in, line);) {
      ++line_number;
      if (line.empty()) continue;
      bson_error_t error;
      bson_t doc;
      if (!bson_init_from_json(&doc, line.data(), static_cast<ssize_t>(line.size()), &error)) {
        return base::Error{base::ErrorKind::kBadInput, base::ErrorSource::kConfiguration,
                           side.filename().string() + " line " + std::to_string(line_number) +
                               " is not JSON: " + error.message,
                           side.string()};
      }
      bson_iter_t it;
      if (bson_iter_init_find(&it, &doc, "order") && BSON_ITER_HOLDS_NUMBER(&it)) {
        SideFacts& f = facts[static_cast<uint64_t>(bson_iter_as_int64(&it))];
        f.app = string_member(doc, "app");
        f.user = string_member(doc, "user");
        f.unrecorded = bson_iter_init_find(&it, &doc, "unrecorded") && bson_iter_as_bool(&it);
      }
      bson_destroy(&doc);
    }
  }
  return facts;
}

}  // namespace docguard::proxy::whatif
