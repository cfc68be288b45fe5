// The query shapes of the commands the live advisor samples: what each command asks an index
// for, by the fields its filter and sort name.
#include <bson/bson.h>

#include <string_view>

#include "docguard/advisor/catalog_documents.h"
#include "docguard/codec/bson_elements.h"
#include "live_state.h"

namespace docguard::advisor {
namespace {

// The document `key` of `doc` holds, borrowed; false when there is none.
bool sub_document(const codec::BsonView& doc, const char* key, bson_t* out) {
  if (doc.empty() || !framed_document(doc.data, doc.size)) return false;
  codec::BsonElements it(doc);
  if (!it.find(key) || !it.holds_document()) return false;
  const codec::BsonView document = it.container();
  return bson_init_static(out, document.data, document.size);
}

// The shape of `filter_key` and `sort_key` of `doc` (either may be missing).
QueryShape shape_of(const codec::BsonView& doc, const char* filter_key, const char* sort_key) {
  bson_t filter, sort;
  const bool has_filter = sub_document(doc, filter_key, &filter);
  const bool has_sort = sort_key != nullptr && sub_document(doc, sort_key, &sort);
  return query_shape(has_filter ? &filter : nullptr, has_sort ? &sort : nullptr);
}

void add_if_any(std::vector<QueryShape>& out, QueryShape shape) {
  if (!shape.empty()) out.push_back(std::move(shape));
}

}  // namespace

std::vector<QueryShape> command_query_shapes(const codec::CommandView& cmd) {
  std::vector<QueryShape> out;
  switch (cmd.kind) {
    case codec::CommandKind::kFind:
      add_if_any(out, shape_of(cmd.body, "filter", "sort"));
      break;
    case codec::CommandKind::kAggregate:
      if (!cmd.pipeline.empty()) {
        bson_t pipeline = cmd.pipeline.borrow();
        add_if_any(out, pipeline_query_shape(&pipeline));
      }
      break;
    case codec::CommandKind::kCount:
    case codec::CommandKind::kDistinct:
      add_if_any(out, shape_of(cmd.body, "query", nullptr));
      break;
    case codec::CommandKind::kFindAndModify: {
      // The query is already a view of its own; the sort picks which match is changed.
      bson_t query, sort;
      const bool has_query =
          !cmd.query.empty() && bson_init_static(&query, cmd.query.data, cmd.query.size);
      const bool has_sort = sub_document(cmd.body, "sort", &sort);
      add_if_any(out, query_shape(has_query ? &query : nullptr, has_sort ? &sort : nullptr));
      break;
    }
    case codec::CommandKind::kUpdate:
    case codec::CommandKind::kDelete:
      for (size_t i = 0; i < cmd.statements.size() && i < kMaxStatementShapes; ++i) {
        // Updates may carry a sort (updateOne since MongoDB 8.0); deletes do not.
        add_if_any(out, shape_of(cmd.statements[i], "q",
                                 cmd.kind == codec::CommandKind::kUpdate ? "sort" : nullptr));
      }
      break;
    default:
      break;
  }
  return out;
}

}  // namespace docguard::advisor
