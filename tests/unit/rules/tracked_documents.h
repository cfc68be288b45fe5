// How many documents the engine's tracker remembers, read from its /status document (the
// "tracked_documents" member): what an operator sees, so the tests need no accessor of their own.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "docguard/rules/engine.h"

namespace docguard::rules {

inline size_t tracked_documents(const Engine& engine) {
  const std::string status = engine.status_json();
  const std::string key = "\"tracked_documents\":";
  const size_t at = status.find(key);
  if (at == std::string::npos) return SIZE_MAX;
  return std::stoul(status.substr(at + key.size()));
}

}  // namespace docguard::rules
