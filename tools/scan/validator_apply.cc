// `docguard validator SOURCE NS --apply`: the census of the validator just written (how many of
// the read documents fail it, which properties fail most), then, on a cluster, collMod with it.
// Explicit and never automatic; when the server refuses (FerretDB and other wire-compatible
// servers have no validators), it says so, and docguard's own json_schema rule stays the way to
// enforce the schema.
#include "validator_apply.h"

#include <bson/bson.h>

#include <algorithm>
#include <map>

#include "docguard/cluster/admin_command.h"
#include "docguard/codec/bson_elements.h"
#include "docguard/schema/json_schema.h"

namespace docguard::tools {

namespace {

class CensusVisitor final : public advisor::DumpVisitor {
 public:
  CensusVisitor(const schema::JsonSchema& schema, std::string ns)
      : schema_(schema), ns_(std::move(ns)) {}
  void on_collection(const advisor::CollectionMetadata&) override {}
  base::Expected<void> on_document(std::string_view db, std::string_view collection,
                                   const uint8_t* data, uint32_t size) override {
    const bool mine = (db.size() + 1 + collection.size() == ns_.size() &&
                       ns_.compare(0, db.size(), db) == 0 && ns_.ends_with(collection)) ||
                      (ns_.find('.') == std::string::npos && collection == ns_);
    if (!mine) return {};
    ++documents;
    const codec::BsonView doc{data, size};
    if (schema_.matches(doc)) return {};
    ++failing;
    bson_t out = BSON_INITIALIZER;
    schema_.explain(doc, &out, "details");
    codec::BsonElements it(&out);
    if (it.find("details") && it.holds_document()) {
      for (const std::string& p : schema::failing_properties(it.container())) ++properties[p];
    }
    bson_destroy(&out);
    return {};
  }
  uint64_t documents = 0, failing = 0;
  std::map<std::string, uint64_t> properties;

 private:
  const schema::JsonSchema& schema_;
  std::string ns_;
};

}  // namespace

int apply_validator(const advisor::ScanArguments& args, const std::string& ns,
                    const std::string& collmod, const ReadSource& read, std::ostream& out,
                    std::ostream& err) {
  bson_error_t error;
  bson_t* command = bson_new_from_json(reinterpret_cast<const uint8_t*>(collmod.data()),
                                       static_cast<ssize_t>(collmod.size()), &error);
  if (command == nullptr) {
    err << "validator: the collMod written is not JSON: " << error.message << "\n";
    return 2;
  }
  codec::BsonView schema_document;
  codec::BsonElements it(command);
  if (it.find("validator")) {
    codec::BsonElements inner(it.container());
    if (inner.find("$jsonSchema") && inner.holds_document()) schema_document = inner.container();
  }
  int status = 0;
  try {
    const auto schema = schema::JsonSchema::compile(schema_document);
    CensusVisitor census(*schema, ns);
    std::string source;
    if (!read(census, &source)) {
      bson_destroy(command);
      return 2;
    }
    out << "census: " << census.failing << " of " << census.documents << " documents read from "
        << source << " fail this validator";
    std::vector<std::pair<uint64_t, std::string>> most;
    for (const auto& [name, n] : census.properties) most.emplace_back(n, name);
    std::stable_sort(most.begin(), most.end(),
                     [](const auto& a, const auto& b) { return a.first > b.first; });
    for (size_t i = 0; i < most.size() && i < 5; ++i) {
      out << (i ? ", " : "; failing most: ") << most[i].second << " (" << most[i].first << ")";
    }
    out << "\n";
    if (!advisor::is_cluster_uri(args.source)) {
      err << "validator: --apply needs a mongodb:// URI (a dump has no server to apply it to)\n";
      status = 2;
    } else {
      const std::string db =
          ns.find('.') != std::string::npos ? ns.substr(0, ns.find('.')) : args.db;
      const cluster::CommandResult r = cluster::run_admin_command(args.source, db, command);
      if (r.ok) {
        out << "applied: collMod " << ns
            << " with this validator (validationLevel moderate, validationAction error)\n";
      } else {
        err << "validator: the server refused collMod on " << ns << " (code " << r.code
            << "): " << r.message << "\n"
            << "docguard's own enforcement stays the way to enforce this schema: save the "
               "collMod above to a file and name it in a rule's json_schema_file (action: "
               "block)\n";
        status = 3;
      }
    }
  } catch (const schema::JsonSchemaError& e) {
    err << "validator: the validator written cannot be judged: " << e.what() << "\n";
    status = 2;
  }
  bson_destroy(command);
  return status;
}

}  // namespace docguard::tools
