// The fleet's lease without a server: who holds it is told apart by the instance id.
#include "docguard/introspection/introspection_lease.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <string>

namespace docguard::introspection {
namespace {

TEST(IntrospectionLease, KeepsItsDatabaseAndHolder) {
  IntrospectionLease lease("ops", "host/1/abc");
  EXPECT_EQ(lease.database(), "ops");
  EXPECT_EQ(lease.holder(), "host/1/abc");
}

TEST(FleetInstanceId, NamesHostProcessAndARandomPart) {
  const std::string id = fleet_instance_id();
  const size_t first = id.find('/');
  const size_t second = id.find('/', first + 1);
  ASSERT_NE(first, std::string::npos) << id;
  ASSERT_NE(second, std::string::npos) << id;
  EXPECT_EQ(id.substr(first + 1, second - first - 1), std::to_string(getpid()));
  EXPECT_EQ(id.size() - second - 1, 8u) << id;  // eight hex digits
}

}  // namespace
}  // namespace docguard::introspection
