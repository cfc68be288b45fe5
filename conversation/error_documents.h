// Private to the conversation library: the documents docguard answers with when it refuses a
// write (code 121 DocumentValidationFailure, as server-side validation reports it), shared by the
// request plan (request_plan.cc) and the reply merges (reply_merge.cc), and the error a request
// gets when the session has no upstream to forward it to (Conversation::refuse).
#pragma once

#include <bson/bson.h>

#include <cstdint>
#include <string>
#include <vector>

#include "docguard/codec/op_msg.h"
#include "docguard/codec/server_errors.h"
#include "docguard/conversation/request_plan.h"

namespace docguard::conversation::detail {

// The query guardrail's refusal text (the server's notablescan message, then docguard's reason)
// and its errInfo: {rule, shape, index}, with match and ruleLine, and the rule's id as `rule`, only
// when `options` reveal the rule's source (guardrail_errors.cc).
std::string guardrail_message(const rules::Violation& v, RefusalOptions options);
void append_guardrail_err_info(bson_t* parent, const rules::Violation& v, RefusalOptions options);

// A writeErrors entry: {index, code, codeName, errmsg, errInfo}. `v`: the statement's blocking
// violation; null when the verdict blocks it without one (then no errInfo, and the errmsg
// command_error gives a command refused without one).
std::vector<uint8_t> write_error(int32_t index, const rules::Violation* v, RefusalOptions options);
// A bulkWrite per-op result for a refused op: {ok: 0, idx, code, codeName, errmsg, errInfo}.
// `v`: as for write_error.
std::vector<uint8_t> bulk_write_error(int32_t index, const rules::Violation* v,
                                      RefusalOptions options);
// The violation reported for a blocked statement (-1: the command): its first blocking one.
const rules::Violation* blocking_violation(const rules::Verdict& verdict, int32_t index);
// The whole command refused: {ok: 0, errmsg, code: 121, codeName, errInfo}.
std::vector<uint8_t> command_error(const codec::OpMsg& request, const rules::Verdict& verdict,
                                   int32_t reply_request_id, RefusalOptions options);
// {ok: 0, errmsg, code, codeName} answering `request`, in its reply family (OP_REPLY for
// OP_QUERY, OP_MSG otherwise). Empty for a request that expects no reply (OP_MSG moreToCome).
std::vector<uint8_t> error_reply(codec::Bytes request, int32_t reply_request_id,
                                 codec::ServerError code, const std::string& errmsg);
// Appends `docs` (each one BSON document) as the array `key`.
void append_documents(bson_t* parent, const char* key,
                      const std::vector<std::vector<uint8_t>>& docs);

}  // namespace docguard::conversation::detail
