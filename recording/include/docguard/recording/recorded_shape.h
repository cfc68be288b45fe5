// The shape of a recorded request: the command name, its namespace and its filter or pipeline
// with values replaced by their place (the guardrail's shape text), e.g.
// `find shop.orders {status: ?} sort {created: -1}`; and whether its result is sorted. The
// recorder writes it into the side file, and the replay gathers its comparison by it.
#pragma once

#include <string>

#include "docguard/codec/message.h"

namespace docguard::recording {

struct RequestShape {
  std::string text;
  std::string ns;
  bool sorted = false;
};
// "(unparsed request)" for a message the codec cannot read.
RequestShape shape_of_request(codec::Bytes message);

}  // namespace docguard::recording
