#include "docguard/base/ip_address.h"

#include <arpa/inet.h>

#include <algorithm>
#include <charconv>
#include <string>
#include <utility>

namespace docguard::base {

std::optional<IpAddress> parse_ip_address(std::string_view text) {
  if (text.size() >= 2 && text.front() == '[' && text.back() == ']') {
    text = text.substr(1, text.size() - 2);
  }
  // A link-local address may carry its interface ("fe80::1%eth0"): the zone is not the address.
  if (const size_t zone = text.find('%'); zone != std::string_view::npos) {
    text = text.substr(0, zone);
  }
  if (text.empty() || text.size() > 45) return std::nullopt;
  const std::string z(text);  // inet_pton wants a terminated string
  IpAddress out;
  if (text.find(':') == std::string_view::npos) {
    in_addr v4{};
    if (inet_pton(AF_INET, z.c_str(), &v4) != 1) return std::nullopt;
    out.bytes[10] = 0xff;
    out.bytes[11] = 0xff;
    const auto* b = reinterpret_cast<const uint8_t*>(&v4.s_addr);
    std::copy(b, b + 4, out.bytes.begin() + 12);
    return out;
  }
  in6_addr v6{};
  if (inet_pton(AF_INET6, z.c_str(), &v6) != 1) return std::nullopt;
  const auto* b = reinterpret_cast<const uint8_t*>(&v6);
  std::copy(b, b + 16, out.bytes.begin());
  return out;
}

std::optional<IpAddress> parse_peer_address(std::string_view peer) {
  // The port is always there and always last, so the last colon ends the address, bracketed or
  // not ("::1:5000" is "::1" port 5000).
  const size_t colon = peer.rfind(':');
  if (colon == std::string_view::npos || colon == 0) return std::nullopt;
  return parse_ip_address(peer.substr(0, colon));
}

bool Cidr::contains(const IpAddress& address) const {
  const int whole = prefix / 8;
  for (int i = 0; i < whole; ++i) {
    if (address.bytes[i] != network.bytes[i]) return false;
  }
  const int rest = prefix % 8;
  if (rest == 0) return true;
  const auto mask = static_cast<uint8_t>(0xff << (8 - rest));
  return (address.bytes[whole] & mask) == (network.bytes[whole] & mask);
}

Expected<Cidr> parse_cidr(std::string_view text) {
  const auto refused = [](std::string why) {
    return Error{ErrorKind::kBadInput, ErrorSource::kConfiguration, std::move(why)};
  };
  const size_t slash = text.find('/');
  const std::string_view address_text = text.substr(0, slash);
  const auto address = parse_ip_address(address_text);
  if (!address) {
    return refused("'" + std::string(address_text) + "' is not an IPv4 or IPv6 address");
  }
  const bool v4 = address_text.find(':') == std::string_view::npos;
  const int family_bits = v4 ? 32 : 128;
  Cidr out{*address, 128};
  if (slash != std::string_view::npos) {
    const std::string_view digits = text.substr(slash + 1);
    int bits = -1;
    const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), bits);
    if (digits.empty() || ec != std::errc() || end != digits.data() + digits.size() || bits < 0 ||
        bits > family_bits) {
      return refused("prefix length must be 0 to " + std::to_string(family_bits) + ", got '" +
                     std::string(digits) + "'");
    }
    out.prefix = bits + (128 - family_bits);
  }
  for (int bit = out.prefix; bit < 128; ++bit) {
    if ((out.network.bytes[bit / 8] >> (7 - bit % 8)) & 1) {
      return refused("'" + std::string(text) + "' has address bits set past its prefix length");
    }
  }
  return out;
}

}  // namespace docguard::base
