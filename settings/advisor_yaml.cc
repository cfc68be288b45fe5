// `advisor:` in the settings file: the design advisor's thresholds.
#include <charconv>
#include <cmath>

#include "section_readers.h"

namespace docguard::settings {

// `advisor:` maps onto AdvisorSettings field by field, under the same names.
void apply_advisor_yaml(const ConfigReader& r, const YAML::Node& n, advisor::AdvisorSettings& a) {
  struct Count {
    const char* name;
    uint64_t* u64;
    uint32_t* u32;
  };
  const Count counts[] = {
      {"array_length_warn", &a.array_length_warn, nullptr},
      {"array_length_block", &a.array_length_block, nullptr},
      {"outlier_max_p99", &a.outlier_max_p99, nullptr},
      {"outlier_min_documents", &a.outlier_min_documents, nullptr},
      {"document_bytes_warn", &a.document_bytes_warn, nullptr},
      {"document_bytes_block", &a.document_bytes_block, nullptr},
      {"nesting_depth_warn", nullptr, &a.nesting_depth_warn},
      {"nesting_depth_block", nullptr, &a.nesting_depth_block},
      {"indexes_warn", nullptr, &a.indexes_warn},
      {"indexes_block", nullptr, &a.indexes_block},
      {"collections_warn", nullptr, &a.collections_warn},
      {"collections_cluster_warn", nullptr, &a.collections_cluster_warn},
      {"same_shape_min_collections", nullptr, &a.same_shape_min_collections},
      {"bucket_min_documents", &a.bucket_min_documents, nullptr},
      {"bucket_max_p90_bytes", &a.bucket_max_p90_bytes, nullptr},
      {"bucket_target_per_bucket", nullptr, &a.bucket_target_per_bucket},
      {"attribute_min_sparse_fields", nullptr, &a.attribute_min_sparse_fields},
      {"live_sample_every", nullptr, &a.live_sample_every},
      {"live_max_namespaces", nullptr, &a.live_max_namespaces},
      {"live_min_pushes", &a.live_min_pushes, nullptr},
      {"live_min_reads", &a.live_min_reads, nullptr},
      {"computed_min_runs", &a.computed_min_runs, nullptr},
      {"reference_filter_min", &a.reference_filter_min, nullptr},
      {"unindexed_query_min", &a.unindexed_query_min, nullptr},
      {"query_shapes_per_collection", nullptr, &a.query_shapes_per_collection},
      {"subset_min_document_bytes", &a.subset_min_document_bytes, nullptr},
      {"forecast_series_per_namespace", nullptr, &a.forecast_series_per_namespace},
      {"forecast_report_rows", nullptr, &a.forecast_report_rows},
  };
  // Shares of documents, reads or bytes: between 0 and 1, as every ratio in the file.
  struct Share {
    const char* name;
    double* value;
  };
  const Share shares[] = {{"bucket_max_key_ratio", &a.bucket_max_key_ratio},
                          {"attribute_max_presence", &a.attribute_max_presence},
                          {"lookup_ratio_warn", &a.lookup_ratio_warn},
                          {"subset_max_projected_share", &a.subset_max_projected_share}};
  if (!n.IsMap()) r.fail(n, "advisor", "expected a mapping");
  for (const auto& kv : n) {
    const auto key = kv.first.as<std::string>();
    const std::string where = "advisor." + key;
    bool known = false;
    for (const Count& c : counts) {
      if (key != c.name) continue;
      known = true;
      const auto v = r.count(kv.second, where, c.u32 ? double{UINT32_MAX} : 1e15);
      if (c.u32) *c.u32 = static_cast<uint32_t>(v);
      if (c.u64) *c.u64 = static_cast<uint64_t>(v);
    }
    for (const Share& q : shares) {
      if (key != q.name) continue;
      known = true;
      *q.value = r.ratio(kv.second, where);
    }
    if (key == "outlier_ratio") {
      // How many times the p99 a document must be to stand out: any positive number.
      known = true;
      const std::string text = r.scalar(kv.second, where);
      double v = 0;
      const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
      if (ec != std::errc() || end != text.data() + text.size() || !std::isfinite(v) || v <= 0) {
        r.fail(kv.second, where, "expected a positive number, got '" + text + "'");
      }
      a.outlier_ratio = v;
    }
    if (key == "forecast_horizon") {
      known = true;
      // A duration; past a year a forecast says nothing (rates change long before).
      const double seconds = static_cast<double>(r.duration(kv.second, where).count()) / 1000;
      if (seconds < 1 || seconds > 366 * 86400.0) {
        r.fail(kv.second, where, "must be between 1s and 366d");
      }
      a.forecast_horizon = seconds;
    }
    if (key == "report_missing_validator") {
      known = true;
      a.report_missing_validator = r.boolean(kv.second, where);
    }
    if (!known) r.fail(kv.first, where, "unknown key");
  }
  if (a.live_sample_every == 0) r.fail(n, "advisor.live_sample_every", "must be at least 1");
}

}  // namespace docguard::settings
