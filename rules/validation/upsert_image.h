// The document an upsert inserts when its query matches nothing, as the server builds it before
// validating it: the query's equalities (its _id among them), then the update's $set and
// $setOnInsert (private to the schema check).
#pragma once

#include <bson/bson.h>

#include "docguard/codec/bson_view.h"

namespace docguard::rules {

// Builds the image into `out` (an initialized, empty document). False when docguard cannot
// build it faithfully: a dotted path, an operator other than $set and $setOnInsert, an
// equality inside $and or $or. Without an _id in the query the server gives one; a stand-in
// ObjectId is put first.
bool upsert_insert_image(const codec::BsonView& filter, const codec::BsonView& update, bson_t* out);

}  // namespace docguard::rules
