// /status "collections": what docguard knows of each collection.
#pragma once

#include <string>

#include "docguard/advisor/live_advisor.h"

namespace docguard::proxy {

// Per collection, its kind, the server's count and size, index names, validator state, how and
// when it was last read, and the facts that could not be read.
std::string collection_facts_json(const advisor::LiveAdvisor& advisor);

}  // namespace docguard::proxy
