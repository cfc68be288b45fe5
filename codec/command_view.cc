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
// (instead of one scan per field). This is set up for every command: the slots are left unset,
// and a bit says which were taken (a field given twice counts at its last occurrence).
enum class BodyField : uint8_t {
  kDb,
  kOrdered,
  kPayload,
  kNsInfo,
  kPipeline,
  kQuery,
  kUpdate,
  kUpsert,
  kRemove,
  kFilter,
  kCollection,
  kSort,
  kProjection,
  kFields,
  kHint,
  kCollation,
  kTailable,
  kMaxTime,
  kBypass,
  kFieldCount
};

class BodyFields {
 public:
  void take(BodyField f, const BsonValue& e) {
    slots_[index(f)] = Slot{e.value, e.value_size, e.type};
    taken_ |= 1u << index(f);
  }
  // The field's value; type 0 when the body does not have it.
  BsonValue operator[](BodyField f) const {
    const Slot& slot = slots_[index(f)];
    if ((taken_ & (1u << index(f))) == 0) return {};
    return BsonValue(slot.type, slot.value, slot.size);
  }

 private:
  static size_t index(BodyField f) { return static_cast<size_t>(f); }
  struct Slot {
    const uint8_t* value;
    uint32_t size;
    uint8_t type;
  };
  static constexpr size_t kSlots = static_cast<size_t>(BodyField::kFieldCount);
  static_assert(kSlots <= 32);
  uint32_t taken_ = 0;
  Slot slots_[kSlots];  // set before read: taken_ says which
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

// One of the body's fields after the first.
[[gnu::always_inline]] inline void scan_field(std::string_view key, const BsonValue& it,
                                              std::string_view payload_field, BodyFields& f) {
  using enum BodyField;
  if (key.empty()) return;
  // The first letter sorts out all but at most two candidates.
  switch (key[0]) {
    case '$':
      if (key == "$db") f.take(kDb, it);
      break;
    case 'o':
      if (key == "ordered") f.take(kOrdered, it);
      break;
    case 'b':
      if (key == "bypassDocumentValidation") f.take(kBypass, it);
      break;
    case 'n':
      if (key == "nsInfo") f.take(kNsInfo, it);
      break;
    case 'p':
      if (key == "pipeline") {
        f.take(kPipeline, it);
      } else if (key == "projection") {
        f.take(kProjection, it);
      }
      break;
    case 's':
      if (key == "sort") f.take(kSort, it);
      break;
    case 'q':
      if (key == "query") f.take(kQuery, it);
      break;
    case 'u':
      if (key == "update") {
        f.take(kUpdate, it);
      } else if (key == "upsert") {
        f.take(kUpsert, it);
      }
      break;
    case 'r':
      if (key == "remove") f.take(kRemove, it);
      break;
    case 'f':
      if (key == "filter") {
        f.take(kFilter, it);
      } else if (key == "fields") {
        f.take(kFields, it);
      }
      break;
    case 'c':
      if (key == "collection") {
        f.take(kCollection, it);
      } else if (key == "collation") {
        f.take(kCollation, it);
      }
      break;
    case 'h':
      if (key == "hint") f.take(kHint, it);
      break;
    case 't':
      if (key == "tailable") f.take(kTailable, it);
      break;
    case 'm':
      if (key == "maxTimeMS") f.take(kMaxTime, it);
      break;
    default:
      break;
  }
  if (key == payload_field) f.take(kPayload, it);
}

void take_payload(const codec::OpMsg& msg, const BodyFields& f, const char* field,
                  CommandView& view) {
  using enum BodyField;
  if (f[kPayload].holds_array()) {
    append_documents(f[kPayload], view.statements);
    view.payload_source = PayloadSource::kBody;
    view.payload_field = std::string_view(field);
    return;
  }
  if (const auto* seq = msg.sequence(field)) {
    view.statements = seq->documents;
    msg.first_sequence_document.copy_to(view.first_statement);
    view.payload_source = PayloadSource::kSequence;
    view.payload_field = seq->identifier;
  }
}

// kind_of's answer, inlined where describe() asks, on every message. By length, then by a letter
// where lengths collide: at most one comparison of bytes, each of a length the compiler knows.
[[gnu::always_inline]] inline CommandKind kind_by_name(std::string_view name) {
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
}  // namespace

CommandKind kind_of(std::string_view name) { return kind_by_name(name); }

bool is_hello_command(const BsonView& command) {
  if (command.empty()) return false;
  bson_t b = command.borrow();
  bson_iter_t it;
  if (!bson_iter_init(&it, &b) || !bson_iter_next(&it)) return false;
  return kind_of(key_of(it)) == CommandKind::kHello;
}

std::string_view single_scalar_equality(const BsonView& doc) {
  if (doc.size < 8 || doc.data[doc.size - 1] != 0) return {};
  const uint8_t* const key = doc.data + 5;
  const uint8_t* const end = doc.data + doc.size - 1;
  // *end is the document's NUL: the key's scan stops there at the latest.
  const uint8_t* nul = key;
  while (*nul != 0) ++nul;
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
  // The body's elements as parse() noted them while it validated the body; when it did not
  // (more than it keeps, or an OpMsg made otherwise), a walk that checks bounds.
  const TopLevelElements& top = msg.body_elements;
  const uint8_t* const data = msg.body.data;
  const auto key_at = [&](uint32_t i) {
    const TopLevelElements::Entry e = top.entries[i];
    return std::string_view(reinterpret_cast<const char*>(data) + e.element + 1,
                            e.value - e.element - 2);
  };
  const auto value_at = [&](uint32_t i) {
    const TopLevelElements::Entry e = top.entries[i];
    const uint32_t end = i + 1 < top.count ? top.entries[i + 1].element : msg.body.size - 1;
    return BsonValue(data[e.element], data + e.value, end - e.value);
  };
  BsonElements it(msg.body);
  if (top.complete ? top.count == 0 : !it.next()) return view;
  const BsonValue first = top.complete ? value_at(0) : static_cast<const BsonValue&>(it);
  view.name = top.complete ? key_at(0) : it.key;
  view.kind = kind_by_name(view.name);
  view.collection = first.utf8();

  const char* payload_field = payload_field_of(view.kind);
  const std::string_view payload =
      payload_field != nullptr ? std::string_view(payload_field) : std::string_view();
  BodyFields f;
  if (top.complete) {
    for (uint32_t i = 1; i < top.count; ++i) scan_field(key_at(i), value_at(i), payload, f);
  } else {
    while (it.next()) scan_field(it.key, it, payload, f);
  }
  using enum BodyField;
  if (f[kDb].type != 0) view.database = f[kDb].utf8();
  if (f[kOrdered].type != 0) view.ordered = f[kOrdered].as_bool();
  if (f[kBypass].type != 0) view.bypass_document_validation = f[kBypass].as_bool();

  switch (view.kind) {
    case CommandKind::kInsert:
    case CommandKind::kUpdate:
    case CommandKind::kDelete:
      take_payload(msg, f, payload_field, view);
      break;
    case CommandKind::kBulkWrite: {
      take_payload(msg, f, payload_field, view);
      if (f[kNsInfo].holds_array()) {
        append_documents(f[kNsInfo], view.ns_info);
      } else if (const auto* seq = msg.sequence("nsInfo")) {
        view.ns_info = seq->documents;
      }
      break;
    }
    case CommandKind::kFindAndModify: {
      if (f[kQuery].holds_document()) view.query = f[kQuery].container();
      if (f[kUpdate].holds_document() || f[kUpdate].holds_array()) {
        view.update = f[kUpdate].container();
        view.update_is_pipeline = f[kUpdate].holds_array();
      }
      if (f[kUpsert].type != 0) view.upsert = f[kUpsert].as_bool();
      if (f[kRemove].type != 0) view.remove = f[kRemove].as_bool();
      if (f[kSort].holds_document()) {
        view.sort = f[kSort].container();
        view.plan_forced |= first_key(view.sort) == "$natural";
      }
      if (f[kFields].holds_document()) view.projection = f[kFields].container();
      break;
    }
    case CommandKind::kFind:
      if (f[kTailable].type != 0) view.plan_forced = view.tailable = f[kTailable].as_bool();
      if (f[kFilter].holds_document()) view.query = f[kFilter].container();
      if (f[kSort].holds_document()) {
        view.sort = f[kSort].container();
        view.plan_forced |= first_key(view.sort) == "$natural";  // a collection scan's order
      }
      if (f[kProjection].holds_document()) view.projection = f[kProjection].container();
      break;
    case CommandKind::kCount:
    case CommandKind::kDistinct:
      // `query` also holds their filter (the query guardrail reads it).
      if (f[kQuery].holds_document()) view.query = f[kQuery].container();
      break;
    case CommandKind::kAggregate:
    case CommandKind::kCreate:
      if (f[kPipeline].holds_array()) view.pipeline = f[kPipeline].container();
      break;
    case CommandKind::kGetMore:
      // getMore's first value is the cursor id; the namespace is in `collection`.
      if (f[kCollection].type != 0) view.collection = f[kCollection].utf8();
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
  if (f[kHint].type != 0) {
    view.plan_forced = true;
    if (f[kHint].type == BSON_TYPE_UTF8) view.hint_name = f[kHint].utf8();
    if (f[kHint].holds_document()) view.hint = f[kHint].container();
  }
  if (f[kCollation].holds_document()) view.collation = f[kCollation].container();
  view.has_max_time = f[kMaxTime].type != 0;
  return view;
}

}  // namespace docguard::codec
