// The $jsonSchema validator a server can enforce itself, derived from a collection's profile:
// bsonType for every field seen with known types, required for fields present in every document,
// maxItems for arrays (the smallest advisor bound the data already fits, else the larger one).
#pragma once

#include <string>

#include "docguard/advisor/collection_profile.h"
#include "docguard/advisor/settings.h"

namespace docguard::advisor {

// The $jsonSchema document as JSON.
std::string build_json_schema(const CollectionProfile& profile, const AdvisorSettings& settings);

// {"collMod": ..., "validator": {"$jsonSchema": ...}, "validationLevel": "moderate", ...}: run it
// with db.runCommand(). "moderate" leaves documents that already break the schema alone until
// they are next updated, so applying it never fails on existing data.
std::string build_collmod_command(const CollectionProfile& profile,
                                  const AdvisorSettings& settings);

}  // namespace docguard::advisor
