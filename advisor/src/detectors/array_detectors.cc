// Arrays and documents: large arrays, outliers, bloated documents, deep nesting.
#include <algorithm>
#include <cstdio>

#include "docguard/advisor/detectors.h"
#include "docguard/advisor/text_format.h"

namespace docguard::advisor {
namespace {

std::string id_list(const std::vector<DocumentRef>& refs) {
  std::string out;
  for (const DocumentRef& ref : refs) {
    if (!out.empty()) out += ", ";
    out += ref.id + " (" + with_commas(ref.value) + ")";
  }
  return out;
}

// "products" -> "productId": the reference name the guides use for a child's parent.
std::string parent_reference_name(const std::string& collection) {
  std::string singular = collection;
  if (singular.size() > 1 && singular.back() == 's') singular.pop_back();
  return singular + "Id";
}

std::string last_segment(const std::string& path) {
  const size_t dot = path.rfind('.');
  return dot == std::string::npos ? path : path.substr(dot + 1);
}

}  // namespace

void detect_large_arrays(const CollectionProfile& p, const AdvisorSettings& s,
                         std::vector<Finding>& out) {
  for (const FieldStats& field : p.fields()) {
    if (field.array < 0) continue;
    const ArrayStats& array = p.arrays()[field.array];
    const uint64_t max = array.lengths.max();
    if (max < s.array_length_warn) continue;
    const Severity severity = max > s.array_length_block ? Severity::kBlock : Severity::kWarn;
    Finding f = new_finding(p, Finding::Kind::kLargeArray, severity, field.path);
    f.evidence = "longest `" + field.path + "` has " + with_commas(max) + " elements (p50 " +
                 with_commas(array.lengths.quantile(0.5)) + ", p99 " +
                 with_commas(array.lengths.quantile(0.99)) + " over " +
                 with_commas(array.lengths.count()) +
                 " arrays); Compass flags >= " + with_commas(s.array_length_warn) + ", Atlas > " +
                 with_commas(s.array_length_block) + "; longest in _id " + id_list(array.longest);
    f.pattern = "reference (one-to-many, unbounded) or bucket";
    const std::string child = last_segment(field.path);
    f.suggestion =
        "An array that keeps growing makes every read and update of the document "
        "pay for all of it, and it ends at the 16 MiB limit. Move the elements of `" +
        field.path + "` into their own collection `" + child +
        "`, one document per "
        "element holding `" +
        parent_reference_name(p.collection()) +
        "` (indexed), or group them into bucket documents of a bounded size; keep at "
        "most a bounded recent subset embedded (push with $slice).";
    out.push_back(std::move(f));
  }
}

void detect_outliers(const CollectionProfile& p, const AdvisorSettings& s,
                     std::vector<Finding>& out) {
  for (const FieldStats& field : p.fields()) {
    if (field.array < 0) continue;
    const ArrayStats& array = p.arrays()[field.array];
    if (array.lengths.count() < s.outlier_min_documents) continue;
    const uint64_t p99 = array.lengths.quantile(0.99);
    const uint64_t max = array.lengths.max();
    if (p99 > s.outlier_max_p99) continue;
    if (static_cast<double>(max) <
        s.outlier_ratio * static_cast<double>(std::max<uint64_t>(p99, 10))) {
      continue;
    }
    uint64_t outliers = 0;  // arrays past 10x the p99 (bucket granularity)
    for (int b = LogHistogram::bucket_of(p99) + 1; b < LogHistogram::kBuckets; ++b) {
      if (LogHistogram::bucket_low(b) >=
          static_cast<uint64_t>(s.outlier_ratio * std::max<uint64_t>(p99, 1))) {
        outliers += array.lengths.bucket_count(b);
      }
    }
    Finding f = new_finding(p, Finding::Kind::kOutlier, Severity::kWarn, field.path);
    char ratio[32];
    std::snprintf(ratio, sizeof ratio, "%.0fx",
                  static_cast<double>(max) / std::max<uint64_t>(p99, 1));
    f.evidence = "`" + field.path + "`: p99 " + with_commas(p99) + " elements, max " +
                 with_commas(max) + " (" + ratio + " the p99; threshold " +
                 std::to_string(static_cast<int>(s.outlier_ratio)) + "x); " +
                 with_commas(outliers) + " of " + with_commas(array.lengths.count()) +
                 " arrays past it; longest in _id " + id_list(array.longest);
    f.pattern = "outlier";
    f.suggestion = "Most documents keep `" + field.path +
                   "` short; design for them. Embed at "
                   "most " +
                   with_commas(std::max<uint64_t>(p99, 1)) + " elements of `" + field.path +
                   "` and set `has_overflow: true` on the few documents that have "
                   "more (" +
                   id_list(array.longest) +
                   "); put the rest in overflow documents "
                   "(e.g. `" +
                   p.collection() + "_" + last_segment(field.path) + "_overflow` with `" +
                   parent_reference_name(p.collection()) +
                   "` and a page number), read only "
                   "when the flag is set.";
    out.push_back(std::move(f));
  }
}

void detect_bloated_documents(const CollectionProfile& p, const AdvisorSettings& s,
                              std::vector<Finding>& out) {
  const LogHistogram& sizes = p.sizes();
  if (sizes.count() == 0 || sizes.max() <= s.document_bytes_warn) return;
  const uint64_t p90 = sizes.quantile(0.9);
  const bool block = sizes.max() >= s.document_bytes_limit * 9 / 10 || p90 > s.document_bytes_block;
  Finding f = new_finding(p, Finding::Kind::kBloatedDocuments,
                          block ? Severity::kBlock : Severity::kWarn, "");
  f.evidence = "document size p50 " + human_bytes(sizes.quantile(0.5)) + ", p90 " +
               human_bytes(p90) + ", p99 " + human_bytes(sizes.quantile(0.99)) + ", max " +
               human_bytes(sizes.max()) + " (Atlas flags > " + human_bytes(s.document_bytes_warn) +
               ", Compass > " + human_bytes(s.document_bytes_block) +
               ", limit 16 MiB); largest _id " + id_list(p.largest());
  // The top-level fields that weigh the most are what the subset pattern moves out.
  std::vector<const FieldStats*> heavy;
  for (const FieldStats& field : p.fields()) {
    if (field.depth == 1 && field.path != "_id") heavy.push_back(&field);
  }
  std::sort(heavy.begin(), heavy.end(), [](const FieldStats* a, const FieldStats* b) {
    return a->max_value_bytes > b->max_value_bytes;
  });
  std::string names;
  for (size_t i = 0; i < heavy.size() && i < 3 && heavy[i]->max_value_bytes * 10 >= sizes.max();
       ++i) {
    if (!names.empty()) names += ", ";
    names += "`" + heavy[i]->path + "` (up to " + human_bytes(heavy[i]->max_value_bytes) + ")";
  }
  if (!names.empty()) f.field = heavy[0]->path;
  f.evidence += names.empty() ? "" : "; heaviest fields " + names;
  f.pattern = "subset";
  f.suggestion =
      "Large documents fill the cache with bytes most reads do not use. Keep the "
      "fields read on every request in `" +
      p.collection() + "` and move " +
      (names.empty() ? std::string("the large, rarely read fields") : names) + " to a `" +
      p.collection() +
      "_details` collection keyed by the same _id, read "
      "only when the details are shown.";
  out.push_back(std::move(f));
}

void detect_deep_nesting(const CollectionProfile& p, const AdvisorSettings& s,
                         std::vector<Finding>& out) {
  if (p.max_depth() <= s.nesting_depth_warn) return;
  const Severity severity =
      p.max_depth() > s.nesting_depth_block ? Severity::kBlock : Severity::kWarn;
  const FieldStats* deepest = nullptr;
  for (const FieldStats& field : p.fields()) {
    if (!deepest || field.depth > deepest->depth) deepest = &field;
  }
  std::string path = deepest ? deepest->path : "";
  if (path.size() > 60) path = path.substr(0, 28) + "..." + path.substr(path.size() - 28);
  Finding f = new_finding(p, Finding::Kind::kDeepNesting, severity,
                          deepest ? deepest->path.substr(0, deepest->path.find('.')) : "");
  f.evidence = "nesting depth " + std::to_string(p.max_depth()) + " in _id " + p.deepest().id +
               " (warn > " + std::to_string(s.nesting_depth_warn) + ", server limit " +
               std::to_string(s.nesting_depth_block) + "); deepest path `" + path + "`";
  f.pattern = "flatten (embed only one level of what is read together; reference the rest)";
  f.suggestion =
      "Queries, indexes and updates cannot reach deep levels comfortably, and the "
      "server refuses documents past " +
      std::to_string(s.nesting_depth_block) + " levels. Flatten `" + f.field +
      "`: store a tree as documents with a parent "
      "reference (or an ancestors array) instead of nesting each level inside the "
      "previous one.";
  out.push_back(std::move(f));
}

}  // namespace docguard::advisor
