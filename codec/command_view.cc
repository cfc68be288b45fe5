#include "docguard/codec/command_view.h"

#include <cstring>

#include "docguard/codec/bson_elements.h"

namespace docguard::codec {
namespace {

// Appends the embedded documents of an array value; non-document elements are skipped (the
// server rejects them; the rules have nothing to measure there).
void append_documents(const BsonValue& array, BsonViews& out) {
  if (!array.holds_array()) return;
  for (BsonElements child(array.value, array.value_size); child.next();) {
    if (child.holds_document()) out.push_back(child.container());
  }
}

// Top-level fields of a command body that the view needs, found in one pass over the body
// (instead of one scan per field). A field that is absent has type 0. Values, not walks: this is
// set up for every command, so each slot is a type and a pointer.
struct BodyFields {
  BsonValue db, ordered, payload, ns_info, pipeline, query, update, upsert, remove, filter,
      collection, sort, projection, fields, hint, collation, tailable, max_time, bypass;
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

// A field given twice counts at its last occurrence.
void take(BsonValue& slot, const BsonElements& it) { slot = it; }

// `it` is at the first element; the others are read from there on.
void scan_body(BsonElements it, std::string_view payload_field, BodyFields& f) {
  while (it.next()) {
    const std::string_view key = it.key;
    if (key.empty()) continue;
    // The first letter sorts out all but at most two candidates.
    switch (key[0]) {
      case '$':
        if (key == "$db") take(f.db, it);
        break;
      case 'o':
        if (key == "ordered") take(f.ordered, it);
        break;
      case 'b':
        if (key == "bypassDocumentValidation") take(f.bypass, it);
        break;
      case 'n':
        if (key == "nsInfo") take(f.ns_info, it);
        break;
      case 'p':
        if (key == "pipeline") {
          take(f.pipeline, it);
        } else if (key == "projection") {
          take(f.projection, it);
        }
        break;
      case 's':
        if (key == "sort") take(f.sort, it);
        break;
      case 'q':
        if (key == "query") take(f.query, it);
        break;
      case 'u':
        if (key == "update") {
          take(f.update, it);
        } else if (key == "upsert") {
          take(f.upsert, it);
        }
        break;
      case 'r':
        if (key == "remove") take(f.remove, it);
        break;
      case 'f':
        if (key == "filter") {
          take(f.filter, it);
        } else if (key == "fields") {
          take(f.fields, it);
        }
        break;
      case 'c':
        if (key == "collection") {
          take(f.collection, it);
        } else if (key == "collation") {
          take(f.collation, it);
        }
        break;
      case 'h':
        if (key == "hint") take(f.hint, it);
        break;
      case 't':
        if (key == "tailable") take(f.tailable, it);
        break;
      case 'm':
        if (key == "maxTimeMS") take(f.max_time, it);
        break;
      default:
        break;
    }
    if (key == payload_field) take(f.payload, it);
  }
}

void take_payload(const codec::OpMsg& msg, const BodyFields& f, const char* field,
                  CommandView& view) {
  if (f.payload.holds_array()) {
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

}  // namespace

CommandKind kind_of(std::string_view name) {
  // By length, then by a letter where lengths collide: at most one comparison of bytes, each of
  // a length the compiler knows (this runs for every command).
  switch (name.size()) {
    case 4:
      if (name == "find") return CommandKind::kFind;
      break;
    case 5:
      if (name == "count") return CommandKind::kCount;
      if (name == "hello") return CommandKind::kHello;
      break;
    case 6:
      switch (name[0]) {
        case 'i':
          if (name == "insert") return CommandKind::kInsert;
          break;
        case 'u':
          if (name == "update") return CommandKind::kUpdate;
          break;
        case 'd':
          if (name == "delete") return CommandKind::kDelete;
          break;
        case 'c':
          if (name == "create") return CommandKind::kCreate;
          break;
        default:
          break;
      }
      break;
    case 7:
      if (name == "getMore") return CommandKind::kGetMore;
      if (name == "explain") return CommandKind::kExplain;
      break;
    case 8:
      if (name == "distinct") return CommandKind::kDistinct;
      if (name == "isMaster" || name == "ismaster") return CommandKind::kHello;
      break;
    case 9:
      if (name == "aggregate") return CommandKind::kAggregate;
      if (name == "bulkWrite") return CommandKind::kBulkWrite;
      break;
    case 13:
      if (name == "findAndModify" || name == "findandmodify") return CommandKind::kFindAndModify;
      break;
    default:
      break;
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

std::string_view single_scalar_equality(const BsonView& doc) {
  if (doc.size < 8) return {};
  const uint8_t* const key = doc.data + 5;
  const uint8_t* const end = doc.data + doc.size - 1;
  const uint8_t* nul = key;
  while (nul < end && *nul != 0) ++nul;
  if (nul == key || nul == end || *key == '$') return {};
  size_t size = 0;
  switch (doc.data[4]) {
    case BSON_TYPE_INT32:
      size = 4;
      break;
    case BSON_TYPE_INT64:
    case BSON_TYPE_DOUBLE:
    case BSON_TYPE_DATE_TIME:
      size = 8;
      break;
    case BSON_TYPE_OID:
      size = 12;
      break;
    default:
      return {};
  }
  if (static_cast<size_t>(end - (nul + 1)) != size) return {};
  return {reinterpret_cast<const char*>(key), static_cast<size_t>(nul - key)};
}

CommandView describe(const codec::OpMsg& msg) {
  CommandView view;
  view.more_to_come = msg.more_to_come();
  view.body = msg.body;
  view.trace_context = msg.trace_context;
  if (!msg.trace_context.empty()) {
    BsonElements context(msg.trace_context);
    if (context.find("otel") && context.holds_document()) {
      BsonElements otel(context.container());
      if (otel.find("traceparent")) view.traceparent = otel.utf8();
    }
  }
  // The body was validated by OpMsg::parse; the walk still checks bounds.
  BsonElements it(msg.body);
  if (!it.next()) return view;
  view.name = it.key;
  view.kind = kind_of(view.name);
  view.collection = it.utf8();
  const BsonElements first = it;

  const char* payload_field = payload_field_of(view.kind);
  BodyFields f;
  scan_body(it, payload_field != nullptr ? std::string_view(payload_field) : std::string_view(), f);
  if (f.db.type != 0) view.database = f.db.utf8();
  if (f.ordered.type != 0) view.ordered = f.ordered.as_bool();
  if (f.bypass.type != 0) view.bypass_document_validation = f.bypass.as_bool();

  switch (view.kind) {
    case CommandKind::kInsert:
    case CommandKind::kUpdate:
    case CommandKind::kDelete:
      take_payload(msg, f, payload_field, view);
      break;
    case CommandKind::kBulkWrite: {
      take_payload(msg, f, payload_field, view);
      if (f.ns_info.holds_array()) {
        append_documents(f.ns_info, view.ns_info);
      } else if (const auto* seq = msg.sequence("nsInfo")) {
        view.ns_info = seq->documents;
      }
      break;
    }
    case CommandKind::kFindAndModify: {
      if (f.query.holds_document()) view.query = f.query.container();
      if (f.update.holds_document() || f.update.holds_array()) {
        view.update = f.update.container();
        view.update_is_pipeline = f.update.holds_array();
      }
      if (f.upsert.type != 0) view.upsert = f.upsert.as_bool();
      if (f.remove.type != 0) view.remove = f.remove.as_bool();
      if (f.sort.holds_document()) view.sort = f.sort.container();
      if (f.fields.holds_document()) view.projection = f.fields.container();
      break;
    }
    case CommandKind::kFind:
      if (f.tailable.type != 0) view.tailable = f.tailable.as_bool();
      if (f.filter.holds_document()) view.query = f.filter.container();
      if (f.sort.holds_document()) view.sort = f.sort.container();
      if (f.projection.holds_document()) view.projection = f.projection.container();
      break;
    case CommandKind::kCount:
    case CommandKind::kDistinct:
      // `query` also holds their filter (the query guardrail reads it).
      if (f.query.holds_document()) view.query = f.query.container();
      break;
    case CommandKind::kAggregate:
    case CommandKind::kCreate:
      if (f.pipeline.holds_array()) view.pipeline = f.pipeline.container();
      break;
    case CommandKind::kGetMore:
      // getMore's first value is the cursor id; the namespace is in `collection`.
      if (f.collection.type != 0) view.collection = f.collection.utf8();
      break;
    case CommandKind::kExplain: {
      if (first.holds_document()) {
        BsonElements in(first.container());
        if (in.next()) {
          view.explained = in.key;
          view.collection = in.utf8();
          // The inner command's own pipeline, found from its start like bson_iter_init_find.
          BsonElements pipeline(first.container());
          if (pipeline.find("pipeline") && pipeline.holds_array()) {
            view.pipeline = pipeline.container();
          }
        }
      }
      break;
    }
    default:
      break;
  }
  // What else decides a read's plan: its hint (a name or a key pattern) and collation.
  if (f.hint.type == BSON_TYPE_UTF8) view.hint_name = f.hint.utf8();
  if (f.hint.holds_document()) view.hint = f.hint.container();
  if (f.collation.holds_document()) view.collation = f.collation.container();
  view.has_max_time = f.max_time.type != 0;
  return view;
}

}  // namespace docguard::codec
