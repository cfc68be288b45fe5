// One write statement as the chain of checks sees it (an inserted document, an update or delete
// statement, a bulkWrite op, a findAndModify). The engine reads it from the command and measures
// what it writes once; each check's judge_write() then reads it in the chain's order, and after
// every check judged it, each check's learn_write() learns from it what the statement's verdict
// allows (a refused statement never reaches the server).
//
// Each kind of statement is a type of its own, so a check takes part only for the kinds it has
// a method for: the chain knows at compile time which checks a statement meets (check_chain.h),
// and a check never asks which kind it was handed.
#pragma once

#include <cstdint>

#include "docguard/codec/bson_elements.h"
#include "docguard/codec/bson_view.h"

namespace docguard::rules {

class DocumentShape;
class UpdateShape;
struct QueryParts;

struct WriteStatement {
  WriteStatement() = default;
  // `id` may point into the statement itself (the filter's _id): it stays where it was built.
  WriteStatement(const WriteStatement&) = delete;
  WriteStatement& operator=(const WriteStatement&) = delete;

  int32_t index = -1;  // in the client's batch; -1: the whole command (findAndModify)
  // The document the statement writes: the filter's _id when it is an equality, else the
  // written document's own (null: not known).
  const codec::BsonElements* id = nullptr;
};

// An inserted document, measured.
struct InsertStatement : WriteStatement {
  codec::BsonView document;
  const DocumentShape* shape = nullptr;
};

// A statement with a query: the guardrail's parts of the statement, or, with `command_query`,
// the command's own (findAndModify's, which the command view holds). Null and false: none.
struct QueryingStatement : WriteStatement {
  // Statement `at` of the batch (-1: the command) with filter `q` and the guardrail's parts
  // (null: none of its own, so the statement is the command, findAndModify, and its query the
  // command's). The filter's _id is found when it is an equality (a value, not {$in: ...}): the
  // document the statement writes is then known.
  QueryingStatement(const codec::BsonView& q, int32_t at, const QueryParts* parts)
      : filter(q),
        query(parts),
        command_query(parts == nullptr),
        filter_id_storage(codec::well_framed(q) ? q : codec::BsonView{}) {
    index = at;
    if (names_id()) filter_id = id = &filter_id_storage;
  }

  codec::BsonView filter;
  const QueryParts* query = nullptr;
  bool command_query = false;
  // The filter's _id when it is an equality (null: it names none).
  const codec::BsonElements* filter_id = nullptr;

 private:
  bool names_id() {
    if (!filter_id_storage.find("_id")) return false;
    return !filter_id_storage.holds_document() ||
           !codec::is_operator_document(filter_id_storage.container());
  }
  codec::BsonElements filter_id_storage;
};

// An update. As itself: one whose update cannot be read, of which only the query is judged.
struct UpdateStatement : QueryingStatement {
  using QueryingStatement::QueryingStatement;
  codec::BsonView update;
  bool upsert = false;
};

// An update without operators: the whole new document, which keeps the stored _id. Measured.
struct ReplacementStatement : UpdateStatement {
  using UpdateStatement::UpdateStatement;
  const DocumentShape* shape = nullptr;
  bool names_its_id = false;  // the new document has an _id of its own
};

// An update by operators, or by a pipeline. Measured.
struct OperatorUpdateStatement : UpdateStatement {
  using UpdateStatement::UpdateStatement;
  bool pipeline = false;
  const UpdateShape* shape = nullptr;
};

struct DeleteStatement : QueryingStatement {
  using QueryingStatement::QueryingStatement;
};

}  // namespace docguard::rules
