#include "docguard/codec/command_view.h"

#include <cstring>

namespace docguard::codec {
namespace {

bool truthy(const bson_iter_t& it) { return bson_iter_as_bool(&it); }

// Appends the embedded documents of an array value; non-document elements are skipped (the
// server rejects them; the rules have nothing to measure there).
void append_documents(const bson_iter_t& array_it, std::vector<codec::BsonView>& out) {
  bson_iter_t child;
  if (!BSON_ITER_HOLDS_ARRAY(&array_it) || !bson_iter_recurse(&array_it, &child)) return;
  while (bson_iter_next(&child)) {
    if (BSON_ITER_HOLDS_DOCUMENT(&child)) out.push_back(codec::view_of(child));
  }
}

// Top-level fields of a command body that the view needs, found in one pass over the body
// (instead of one scan per field).
struct BodyFields {
  bson_iter_t db, ordered, payload, ns_info, pipeline, query, update, upsert, remove, filter,
      collection;
  bool has_db = false, has_ordered = false, has_payload = false, has_ns_info = false,
       has_pipeline = false, has_query = false, has_update = false, has_upsert = false,
       has_remove = false, has_filter = false, has_collection = false;
};

const char* payload_field_of(CommandKind kind) {
  switch (kind) {
    case CommandKind::kInsert:
      return "documents";
    case CommandKind::kUpdate:
      return "updates";
    case CommandKind::kDelete:
      return "deletes";
    case CommandKind::kBulkWrite:
      return "ops";
    default:
      return nullptr;
  }
}

// `from` is taken by reference and copied into a local: bson_iter_t is over-aligned, and a
// by-value parameter is not guaranteed that alignment (UBSan, found by fuzz_op_msg).
void scan_body(const bson_iter_t& from, const char* payload_field, BodyFields& f) {
  bson_iter_t it = from;
  while (bson_iter_next(&it)) {
    const std::string_view key = key_of(it);
    if (key == "$db") {
      f.db = it, f.has_db = true;
    } else if (key == "ordered") {
      f.ordered = it, f.has_ordered = true;
    } else if (payload_field != nullptr && key == payload_field) {
      f.payload = it, f.has_payload = true;
    } else if (key == "nsInfo") {
      f.ns_info = it, f.has_ns_info = true;
    } else if (key == "pipeline") {
      f.pipeline = it, f.has_pipeline = true;
    } else if (key == "query") {
      f.query = it, f.has_query = true;
    } else if (key == "update") {
      f.update = it, f.has_update = true;
    } else if (key == "upsert") {
      f.upsert = it, f.has_upsert = true;
    } else if (key == "remove") {
      f.remove = it, f.has_remove = true;
    } else if (key == "filter") {
      f.filter = it, f.has_filter = true;
    } else if (key == "collection") {
      f.collection = it, f.has_collection = true;
    }
  }
}

void take_payload(const codec::OpMsg& msg, const BodyFields& f, const char* field,
                  CommandView& view) {
  if (f.has_payload && BSON_ITER_HOLDS_ARRAY(&f.payload)) {
    append_documents(f.payload, view.statements);
    view.payload_source = PayloadSource::kBody;
    view.payload_field = std::string_view(field);
    return;
  }
  if (const auto* seq = msg.sequence(field)) {
    view.statements = seq->documents;
    view.payload_source = PayloadSource::kSequence;
    view.payload_field = seq->identifier;
  }
}

// Fills `pipeline` from an array-valued field of `doc`, if present.
void take_pipeline(const bson_t* doc, const char* field, CommandView& view) {
  bson_iter_t it;
  if (bson_iter_init_find(&it, doc, field) && BSON_ITER_HOLDS_ARRAY(&it)) {
    view.pipeline = codec::view_of(it);
  }
}

}  // namespace

CommandKind kind_of(std::string_view name) {
  struct Entry {
    const char* name;
    CommandKind kind;
  };
  static constexpr Entry kTable[] = {
      {"insert", CommandKind::kInsert},
      {"update", CommandKind::kUpdate},
      {"delete", CommandKind::kDelete},
      {"findAndModify", CommandKind::kFindAndModify},
      {"findandmodify", CommandKind::kFindAndModify},
      {"find", CommandKind::kFind},
      {"aggregate", CommandKind::kAggregate},
      {"count", CommandKind::kCount},
      {"distinct", CommandKind::kDistinct},
      {"getMore", CommandKind::kGetMore},
      {"bulkWrite", CommandKind::kBulkWrite},
      {"create", CommandKind::kCreate},
      {"explain", CommandKind::kExplain},
      {"hello", CommandKind::kHello},
      {"isMaster", CommandKind::kHello},
      {"ismaster", CommandKind::kHello},
  };
  for (const auto& e : kTable) {
    if (name == e.name) return e.kind;
  }
  return CommandKind::kOther;
}

BsonView unwrap_query(const BsonView& query) {
  if (query.empty()) return query;
  bson_t b = query.borrow();
  bson_iter_t it;
  if (bson_iter_init_find(&it, &b, "$query") && BSON_ITER_HOLDS_DOCUMENT(&it)) return view_of(it);
  return query;
}

bool is_hello_command(const BsonView& command) {
  if (command.empty()) return false;
  bson_t b = command.borrow();
  bson_iter_t it;
  if (!bson_iter_init(&it, &b) || !bson_iter_next(&it)) return false;
  return kind_of(key_of(it)) == CommandKind::kHello;
}

CommandView describe(const codec::OpMsg& msg) {
  CommandView view;
  view.more_to_come = msg.more_to_come();
  view.body = msg.body;
  bson_t body = msg.body.borrow();
  bson_iter_t it;
  if (!bson_iter_init(&it, &body) || !bson_iter_next(&it)) return view;
  view.name = key_of(it);
  view.kind = kind_of(view.name);
  view.collection = utf8_of(it);
  const bson_iter_t first = it;

  const char* payload_field = payload_field_of(view.kind);
  BodyFields f;
  scan_body(it, payload_field, f);
  if (f.has_db) view.database = utf8_of(f.db);
  if (f.has_ordered) view.ordered = truthy(f.ordered);

  switch (view.kind) {
    case CommandKind::kInsert:
    case CommandKind::kUpdate:
    case CommandKind::kDelete:
      take_payload(msg, f, payload_field, view);
      break;
    case CommandKind::kBulkWrite: {
      take_payload(msg, f, payload_field, view);
      if (f.has_ns_info && BSON_ITER_HOLDS_ARRAY(&f.ns_info)) {
        append_documents(f.ns_info, view.ns_info);
      } else if (const auto* seq = msg.sequence("nsInfo")) {
        view.ns_info = seq->documents;
      }
      break;
    }
    case CommandKind::kFindAndModify: {
      if (f.has_query && BSON_ITER_HOLDS_DOCUMENT(&f.query)) view.query = codec::view_of(f.query);
      if (f.has_update &&
          (BSON_ITER_HOLDS_DOCUMENT(&f.update) || BSON_ITER_HOLDS_ARRAY(&f.update))) {
        view.update = codec::view_of(f.update);
        view.update_is_pipeline = BSON_ITER_HOLDS_ARRAY(&f.update);
      }
      if (f.has_upsert) view.upsert = truthy(f.upsert);
      if (f.has_remove) view.remove = truthy(f.remove);
      break;
    }
    case CommandKind::kFind:
      if (f.has_filter && BSON_ITER_HOLDS_DOCUMENT(&f.filter))
        view.query = codec::view_of(f.filter);
      break;
    case CommandKind::kAggregate:
    case CommandKind::kCreate:
      if (f.has_pipeline && BSON_ITER_HOLDS_ARRAY(&f.pipeline)) {
        view.pipeline = codec::view_of(f.pipeline);
      }
      break;
    case CommandKind::kGetMore:
      // getMore's first value is the cursor id; the namespace is in `collection`.
      if (f.has_collection) view.collection = utf8_of(f.collection);
      break;
    case CommandKind::kExplain: {
      if (BSON_ITER_HOLDS_DOCUMENT(&first)) {
        const codec::BsonView inner_view = codec::view_of(first);
        bson_t inner = inner_view.borrow();
        bson_iter_t in;
        if (bson_iter_init(&in, &inner) && bson_iter_next(&in)) {
          view.explained = key_of(in);
          view.collection = utf8_of(in);
          take_pipeline(&inner, "pipeline", view);
        }
      }
      break;
    }
    default:
      break;
  }
  return view;
}

}  // namespace docguard::codec
