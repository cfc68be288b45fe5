#include "docguard/command/command_view.h"

#include <cstring>

namespace docguard::command {
namespace {

std::string_view key_of(const bson_iter_t& it) {
  return {bson_iter_key(&it), bson_iter_key_len(&it)};
}

std::string_view utf8_of(const bson_iter_t& it) {
  if (!BSON_ITER_HOLDS_UTF8(&it)) return {};
  uint32_t len = 0;
  const char* s = bson_iter_utf8(&it, &len);
  return {s, len};
}

bool truthy(const bson_iter_t& it) { return bson_iter_as_bool(&it); }

// Appends the embedded documents of an array value; non-document elements are skipped (the
// server rejects them; the rules have nothing to measure there).
void append_documents(const bson_iter_t& array_it, std::vector<wire::BsonView>& out) {
  bson_iter_t child;
  if (!BSON_ITER_HOLDS_ARRAY(&array_it) || !bson_iter_recurse(&array_it, &child)) return;
  while (bson_iter_next(&child)) {
    if (BSON_ITER_HOLDS_DOCUMENT(&child)) out.push_back(wire::view_of(child));
  }
}

void take_payload(const wire::OpMsg& msg, const bson_t* body, const char* field,
                  CommandView& view) {
  bson_iter_t it;
  if (bson_iter_init_find(&it, body, field) && BSON_ITER_HOLDS_ARRAY(&it)) {
    append_documents(it, view.statements);
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
    view.pipeline = wire::view_of(it);
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

CommandView describe(const wire::OpMsg& msg) {
  CommandView view;
  view.more_to_come = msg.more_to_come();
  bson_t body = msg.body.borrow();
  bson_iter_t it;
  if (!bson_iter_init(&it, &body) || !bson_iter_next(&it)) return view;
  view.name = key_of(it);
  view.kind = kind_of(view.name);
  view.collection = utf8_of(it);
  const bson_iter_t first = it;

  bson_iter_t f;
  if (bson_iter_init_find(&f, &body, "$db")) view.database = utf8_of(f);
  if (bson_iter_init_find(&f, &body, "ordered")) view.ordered = truthy(f);

  switch (view.kind) {
    case CommandKind::kInsert:
      take_payload(msg, &body, "documents", view);
      break;
    case CommandKind::kUpdate:
      take_payload(msg, &body, "updates", view);
      break;
    case CommandKind::kDelete:
      take_payload(msg, &body, "deletes", view);
      break;
    case CommandKind::kBulkWrite: {
      take_payload(msg, &body, "ops", view);
      if (bson_iter_init_find(&f, &body, "nsInfo") && BSON_ITER_HOLDS_ARRAY(&f)) {
        append_documents(f, view.ns_info);
      } else if (const auto* seq = msg.sequence("nsInfo")) {
        view.ns_info = seq->documents;
      }
      break;
    }
    case CommandKind::kFindAndModify: {
      if (bson_iter_init_find(&f, &body, "query") && BSON_ITER_HOLDS_DOCUMENT(&f)) {
        view.query = wire::view_of(f);
      }
      if (bson_iter_init_find(&f, &body, "update")) {
        if (BSON_ITER_HOLDS_DOCUMENT(&f) || BSON_ITER_HOLDS_ARRAY(&f)) {
          view.update = wire::view_of(f);
          view.update_is_pipeline = BSON_ITER_HOLDS_ARRAY(&f);
        }
      }
      if (bson_iter_init_find(&f, &body, "upsert")) view.upsert = truthy(f);
      if (bson_iter_init_find(&f, &body, "remove")) view.remove = truthy(f);
      break;
    }
    case CommandKind::kFind:
      if (bson_iter_init_find(&f, &body, "filter") && BSON_ITER_HOLDS_DOCUMENT(&f)) {
        view.query = wire::view_of(f);
      }
      break;
    case CommandKind::kAggregate:
      take_pipeline(&body, "pipeline", view);
      break;
    case CommandKind::kGetMore:
      // getMore's first value is the cursor id; the namespace is in `collection`.
      if (bson_iter_init_find(&f, &body, "collection")) view.collection = utf8_of(f);
      break;
    case CommandKind::kCreate:
      take_pipeline(&body, "pipeline", view);
      break;
    case CommandKind::kExplain: {
      if (BSON_ITER_HOLDS_DOCUMENT(&first)) {
        const wire::BsonView inner_view = wire::view_of(first);
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

}  // namespace docguard::command
