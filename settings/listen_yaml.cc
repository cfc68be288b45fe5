// `listen:`: TCP addresses and Unix domain sockets, and the checks --check-config runs on them.
#include <grp.h>
#include <pwd.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <vector>

#include "section_readers.h"

namespace docguard::settings {
namespace {

constexpr std::string_view kUnixPrefix = "unix:";

bool all_digits(const std::string& s) {
  return !s.empty() && s.find_first_not_of("0123456789") == std::string::npos;
}

uint32_t numeric_id(const std::string& s, const std::string& what) {
  uint32_t id = 0;
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), id);
  if (ec != std::errc() || ptr != s.data() + s.size()) {
    throw ConfigError(what + ": '" + s + "' is out of range");
  }
  return id;
}

// getpwnam_r / getgrnam_r with a buffer that grows until the entry fits.
template <typename Entry, typename Lookup>
bool lookup_name(const std::string& name, Lookup lookup, Entry& entry) {
  std::vector<char> buffer(1024);
  while (true) {
    Entry* found = nullptr;
    const int rc = lookup(name.c_str(), &entry, buffer.data(), buffer.size(), &found);
    if (rc == ERANGE && buffer.size() < (1u << 20)) {
      buffer.resize(buffer.size() * 2);
      continue;
    }
    return rc == 0 && found != nullptr;
  }
}

}  // namespace

void check_unix_socket_path(const std::string& path, const std::string& what) {
  if (path.empty() || path.front() != '/') {
    throw ConfigError(what + ": expected an absolute socket path, got '" + path + "'");
  }
  // Drivers read a host that ends in ".sock" as a socket path (the connection string
  // specification), anything else as a host name.
  if (!path.ends_with(".sock")) {
    throw ConfigError(what + ": the socket path must end in \".sock\" for drivers to accept it, " +
                      "got '" + path + "'");
  }
  if (path.size() >= sizeof(sockaddr_un{}.sun_path)) {
    throw ConfigError(what + ": a socket path has at most " +
                      std::to_string(sizeof(sockaddr_un{}.sun_path) - 1) + " bytes, '" + path +
                      "' has " + std::to_string(path.size()));
  }
}

uint32_t parse_socket_mode(const std::string& text, const std::string& what) {
  uint32_t mode = 0;
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), mode, 8);
  if (text.empty() || ec != std::errc() || ptr != text.data() + text.size() || mode > 0777) {
    throw ConfigError(what + ": expected an octal mode such as \"0660\", got '" + text + "'");
  }
  if ((mode & 0200) == 0) {
    // Connecting needs write permission: docguard's own user would be locked out too.
    throw ConfigError(what + ": mode " + text + " does not let the owner connect (needs 0200)");
  }
  return mode;
}

uint32_t resolve_user(const std::string& name, const std::string& what) {
  if (all_digits(name)) return numeric_id(name, what);
  passwd entry{};
  if (!lookup_name(name, getpwnam_r, entry)) {
    throw ConfigError(what + ": no user '" + name + "' on this host");
  }
  return entry.pw_uid;
}

uint32_t resolve_group(const std::string& name, const std::string& what) {
  if (all_digits(name)) return numeric_id(name, what);
  group entry{};
  if (!lookup_name(name, getgrnam_r, entry)) {
    throw ConfigError(what + ": no group '" + name + "' on this host");
  }
  return entry.gr_gid;
}

void add_listen_address(ProxyConfig& config, const std::string& text, const std::string& what) {
  if (text.starts_with(kUnixPrefix)) {
    UnixSocketSettings unix_socket;
    unix_socket.path = text.substr(kUnixPrefix.size());
    check_unix_socket_path(unix_socket.path, what);
    config.listen_unix.push_back(std::move(unix_socket));
  } else {
    config.listen.push_back(parse_host_port(text, what));
  }
}

void apply_listen_yaml(const ConfigReader& r, const YAML::Node& node, ProxyConfig& config) {
  config.listen.clear();
  config.listen_unix.clear();
  // Errors from the shared parsers carry the key's position like every other.
  const auto add = [&](const YAML::Node& n, const std::string& key) {
    try {
      add_listen_address(config, r.scalar(n, key), key);
    } catch (const ConfigError& e) {
      r.fail(n, key, e.what());
    }
  };
  const auto add_unix_mapping = [&](const YAML::Node& n, const std::string& key) {
    r.check_keys(n, {"unix", "mode", "owner", "group"}, key);
    if (!n["unix"]) r.fail(n, key, "expected 'unix: PATH' in a listen mapping");
    UnixSocketSettings unix_socket;
    const auto checked = [&](const YAML::Node& v, const std::string& sub, auto parse) {
      try {
        return parse(r.scalar(v, key + "." + sub), key + "." + sub);
      } catch (const ConfigError& e) {
        r.fail(v, key + "." + sub, e.what());
      }
    };
    unix_socket.path = r.scalar(n["unix"], key + ".unix");
    checked(n["unix"], "unix", [](const std::string& path, const std::string& what) {
      check_unix_socket_path(path, what);
      return 0;
    });
    if (auto v = n["mode"]) unix_socket.mode = checked(v, "mode", parse_socket_mode);
    if (auto v = n["owner"]) unix_socket.uid = checked(v, "owner", resolve_user);
    if (auto v = n["group"]) unix_socket.gid = checked(v, "group", resolve_group);
    config.listen_unix.push_back(std::move(unix_socket));
  };
  if (node.IsSequence()) {
    if (node.size() == 0) r.fail(node, "listen", "expected at least one address");
    for (size_t i = 0; i < node.size(); ++i) {
      const std::string key = "listen[" + std::to_string(i) + "]";
      if (node[i].IsMap()) {
        add_unix_mapping(node[i], key);
      } else {
        add(node[i], key);
      }
    }
  } else if (node.IsMap()) {
    add_unix_mapping(node, "listen");
  } else {
    add(node, "listen");
  }
  for (size_t i = 0; i < config.listen_unix.size(); ++i) {
    for (size_t j = 0; j < i; ++j) {
      if (config.listen_unix[i].path == config.listen_unix[j].path) {
        r.fail(node, "listen", "socket " + config.listen_unix[i].path + " is listed twice");
      }
    }
  }
}

}  // namespace docguard::settings
