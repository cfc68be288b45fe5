// Who may use the admin API, as the settings decide it: an admin listener other hosts can reach
// needs a token (from the file, a token file or the environment) or the operator's explicit
// opt-in; a settings or token file any user may write is refused.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "docguard/settings/settings_reader.h"

namespace docguard::settings {
namespace {

namespace fs = std::filesystem;

fs::path scratch_file(const std::string& name, const std::string& text, mode_t mode = 0600) {
  const fs::path path =
      fs::temp_directory_path() / ("docguard-admin-" + std::to_string(getpid()) + "-" + name);
  std::ofstream(path) << text;
  ::chmod(path.c_str(), mode);
  return path;
}

std::string settle_error(ProxyConfig config) {
  try {
    settle_admin_access(config);
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "";
}

// No variable of the environment leaks in from the shell running the tests.
class AdminAccess : public ::testing::Test {
 protected:
  void SetUp() override {
    ::unsetenv(kAdminTokenEnv);
    ::unsetenv(kAdminTokenFileEnv);
  }
  void TearDown() override { SetUp(); }
};

TEST_F(AdminAccess, LoopbackIsOnlyThisHost) {
  for (const char* host : {"127.0.0.1", "127.8.9.10", "::1", "localhost", "::ffff:127.0.0.1"}) {
    EXPECT_TRUE(is_loopback_host(host)) << host;
  }
  for (const char* host : {"0.0.0.0", "::", "10.0.0.1", "128.0.0.1", "localhost.example", ""}) {
    EXPECT_FALSE(is_loopback_host(host)) << host;
  }
}

TEST_F(AdminAccess, OffLoopbackWithoutATokenIsRefusedNamingTheSettings) {
  ProxyConfig config;
  EXPECT_EQ(settle_error(config), "");  // 127.0.0.1:9216 by default
  config.admin = {"0.0.0.0", 9216};
  const std::string error = settle_error(config);
  for (const char* named : {"admin.listen", "--admin", "0.0.0.0:9216", "admin.token_file",
                            "DOCGUARD_ADMIN_TOKEN", "admin.allow_without_token"}) {
    EXPECT_NE(error.find(named), std::string::npos) << named << " in " << error;
  }
  config.admin_allow_without_token = true;
  EXPECT_EQ(settle_error(config), "");
  EXPECT_TRUE(admin_open_without_token(config));
  config.admin_allow_without_token = false;
  config.admin_token = "sesame";
  EXPECT_EQ(settle_error(config), "");
  EXPECT_FALSE(admin_open_without_token(config));
}

TEST_F(AdminAccess, TheTokenFromAFileLosesOneFinalNewline) {
  const fs::path file = scratch_file("token", "s3cret\n", 0640);
  ProxyConfig config;
  config.admin = {"0.0.0.0", 9216};
  config.admin_token_file = file;
  settle_admin_access(config);
  EXPECT_EQ(config.admin_token, "s3cret");
  std::ofstream(file) << "two\nlines\n";
  config.admin_token.clear();
  const std::string error = settle_error(config);
  EXPECT_NE(error.find("line break"), std::string::npos) << error;
  EXPECT_EQ(error.find("two"), std::string::npos) << "the token is never quoted: " << error;
  std::ofstream(file) << "";
  EXPECT_NE(settle_error(config).find("is empty"), std::string::npos);
  fs::remove(file);
  EXPECT_NE(settle_error(config).find("cannot read"), std::string::npos);
  config.admin_token = "both";
  EXPECT_NE(settle_error(config).find("give one of them"), std::string::npos);
}

TEST_F(AdminAccess, AWorldWritableTokenFileIsRefused) {
  const fs::path file = scratch_file("open-token", "s3cret\n", 0666);
  ::chmod(file.c_str(), 0666);  // past the umask
  ProxyConfig config;
  config.admin_token_file = file;
  const std::string error = settle_error(config);
  EXPECT_NE(error.find("admin.token_file"), std::string::npos) << error;
  EXPECT_NE(error.find("writable by every user"), std::string::npos) << error;
  EXPECT_NE(error.find("0666"), std::string::npos) << error;
  EXPECT_EQ(error.find("s3cret"), std::string::npos) << error;
  fs::remove(file);
}

TEST_F(AdminAccess, TheEnvironmentGivesTheTokenWhenTheSettingsDoNot) {
  const fs::path file = scratch_file("env-token", "from-file\n");
  ProxyConfig config;
  config.admin = {"0.0.0.0", 9216};
  ::setenv(kAdminTokenEnv, "from-env", 1);
  ProxyConfig from_env = config;
  settle_admin_access(from_env);
  EXPECT_EQ(from_env.admin_token, "from-env");
  ::setenv(kAdminTokenFileEnv, file.c_str(), 1);  // the file wins over the value
  ProxyConfig from_file = config;
  settle_admin_access(from_file);
  EXPECT_EQ(from_file.admin_token, "from-file");
  ProxyConfig from_settings = config;  // and the settings over both
  from_settings.admin_token = "from-settings";
  settle_admin_access(from_settings);
  EXPECT_EQ(from_settings.admin_token, "from-settings");
  fs::remove(file);
}

TEST_F(AdminAccess, BuildConfigRefusesAnOpenAdminAndAWorldWritableFile) {
  const fs::path open = scratch_file("open.yaml", "admin: {listen: 0.0.0.0:9216}\n", 0644);
  Flags flags;
  flags.values["config"] = open;
  try {
    (void)build_config(flags);
    FAIL() << "an admin on 0.0.0.0 without a token was accepted";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("admin.allow_without_token"), std::string::npos);
  }
  std::ofstream(open) << "admin: {listen: 0.0.0.0:9216, allow_without_token: true}\n";
  EXPECT_TRUE(build_config(flags).admin_allow_without_token);
  ::chmod(open.c_str(), 0646);
  try {
    (void)build_config(flags);
    FAIL() << "a world-writable settings file was accepted";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("writable by every user"), std::string::npos);
    EXPECT_NE(std::string(e.what()).find("chmod o-w"), std::string::npos);
  }
  ::chmod(open.c_str(), 0644);
  // --admin moves a loopback file's listener off loopback: checked after the flags.
  std::ofstream(open) << "mode: warn\n";
  EXPECT_NO_THROW((void)build_config(flags));
  flags.values["admin"] = "0.0.0.0:9216";
  EXPECT_THROW((void)build_config(flags), ConfigError);
  fs::remove(open);
}

}  // namespace
}  // namespace docguard::settings
