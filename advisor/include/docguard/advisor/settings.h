// Thresholds of the design advisor, in one plain struct so that the settings reader can map an
// `advisor:` key onto it field by field. Defaults come from MongoDB's own tools
// unless a comment says otherwise.
#pragma once

#include <cstddef>
#include <cstdint>

namespace docguard::advisor {

struct AdvisorSettings {
  // Arrays. Compass flags a "large array" from 250 elements; Atlas's advisor from 10,000.
  uint64_t array_length_warn = 250;
  uint64_t array_length_block = 10000;
  // Outlier pattern: most arrays short (p99 <= outlier_max_p99) but the longest >= ratio x p99.
  double outlier_ratio = 10.0;
  uint64_t outlier_max_p99 = 1000;
  uint64_t outlier_min_documents = 20;  // a quantile of fewer documents says nothing

  // Document size. Atlas flags > 2 MB; Compass's "bloated document" > 10,000,000 bytes; the
  // server refuses more than 16 MiB.
  uint64_t document_bytes_warn = 2'000'000;
  uint64_t document_bytes_block = 10'000'000;
  uint64_t document_bytes_limit = 16ULL * 1024 * 1024;

  // Nesting depth. The server documents 100 levels; docguard's example config bounds a designed
  // collection at 20, and anything past that is hard to query, so the advisor warns from there.
  uint32_t nesting_depth_warn = 20;
  uint32_t nesting_depth_block = 100;

  // Indexes per collection: Compass > 10, Atlas (reported) > 30, hard limit 64.
  uint32_t indexes_warn = 10;
  uint32_t indexes_block = 30;
  // Collections per database: Atlas (reported) > 100. In the whole deployment: > 10,000.
  uint32_t collections_warn = 100;
  uint32_t collections_cluster_warn = 10000;
  // Collections of one database with the same top-level fields (one per tenant, per day): past
  // this many they are one collection split by a value that belongs in a field.
  uint32_t same_shape_min_collections = 10;

  // Bucket pattern: many tiny documents sharing a repeated key field and a date field.
  uint64_t bucket_min_documents = 1000;
  uint64_t bucket_max_p90_bytes = 256;      // "tiny": 90% of documents at most this large
  double bucket_max_key_ratio = 0.1;        // distinct keys <= this share of the documents
  uint32_t bucket_target_per_bucket = 200;  // readings per bucket the suggestion aims at

  // Attribute pattern: many sparse field names (each in at most this share of documents).
  uint32_t attribute_min_sparse_fields = 20;
  double attribute_max_presence = 0.2;

  // Validator: a collection without one gets an info finding (offline we cannot see writes).
  bool report_missing_validator = true;

  // Live advisor (the proxy's /report). Commands are sampled 1 in this many (1: every one).
  uint32_t live_sample_every = 8;
  uint32_t live_max_namespaces = 256;
  uint64_t live_min_pushes = 10;              // unbounded $push seen this often -> finding
  uint64_t live_min_reads = 10;               // reads before a $lookup ratio or subset is judged
  double lookup_ratio_warn = 0.5;             // share of reads that join
  uint64_t computed_min_runs = 10;            // the same $group pipeline run this often
  uint64_t reference_filter_min = 10;         // equality filters on an unindexed reference
  uint64_t unindexed_query_min = 10;          // runs of one query shape no index serves
  uint32_t query_shapes_per_collection = 64;  // distinct query shapes counted per collection
  uint64_t subset_min_document_bytes = 4096;  // mean size of the documents the reads project
  double subset_max_projected_share = 0.3;    // projected fields' share of the document's bytes

  // Growth forecast (the rules engine's tracked documents): an array whose forecast reaches a
  // bound sooner than this many seconds is an `approaching_limit` finding, and each document is
  // logged once as it enters (`advisor.forecast_horizon`, a duration: 7d, 12h).
  double forecast_horizon = 7 * 24 * 3600.0;
  uint32_t forecast_series_per_namespace = 5;  // docguard_limit_eta_seconds, nearest first
  uint32_t forecast_report_rows = 50;          // rows of /report's "approaching limits"

  // Memory bounds of one collection's profile; what does not fit is counted, not stored.
  uint32_t max_field_paths = 2000;
  uint32_t max_array_paths = 256;             // array paths with their own length histogram
  uint32_t max_distinct_tracked_fields = 32;  // top-level fields whose distinct values are counted
  uint32_t distinct_values_cap = 1024;        // per field; past it the field counts as "many"
};

}  // namespace docguard::advisor
