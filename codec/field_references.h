// Whether a request may carry or return the values of the policy's own fields under names the
// key-by-key redaction cannot follow (private to codec/; recording_redaction.cc asks it of every
// request when the policy names fields).
#pragma once

#include "docguard/codec/bson_view.h"
#include "docguard/codec/op_msg.h"
#include "docguard/codec/redaction_policy.h"

namespace docguard::codec {

// True when `body` (a request's body, wrapper included) or a document of `msg`'s sequences (an
// update's statements, an insert's documents; null for a legacy query), under a policy that
// names fields:
//  - holds a field path ("$ssn", "$$ROOT.ssn", "$$CURRENT.card.number") one of whose parts is a
//    part of a listed field, or "$$ROOT" / "$$CURRENT" whole;
//  - holds a $getField or $setField naming such a part, or a field given by an expression;
//  - is a distinct whose key has such a part;
//  - holds JavaScript ($where, $function, $accumulator, a code value);
//  - binds variables (a `let`, an update statement's `c`) and names such a part anywhere.
// Parts are compared, not whole paths: after an $unwind or a $replaceRoot, "$number" may be
// "card.number"'s value. A document too deep or malformed counts as one that does. False at
// once when the policy names no fields.
bool references_policy_field(const BsonView& body, const OpMsg* msg, const RedactionPolicy& policy);

}  // namespace docguard::codec
