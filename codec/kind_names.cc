// Human-readable names of command kinds, for logs and metric labels.
#include "docguard/codec/command_view.h"

namespace docguard::codec {

const char* kind_name(CommandKind kind) {
  switch (kind) {
    case CommandKind::kInsert:
      return "insert";
    case CommandKind::kUpdate:
      return "update";
    case CommandKind::kDelete:
      return "delete";
    case CommandKind::kFindAndModify:
      return "findAndModify";
    case CommandKind::kFind:
      return "find";
    case CommandKind::kAggregate:
      return "aggregate";
    case CommandKind::kCount:
      return "count";
    case CommandKind::kDistinct:
      return "distinct";
    case CommandKind::kGetMore:
      return "getMore";
    case CommandKind::kBulkWrite:
      return "bulkWrite";
    case CommandKind::kCreate:
      return "create";
    case CommandKind::kExplain:
      return "explain";
    case CommandKind::kHello:
      return "hello";
    case CommandKind::kOther:
      return "other";
  }
  return "other";
}

}  // namespace docguard::codec
