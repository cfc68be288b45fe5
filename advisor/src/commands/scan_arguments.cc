#include "docguard/advisor/scan_arguments.h"

#include <charconv>
#include <fstream>
#include <sstream>
#include <utility>

namespace docguard::advisor {
namespace {

// A command line or credentials file docguard cannot use: the user fixes what they wrote.
base::Error usage_error(std::string message) {
  return base::Error{base::ErrorKind::kConfiguration, base::ErrorSource::kConfiguration,
                     std::move(message)};
}

std::string_view trim(std::string_view text) {
  while (!text.empty() && (text.front() == ' ' || text.front() == '\t')) text.remove_prefix(1);
  while (!text.empty() && (text.back() == ' ' || text.back() == '\t' || text.back() == '\r')) {
    text.remove_suffix(1);
  }
  return text;
}

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// A connection string's user and password are percent-encoded.
bool percent_decode(std::string_view text, std::string* out) {
  out->clear();
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] != '%') {
      out->push_back(text[i]);
      continue;
    }
    if (i + 2 >= text.size()) return false;
    const int high = hex_value(text[i + 1]);
    const int low = hex_value(text[i + 2]);
    if (high < 0 || low < 0) return false;
    out->push_back(static_cast<char>(high * 16 + low));
    i += 2;
  }
  return true;
}

base::Expected<void> credentials_from_uri(std::string_view uri, Credentials* out) {
  const auto start = uri.find("://") + 3;
  const auto end = uri.find_first_of("/?", start);
  const std::string_view authority =
      uri.substr(start, end == std::string_view::npos ? end : end - start);
  const auto at = authority.rfind('@');
  if (at == std::string_view::npos) {
    return usage_error("the connection string in the credentials file has no user");
  }
  const std::string_view userinfo = authority.substr(0, at);
  const auto colon = userinfo.find(':');
  std::string user, password;
  if (!percent_decode(userinfo.substr(0, colon), &user) ||
      (colon != std::string_view::npos && !percent_decode(userinfo.substr(colon + 1), &password))) {
    return usage_error("the connection string in the credentials file has a bad %-escape");
  }
  out->username = user;
  if (colon != std::string_view::npos) out->password = password;
  return {};
}

}  // namespace

bool is_cluster_uri(std::string_view source) {
  return source.rfind("mongodb://", 0) == 0 || source.rfind("mongodb+srv://", 0) == 0;
}

base::Expected<void> check_scan_arguments(const ScanArguments& args) {
  if (args.source.empty()) return usage_error("a dump path or a mongodb:// URI is needed");
  const bool cluster_only = args.sample != 0 || !args.db.empty() || !args.collection.empty() ||
                            !args.credentials_file.empty();
  if (cluster_only && !is_cluster_uri(args.source)) {
    return usage_error(
        "--sample, --db, --collection and --credentials-file apply to a mongodb:// URI");
  }
  return {};
}

base::Expected<Credentials> parse_credentials(std::string_view text) {
  const auto refused = [](std::string why) {
    return base::Error{base::ErrorKind::kConfiguration, base::ErrorSource::kConfiguration,
                       std::move(why)};
  };
  Credentials found;
  int line_number = 0;
  while (!text.empty()) {
    const auto newline = text.find('\n');
    const std::string_view line = trim(text.substr(0, newline));
    text.remove_prefix(newline == std::string_view::npos ? text.size() : newline + 1);
    ++line_number;
    if (line.empty() || line.front() == '#') continue;
    if (is_cluster_uri(line)) {
      if (found.username || found.password) {
        return refused("the credentials file has both a connection string and user/password lines");
      }
      if (auto read = credentials_from_uri(line, &found); !read)
        return refused(read.error().message);
      continue;
    }
    const auto colon = line.find(':');
    const std::string_view key = trim(line.substr(0, colon));
    if (colon == std::string_view::npos || (key != "user" && key != "password")) {
      return refused("credentials file line " + std::to_string(line_number) +
                     ": expected `user: NAME`, `password: SECRET` or a connection string");
    }
    const std::string value(trim(line.substr(colon + 1)));
    (key == "user" ? found.username : found.password) = value;
  }
  if (!found.username) return refused("the credentials file names no user");
  return found;
}

base::Expected<Credentials> read_credentials_file(const std::string& path) {
  std::ifstream file(path);
  if (!file) {
    return base::Error{base::ErrorKind::kIo, base::ErrorSource::kConfiguration,
                       "cannot read the credentials file " + path, path};
  }
  std::ostringstream text;
  text << file.rdbuf();
  auto parsed = parse_credentials(text.str());
  if (!parsed) {
    base::Error error = parsed.error();
    error.message = path + ": " + error.message;
    error.subject = path;
    return error;
  }
  return parsed;
}

}  // namespace docguard::advisor
