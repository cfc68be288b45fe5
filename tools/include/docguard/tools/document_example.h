// A document as docguard's offline reports show it (whatif's examples, the replay's
// differences): recorded traffic holds customers' data, so a report shows its structure with
// every scalar value replaced by the name of its type ("<string>", "<int32>") unless the user
// asks for the values (--show-values).
#pragma once

#include <string>

#include "docguard/codec/bson_view.h"

namespace docguard::tools {

// Relaxed extended JSON of `doc`, at most `max_chars` long (" ..." marks a cut).
std::string document_example(const codec::BsonView& doc, bool show_values, size_t max_chars = 2000);

}  // namespace docguard::tools
