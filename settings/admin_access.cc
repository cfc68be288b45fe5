// Who may use the admin API: the token from the settings, a file or the environment, and the
// refusal of a listener that any host could reach without one.
#include <sys/stat.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>

#include "docguard/base/ip_address.h"
#include "docguard/settings/proxy_settings.h"

namespace docguard::settings {
namespace {

std::string octal_mode(mode_t mode) {
  std::ostringstream out;
  out << '0' << std::oct << (mode & 07777);
  return out.str();
}

// The file's content without one final newline (`echo TOKEN > file`, `kubectl create secret
// --from-file`); the error names the file and the setting, never the content.
std::string read_token_file(const std::string& path, const std::string& what) {
  refuse_world_writable(path, what);
  std::ifstream in(path, std::ios::binary);
  if (!in) throw ConfigError(what + ": cannot read " + path + ": " + std::strerror(errno));
  std::string token((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (token.ends_with('\n')) token.pop_back();
  if (token.ends_with('\r')) token.pop_back();
  if (token.empty()) throw ConfigError(what + ": " + path + " is empty");
  for (const char c : token) {
    // A token travels in an HTTP header: no line break or control character can be sent.
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) {
      throw ConfigError(what + ": " + path +
                        " holds a control character or a line break inside the token");
    }
  }
  return token;
}

}  // namespace

bool is_loopback_host(const std::string& host) {
  if (host == "localhost") return true;
  const auto address = base::parse_ip_address(host);
  if (!address) return false;
  static const base::Cidr kV4 = *base::parse_cidr("127.0.0.0/8");
  static const base::Cidr kV6 = *base::parse_cidr("::1");
  return kV4.contains(*address) || kV6.contains(*address);
}

void refuse_world_writable(const std::string& path, const std::string& what) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return;  // the reader says why it cannot open it
  if ((st.st_mode & S_IWOTH) != 0) {
    throw ConfigError(what + ": " + path + " is writable by every user of this host (mode " +
                      octal_mode(st.st_mode) + "): whoever can write it controls docguard; " +
                      "remove that permission (chmod o-w " + path + ")");
  }
}

void settle_admin_access(ProxyConfig& config) {
  if (!config.admin_token.empty() && !config.admin_token_file.empty()) {
    throw ConfigError("admin.token and admin.token_file: give one of them");
  }
  if (!config.admin_token_file.empty()) {
    config.admin_token = read_token_file(config.admin_token_file, "admin.token_file");
  } else if (config.admin_token.empty()) {
    const char* file = std::getenv(kAdminTokenFileEnv);
    const char* value = std::getenv(kAdminTokenEnv);
    if (file != nullptr && *file != '\0') {
      config.admin_token = read_token_file(file, kAdminTokenFileEnv);
    } else if (value != nullptr && *value != '\0') {
      config.admin_token = value;
    }
  }
  if (!config.admin_token.empty() || is_loopback_host(config.admin.host) ||
      config.admin_allow_without_token) {
    return;
  }
  throw ConfigError(
      "admin.listen (--admin) " + config.admin.to_string() +
      " is reachable from other hosts and no admin token is set: anyone who reaches it could "
      "read /status, /report and /metrics. Set admin.token_file (or admin.token, or "
      "the environment's " +
      kAdminTokenFileEnv + " or " + kAdminTokenEnv +
      "), listen on loopback (127.0.0.1:9216), or accept an open admin API with "
      "admin.allow_without_token: true");
}

bool admin_open_without_token(const ProxyConfig& config) {
  return config.admin_token.empty() && !is_loopback_host(config.admin.host);
}

}  // namespace docguard::settings
