// The side files of a recording, read back for the judge: the user of each connection is only
// there, since the recorded authentication is redacted.
#include <bson/bson.h>

#include <fstream>

#include "docguard/codec/bson_elements.h"
#include "whatif_judgement.h"

namespace docguard::proxy::whatif {

namespace {

std::string string_member(const bson_t& doc, const char* key) {
  codec::BsonElements it(&doc);
  if (!it.find(key) || !it.holds_utf8()) return {};
  return std::string(it.utf8());
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
      codec::BsonElements order(&doc);
      if (order.find("order") && order.holds_number()) {
        SideFacts& f = facts[static_cast<uint64_t>(order.as_int64())];
        f.app = string_member(doc, "app");
        f.user = string_member(doc, "user");
        codec::BsonElements unrecorded(&doc);
        f.unrecorded = unrecorded.find("unrecorded") && unrecorded.as_bool();
      }
      bson_destroy(&doc);
    }
  }
  return facts;
}

}  // namespace docguard::proxy::whatif
