// The introspector without a server: what a pass reports to its sink and to /status when the
// cluster cannot be reached, and that stop() ends it.
#include "docguard/introspection/introspector.h"

#include <gtest/gtest.h>

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <string>
#include <vector>

#include "docguard/rules/rule_set.h"

namespace docguard::introspection {
namespace {

// Records what the introspector reports; passes wait on it.
class RecordingSink final : public IntrospectionSink {
 public:
  void count_run(PassResult result) override {
    std::lock_guard lock(mutex_);
    runs_.emplace_back(kPassResultNames.name(result));
    changed_.notify_all();
  }
  void observe_seconds(double seconds) override {
    std::lock_guard lock(mutex_);
    seconds_.push_back(seconds);
  }
  void add_commands(uint64_t n) override {
    std::lock_guard lock(mutex_);
    commands_ += n;
  }
  void set_unknown_facts(size_t n) override {
    std::lock_guard lock(mutex_);
    unknown_facts_ = n;
  }

  // The runs counted, once there are at least `n` of them (or after a generous wait).
  std::vector<std::string> runs(size_t n) {
    std::unique_lock lock(mutex_);
    changed_.wait_for(lock, std::chrono::seconds(30), [&] { return runs_.size() >= n; });
    return runs_;
  }
  size_t observations() {
    std::lock_guard lock(mutex_);
    return seconds_.size();
  }
  uint64_t commands() {
    std::lock_guard lock(mutex_);
    return commands_;
  }

 private:
  std::mutex mutex_;
  std::condition_variable changed_;
  std::vector<std::string> runs_;
  std::vector<double> seconds_;
  uint64_t commands_ = 0;
  size_t unknown_facts_ = 0;
};

struct Fixture {
  advisor::AdvisorSettings advisor_settings;
  advisor::LiveAdvisor advisor{advisor_settings};
  rules::Engine engine{
      std::make_shared<const rules::RuleSet>(rules::Action::kWarn, std::vector<rules::Rule>{},
                                             rules::TrackingLimits{}),
      nullptr, &advisor};
  RecordingSink sink;
};

IntrospectorTarget refused_target() {
  IntrospectorTarget target;
  target.uri = "not a connection string";
  target.redacted_uri = "not a connection string";
  return target;
}

TEST(Introspector, StatusBeforeAnyPass) {
  Fixture f;
  IntrospectionSettings settings;
  settings.lease_database = "ops";
  Introspector introspector(settings, refused_target(), f.advisor, f.engine, f.sink);
  const std::string status = introspector.status_json();
  EXPECT_NE(status.find("\"enabled\":true"), std::string::npos) << status;
  EXPECT_NE(status.find("\"passes\":0"), std::string::npos) << status;
  EXPECT_NE(status.find("\"last_result\":\"none\""), std::string::npos) << status;
  EXPECT_NE(status.find("\"lease_database\":\"ops\""), std::string::npos) << status;
  EXPECT_NE(status.find("\"lease_held\":false"), std::string::npos) << status;
}

TEST(Introspector, PassThatCannotOpenTheClusterIsCountedAsFailed) {
  Fixture f;
  IntrospectionSettings settings;
  settings.jitter = 0;  // the first pass starts at once
  Introspector introspector(settings, refused_target(), f.advisor, f.engine, f.sink);
  introspector.start();
  const auto runs = f.sink.runs(1);
  introspector.stop();
  ASSERT_FALSE(runs.empty());
  EXPECT_EQ(runs.front(), "failed");
  EXPECT_GE(f.sink.observations(), 1u);
  EXPECT_EQ(f.sink.commands(), 0u);  // nothing was sent
  const std::string status = introspector.status_json();
  EXPECT_NE(status.find("\"passes\":1"), std::string::npos) << status;
  EXPECT_NE(status.find("\"last_result\":\"failed\""), std::string::npos) << status;
  EXPECT_NE(status.find("invalid URI"), std::string::npos) << status;
}

TEST(Introspector, StopsBeforeItsFirstPass) {
  Fixture f;
  IntrospectionSettings settings;
  settings.interval = std::chrono::hours(1);
  settings.jitter = 1;  // the first pass waits up to 10 s
  Introspector introspector(settings, refused_target(), f.advisor, f.engine, f.sink);
  introspector.start();
  introspector.stop();
  introspector.stop();  // a second stop is harmless
  SUCCEED();
}

}  // namespace
}  // namespace docguard::introspection
